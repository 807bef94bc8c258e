// svc models list/test/pin through /api/providers against fake providers; a pin survives a restart
// and is what the chain sends next.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { providerRoutes } from '../../../daemon/http/provider-routes';
import { auth, testApp } from '../../helpers/app';
import type { ModelTestResponse } from '../../../protocol/providers';
import { openAiErrors, startOpenAiServer, textReply } from '../../fakes/openai-server';
import { buildChain, collect, drain, MemorySecrets, providerSettings, tempStore } from './provider-fixtures';

async function env(t: { after: (fn: () => unknown) => void }) {
  const oai = await startOpenAiServer();
  const store = tempStore();
  const vault = new MemorySecrets();
  vault.set('providers', 'oai:main', 'sk-main-123456789');
  const settings = providerSettings([{ id: 'oai', kind: 'openai', base_url: oai.baseURL, model: 'gpt-fake-mini' }]);
  const build = () => buildChain({ settings, store: store.store, vault });
  const h = build();
  const { app } = await testApp({ routes: [providerRoutes(h)] });
  t.after(async () => {
    await app.close();
    await oai.close();
    store.cleanup();
  });
  return { app, h, oai, store, build };
}

void test('lists the provider models with the pinned and effective model', async (t) => {
  const { app } = await env(t);
  const res = await app.inject({ method: 'GET', url: '/api/providers/oai/models', headers: auth });
  assert.deepEqual(res.json(), { provider: 'oai', models: ['gpt-fake', 'gpt-fake-mini'], pinned: null, effective: 'gpt-fake-mini' });
  assert.equal((await app.inject({ method: 'GET', url: '/api/providers/nope/models', headers: auth })).statusCode, 404);
});

void test('a provider refusal is a 502 PROVIDER_FAILED on list and a failed report on test', async (t) => {
  const { app, oai } = await env(t);
  oai.reply(() => openAiErrors.auth());
  const res = await app.inject({ method: 'GET', url: '/api/providers/oai/models', headers: auth });
  assert.equal(res.statusCode, 502);
  const failed = res.json<{ error: { code: string; details: { error_class: string } } }>().error;
  assert.equal(failed.code, 'PROVIDER_FAILED');
  assert.equal(failed.details.error_class, 'auth');
  const tested = await app.inject({ method: 'POST', url: '/api/providers/oai/models/test', headers: auth, payload: {} });
  assert.equal(tested.statusCode, 200);
  assert.equal(tested.json<ModelTestResponse>().ok, false);
  assert.equal(tested.json<ModelTestResponse>().error_class, 'auth');
});

void test('test sends a tiny prompt and reports latency and the answer', async (t) => {
  const { app, oai } = await env(t);
  oai.reply(() => textReply('ok'));
  const res = await app.inject({ method: 'POST', url: '/api/providers/oai/models/test', headers: auth, payload: { model: 'gpt-fake' } });
  const body = res.json<ModelTestResponse>();
  assert.equal(body.ok, true);
  assert.equal(body.model, 'gpt-fake');
  assert.equal(body.text, 'ok');
  assert.equal(body.key, 'main');
  assert.ok(body.first_token_ms !== null && body.first_token_ms >= 0 && body.latency_ms >= body.first_token_ms);
  assert.equal(oai.requests.at(-1)!.body?.max_tokens, 8);
});

void test('pin overrides the settings model for the next turn, survives a restart, and unpins', async (t) => {
  const { app, oai, store, build } = await env(t);
  const pinned = await app.inject({ method: 'PUT', url: '/api/providers/oai/model-pin', headers: auth, payload: { model: 'gpt-fake' } });
  assert.deepEqual(pinned.json(), { provider: 'oai', pinned: 'gpt-fake', effective: 'gpt-fake' });
  store.reopen();
  const restarted = build();
  await collect(restarted.chain.chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.equal(oai.requests.at(-1)!.body?.model, 'gpt-fake');
  const { app: app2 } = await testApp({ routes: [providerRoutes(restarted)] });
  t.after(() => app2.close());
  const unpinned = await app2.inject({ method: 'DELETE', url: '/api/providers/oai/model-pin', headers: auth });
  assert.deepEqual(unpinned.json(), { provider: 'oai', pinned: null, effective: 'gpt-fake-mini' });
});

void test('svc models list: a provider whose every key is disabled is unavailable; one usable key keeps it ok; all cooling is cooling', async (t) => {
  const oai = await startOpenAiServer();
  const store = tempStore();
  t.after(async () => {
    await oai.close();
    store.cleanup();
  });
  const vault = new MemorySecrets();
  vault.set('providers', 'oai:a', 'sk-a-1111111111');
  vault.set('providers', 'oai:b', 'sk-b-2222222222');
  const clock = { now: 1_700_000_000_000 };
  const h = buildChain({ settings: providerSettings([{ id: 'oai', kind: 'openai', base_url: oai.baseURL }]), store: store.store, vault, now: () => clock.now });
  const state = (): string => h.models.providers()[0]!.state;
  assert.equal(state(), 'ok');
  oai.reply((req) => (req.apiKey === 'sk-a-1111111111' ? openAiErrors.auth() : textReply('fine')));
  await collect(h.chain.chat({ messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(h.keys.info('oai', 'a').state, 'disabled');
  assert.equal(state(), 'ok', 'key b still answers');
  oai.reply(() => openAiErrors.auth());
  await drain(h.chain.chat({ messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(h.keys.info('oai', 'b').state, 'disabled');
  assert.equal(state(), 'unavailable', 'every key disabled');
  await h.keys.resetCooldowns('oai');
  oai.reply(() => openAiErrors.rateLimit());
  await drain(h.chain.chat({ messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(state(), 'cooling', 'every key rate-limited: it comes back by itself');
});
