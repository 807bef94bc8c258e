// svc key add/list/remove/reset-cooldowns/recover, through /api/providers with app.inject(), against
// fake providers on loopback, a real SQLite store and an in-memory vault.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { providerRoutes } from '../../../daemon/http/provider-routes';
import { fingerprint } from '../../../daemon/providers/key-ring';
import { auth, testApp } from '../../helpers/app';
import { openAiErrors, startOpenAiServer, textReply, type FakeServer } from '../../fakes/openai-server';
import { anthropicErrors, startAnthropicServer } from '../../fakes/anthropic-server';
import { buildChain, collect, providerSettings, tempStore, type Harness } from './provider-fixtures';
import type { FastifyInstance } from 'fastify';
import type { AddKeyResponse, KeysResponse, ProvidersResponse, RecoverResponse } from '../../../protocol/providers';

const GOOD = 'sk-good-aaaaaaaaaaaa';
const BAD = 'sk-bad-bbbbbbbbbbbb';

interface Env {
  app: FastifyInstance;
  h: Harness;
  oai: FakeServer;
  ant: FakeServer;
  clock: { now: number };
}

async function env(t: { after: (fn: () => unknown) => void }): Promise<Env> {
  const oai = await startOpenAiServer();
  const ant = await startAnthropicServer();
  const store = tempStore();
  const clock = { now: 1_700_000_000_000 };
  oai.reply((req) => (req.apiKey === GOOD ? textReply('ok') : openAiErrors.auth()));
  const h = buildChain({
    settings: providerSettings([
      { id: 'oai', kind: 'openai', base_url: oai.baseURL },
      { id: 'ant', kind: 'anthropic', base_url: ant.baseURL, model: 'claude-fake-haiku' },
      { id: 'local', kind: 'local' },
    ]),
    store: store.store,
    now: () => clock.now,
  });
  const { app } = await testApp({ routes: [providerRoutes(h)] });
  t.after(async () => {
    await app.close();
    await oai.close();
    await ant.close();
    store.cleanup();
  });
  return { app, h, oai, ant, clock };
}

const post = (app: FastifyInstance, url: string, payload: unknown) => app.inject({ method: 'POST', url, headers: auth, payload: payload as Record<string, unknown> });

void test('add probes the key with a model list and stores it only when the provider accepts it', async (t) => {
  const { app, h, oai } = await env(t);
  const bad = await post(app, '/api/providers/oai/keys', { label: 'main', secret: BAD });
  assert.equal(bad.statusCode, 422);
  const refused = bad.json<{ error: { code: string; details: { error_class: string } } }>().error;
  assert.equal(refused.code, 'KEY_PROBE_FAILED');
  assert.equal(refused.details.error_class, 'auth');
  assert.ok(!bad.body.includes(BAD), 'the refused key is not echoed');
  assert.equal(h.vault.keys('providers').length, 0);
  const good = await post(app, '/api/providers/oai/keys', { label: 'main', secret: GOOD });
  assert.equal(good.statusCode, 201);
  const added = good.json<AddKeyResponse>();
  assert.deepEqual(added.key, { provider: 'oai', label: 'main', fingerprint: fingerprint(GOOD), state: 'ok', cooldown: null, configured: true });
  assert.equal(added.probe.models, 2);
  assert.deepEqual(oai.requests.map((r) => `${r.method} ${r.path}`), ['GET /v1/models', 'GET /v1/models']);
  assert.equal(h.vault.get('providers', 'oai:main'), GOOD);
  assert.equal((await post(app, '/api/providers/oai/keys', { label: 'main', secret: GOOD })).statusCode, 409);
  assert.equal((await post(app, '/api/providers/oai/keys', { label: 'main', secret: GOOD, replace: true })).statusCode, 201);
});

void test('add refuses unknown providers, keyless kinds and bad labels', async (t) => {
  const { app } = await env(t);
  assert.equal((await post(app, '/api/providers/nope/keys', { label: 'a', secret: GOOD })).statusCode, 404);
  assert.equal((await post(app, '/api/providers/local/keys', { label: 'a', secret: GOOD })).statusCode, 400);
  assert.equal((await post(app, '/api/providers/oai/keys', { label: 'has space', secret: GOOD })).statusCode, 400);
});

void test('list shows label, provider, fingerprint and cooldown state, never the secret', async (t) => {
  const { app, h, clock } = await env(t);
  h.vault.set('providers', 'oai:main', GOOD);
  h.vault.set('providers', 'oai:spare', BAD);
  h.vault.set('providers', 'gone:old', 'sk-old-cccccccccccc');
  h.registry.invalidate();
  await collect(h.chain.chat({ messages: [{ role: 'user', content: 'x' }] })); // main answers
  await h.state.put({ provider: 'oai', label: 'spare', errorClass: 'rate_limit', untilMs: clock.now + 5000, strikes: 1, message: 'slow down' }, clock.now);
  const res = await app.inject({ method: 'GET', url: '/api/providers/keys', headers: auth });
  assert.equal(res.statusCode, 200);
  for (const secret of [GOOD, BAD, 'sk-old-cccccccccccc']) assert.ok(!res.body.includes(secret));
  const keys = res.json<KeysResponse>().keys;
  assert.deepEqual(keys.map((k) => `${k.provider}/${k.label}:${k.state}:${k.configured}`), ['gone/old:ok:false', 'oai/main:ok:true', 'oai/spare:cooling:true']);
  const providers = (await app.inject({ method: 'GET', url: '/api/providers', headers: auth })).json<ProvidersResponse>().providers;
  assert.deepEqual(providers.map((p) => `${p.id}:${p.state}:${p.keys.length}`), ['oai:ok:2', 'ant:unavailable:0', 'local:unavailable:0']);
});

void test('remove deletes the key and its cooldown; a missing key is 404', async (t) => {
  const { app, h, clock } = await env(t);
  h.vault.set('providers', 'oai:main', GOOD);
  await h.state.put({ provider: 'oai', label: 'main', errorClass: 'auth', untilMs: clock.now + 5000, strikes: 1, message: 'x' }, clock.now);
  const res = await app.inject({ method: 'DELETE', url: '/api/providers/oai/keys/main', headers: auth });
  assert.deepEqual(res.json(), { provider: 'oai', label: 'main', removed: true });
  assert.equal(h.vault.get('providers', 'oai:main'), undefined);
  assert.equal(h.state.all().length, 0);
  assert.equal((await app.inject({ method: 'DELETE', url: '/api/providers/oai/keys/main', headers: auth })).statusCode, 404);
});

void test('reset-cooldowns clears one provider or all', async (t) => {
  const { app, h, clock } = await env(t);
  for (const [provider, label] of [['oai', 'a'], ['oai', null], ['ant', 'b']] as const) {
    await h.state.put({ provider, label, errorClass: 'overloaded', untilMs: clock.now + 5000, strikes: 1, message: 'x' }, clock.now);
  }
  assert.deepEqual((await post(app, '/api/providers/cooldowns/reset', { provider: 'oai' })).json(), { cleared: 2 });
  assert.deepEqual((await post(app, '/api/providers/cooldowns/reset', {})).json(), { cleared: 1 });
});

void test('recover re-probes keys disabled for auth or billing and re-enables those that work again', async (t) => {
  const { app, h, ant, clock } = await env(t);
  h.vault.set('providers', 'ant:fixed', 'sk-ant-fixed-111111');
  h.vault.set('providers', 'ant:broke', 'sk-ant-broke-222222');
  ant.reply((req) => (req.apiKey === 'sk-ant-broke-222222' ? anthropicErrors.billing() : { kind: 'text', chunks: ['ok'] }));
  for (const label of ['fixed', 'broke']) {
    await h.state.put({ provider: 'ant', label, errorClass: label === 'fixed' ? 'auth' : 'billing', untilMs: clock.now + 86_400_000, strikes: 1, message: 'x' }, clock.now);
  }
  await h.state.put({ provider: 'ant', label: null, errorClass: 'overloaded', untilMs: clock.now + 1000, strikes: 1, message: 'x' }, clock.now);
  const res = await post(app, '/api/providers/keys/recover', {});
  assert.equal(res.statusCode, 200);
  const body = res.json<RecoverResponse>();
  assert.equal(body.vault, 'ok');
  assert.deepEqual(body.results.map((r) => `${r.label}:${r.result}:${r.error_class}`).sort(), ['broke:still_failing:billing', 'fixed:recovered:null']);
  assert.equal(h.keys.info('ant', 'fixed').state, 'ok');
  assert.equal(h.keys.info('ant', 'broke').state, 'disabled');
  assert.equal(h.state.cooldown({ provider: 'ant', label: null })?.errorClass, 'overloaded', 'recover touches only disabled keys');
});

void test('the optional bodies may be left out entirely', async (t) => {
  const { app } = await env(t);
  const reset = await app.inject({ method: 'POST', url: '/api/providers/cooldowns/reset', headers: auth });
  assert.equal(reset.statusCode, 200, reset.body);
  const recover = await app.inject({ method: 'POST', url: '/api/providers/keys/recover', headers: auth });
  assert.equal(recover.statusCode, 200, recover.body);
});
