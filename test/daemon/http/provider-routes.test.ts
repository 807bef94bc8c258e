// /api/providers answers pass the secret scrubber, errors included: cooldown and probe messages quote
// what a provider said, which may echo a key in any encoding (issue 8 §4). app.inject() on buildApp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SecretScrubber } from '../../../daemon/agent/tools/secret-scrubber';
import { AppError } from '../../../daemon/kernel/errors';
import { providerRoutes } from '../../../daemon/http/provider-routes';
import type { KeyAdmin } from '../../../daemon/providers/key-admin';
import type { ModelAdmin } from '../../../daemon/providers/model-admin';
import type { ProviderInfo } from '../../../protocol/providers';
import { auth, testApp } from '../../helpers/app';

const KEY = 'sk-route/+="\\Key-0123456789';
const ECHO = `401 ${JSON.stringify({ key: KEY })} ${encodeURIComponent(KEY)} ${Buffer.from(KEY).toString('base64')} ${KEY.slice(0, 8)}****${KEY.slice(-4)}`;

const provider: ProviderInfo = {
  id: 'oai',
  kind: 'openai',
  position: 0,
  base_url: null,
  model: 'gpt-fake',
  pinned_model: null,
  keyless: false,
  state: 'cooling',
  cooldown: { error_class: 'auth', until: new Date(0).toISOString(), active: true, strikes: 1, message: ECHO },
  keys: [],
};
const models = { providers: () => [provider] } as unknown as ModelAdmin;
const keys = {
  add: () => Promise.reject(new AppError('KEY_PROBE_FAILED', `the key was not saved: oai answered auth: ${ECHO}`, { provider: 'oai', label: 'main', error_class: 'auth', status: 401 }, 422)),
} as unknown as KeyAdmin;

function assertClean(body: string): void {
  for (const form of [KEY, encodeURIComponent(KEY), JSON.stringify(KEY).slice(1, -1), Buffer.from(KEY).toString('base64'), KEY.slice(0, 8), KEY.slice(-8)]) assert.ok(!body.includes(form), `${form} in ${body}`);
}

void test('GET /api/providers: cooldown messages come out scrubbed', async (t) => {
  const { app } = await testApp({ routes: [providerRoutes({ keys, models, scrubber: new SecretScrubber(() => [KEY]) })] });
  t.after(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/api/providers', headers: auth });
  assert.equal(res.statusCode, 200);
  assertClean(res.body);
  assert.match(res.json<{ providers: ProviderInfo[] }>().providers[0]!.cooldown!.message, /^401 .*\[REDACTED\]/);
});

void test('an error envelope from these routes is scrubbed too', async (t) => {
  const { app } = await testApp({ routes: [providerRoutes({ keys, models, scrubber: new SecretScrubber(() => [KEY]) })] });
  t.after(() => app.close());
  const res = await app.inject({ method: 'POST', url: '/api/providers/oai/keys', headers: auth, payload: { label: 'main', secret: 'x', probe: true } });
  assert.equal(res.statusCode, 422);
  assertClean(res.body);
  const body = res.json<{ error: { code: string; message: string; details: { error_class: string } } }>();
  assert.equal(body.error.code, 'KEY_PROBE_FAILED');
  assert.equal(body.error.details.error_class, 'auth');
  assert.match(body.error.message, /\[REDACTED\]/);
});
