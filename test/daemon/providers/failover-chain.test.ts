// The failover chain built by the production factory, against fake OpenAI and Anthropic servers on
// loopback, a real SQLite store and a controllable clock: order, key rotation, cooldowns per class
// (and across a restart), no duplicated output, metrics, and a prompt ChainExhaustedError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChainExhaustedError, ProviderError, type ChatEvent, type ChatRequest, type Provider } from '../../../daemon/providers/provider';
import { openAiErrors, startOpenAiServer, textReply, type FakeServer } from '../../fakes/openai-server';
import { anthropicErrors, startAnthropicServer } from '../../fakes/anthropic-server';
import { buildChain, collect, drain, MemorySecrets, providerSettings, tempStore, type Harness } from './provider-fixtures';
import type { ProviderEntry } from '../../../daemon/config/settings-schema';
import { sampleValue } from '../../helpers/metric-samples';

const ask = { messages: [{ role: 'user' as const, content: 'hello' }] };
const text = (events: ChatEvent[]): string => events.map((e) => (e.type === 'text_delta' ? e.text : '')).join('');

interface World {
  oai: FakeServer;
  ant: FakeServer;
  clock: { now: number };
  vault: MemorySecrets;
  store: ReturnType<typeof tempStore>;
  chain: (entries?: ProviderEntry[]) => Harness;
}

async function world(t: { after: (fn: () => unknown) => void }): Promise<World> {
  const oai = await startOpenAiServer();
  const ant = await startAnthropicServer();
  const store = tempStore();
  t.after(async () => {
    await oai.close();
    await ant.close();
    store.cleanup();
  });
  const clock = { now: 1_700_000_000_000 };
  const vault = new MemorySecrets();
  vault.set('providers', 'oai:k1', 'sk-one-1111111111');
  vault.set('providers', 'oai:k2', 'sk-two-2222222222');
  vault.set('providers', 'ant:main', 'sk-ant-3333333333');
  const defaults: ProviderEntry[] = [
    { id: 'oai', kind: 'openai', base_url: oai.baseURL, model: 'gpt-fake-mini' },
    { id: 'ant', kind: 'anthropic', base_url: ant.baseURL, model: 'claude-fake-haiku' },
  ];
  return {
    oai,
    ant,
    clock,
    vault,
    store,
    chain: (entries = defaults) => buildChain({ settings: providerSettings(entries, { first_token_timeout_ms: 5000, idle_timeout_ms: 5000 }), store: store.store, vault, now: () => clock.now }),
  };
}

void test('answers from the first provider and key; declares every configured provider to the metrics', async (t) => {
  const w = await world(t);
  const h = w.chain();
  const events = await collect(h.chain.chat(ask));
  assert.equal(text(events), 'Hello from fake');
  assert.equal((events.at(-1) as { provider: string }).provider, 'oai');
  assert.equal(w.oai.requests[0]!.apiKey, 'sk-one-1111111111');
  for (const provider of ['oai', 'ant']) assert.equal(await sampleValue(h.metrics, 'svc_llm_429_total', { provider }), 0, `${provider} declared at zero`);
  assert.equal(w.ant.requests.length, 0);
});

void test('rotates to the next key on a 429, honours Retry-After, counts svc_llm_429_total, and skips the cooling key', async (t) => {
  const w = await world(t);
  w.oai.reply((req) => (req.apiKey === 'sk-one-1111111111' ? openAiErrors.rateLimit(7) : textReply('from k2')));
  const h = w.chain();
  assert.equal(text(await collect(h.chain.chat(ask))), 'from k2');
  assert.equal(await sampleValue(h.metrics, 'svc_llm_429_total', { provider: 'oai' }), 1);
  const c = h.state.cooldown({ provider: 'oai', label: 'k1' })!;
  assert.equal(c.errorClass, 'rate_limit');
  assert.equal(c.untilMs, w.clock.now + 7000);
  await collect(h.chain.chat(ask));
  assert.deepEqual(w.oai.requests.map((r) => r.apiKey), ['sk-one-1111111111', 'sk-two-2222222222', 'sk-two-2222222222'], 'k1 rests while cooling');
  w.clock.now += 7001;
  w.oai.reply(() => textReply('k1 again'));
  assert.equal(text(await collect(h.chain.chat(ask))), 'k1 again');
  assert.equal(h.state.cooldown({ provider: 'oai', label: 'k1' }), undefined, 'a success forgets the strikes');
});

void test('fails over in order on provider-level failures and puts the provider aside', async (t) => {
  const w = await world(t);
  w.oai.reply(() => openAiErrors.overloaded());
  const h = w.chain();
  const events = await collect(h.chain.chat(ask));
  assert.equal((events.at(-1) as { provider: string }).provider, 'ant');
  assert.equal(w.oai.requests.length, 1, 'overloaded is about the provider: the second key is not tried');
  assert.equal(h.state.cooldown({ provider: 'oai', label: null })!.errorClass, 'overloaded');
  await collect(h.chain.chat(ask));
  assert.equal(w.oai.requests.length, 1, 'the cooling provider is skipped');
  assert.equal(w.ant.requests.length, 2);
});

void test('consecutive failures double the cooldown; success resets it', async (t) => {
  const w = await world(t);
  w.oai.reply(() => openAiErrors.server(500));
  const h = w.chain();
  await collect(h.chain.chat(ask));
  assert.equal(h.state.cooldown({ provider: 'oai', label: null })!.untilMs - w.clock.now, 30_000);
  w.clock.now += 30_001;
  await collect(h.chain.chat(ask));
  const second = h.state.cooldown({ provider: 'oai', label: null })!;
  assert.equal(second.strikes, 2);
  assert.equal(second.untilMs - w.clock.now, 60_000);
});

void test('cooldowns persist across a restart: a new chain on the same database skips the key', async (t) => {
  const w = await world(t);
  w.oai.reply((req) => (req.apiKey === 'sk-one-1111111111' ? openAiErrors.auth() : textReply('k2')));
  await collect(w.chain().chain.chat(ask));
  w.store.reopen();
  const restarted = w.chain();
  assert.equal(restarted.state.cooldown({ provider: 'oai', label: 'k1' })!.errorClass, 'auth');
  assert.equal(text(await collect(restarted.chain.chat(ask))), 'k2');
  assert.deepEqual(w.oai.requests.map((r) => r.apiKey), ['sk-one-1111111111', 'sk-two-2222222222', 'sk-two-2222222222']);
  assert.equal(restarted.keys.info('oai', 'k1').state, 'disabled');
});

void test('billing on every key of a provider moves on to the next provider', async (t) => {
  const w = await world(t);
  w.oai.reply(() => openAiErrors.billing());
  const h = w.chain();
  const events = await collect(h.chain.chat(ask));
  assert.equal((events.at(-1) as { provider: string }).provider, 'ant');
  assert.equal(w.oai.requests.length, 2);
  assert.equal(h.keys.info('oai', 'k1').state, 'disabled');
  assert.equal(h.keys.info('oai', 'k2').state, 'disabled');
  assert.equal(await sampleValue(h.metrics, 'svc_llm_429_total', { provider: 'oai' }), 2, 'insufficient_quota still arrives as a 429 answer');
});

void test('a bad request is thrown at once: no failover, no cooldown, no exhaustion', async (t) => {
  const w = await world(t);
  w.oai.reply(() => openAiErrors.badRequest());
  const h = w.chain();
  const { error } = await drain(h.chain.chat(ask));
  assert.ok(error instanceof ProviderError);
  assert.equal(error.errorClass, 'bad_request');
  assert.equal(w.ant.requests.length, 0);
  assert.equal(w.oai.requests.length, 1);
  assert.equal(h.state.all().length, 0);
  assert.equal(await sampleValue(h.metrics, 'svc_llm_failover_chain_exhausted_total'), 0);
});

void test('a context overflow tries the next provider without cooling the first', async (t) => {
  const w = await world(t);
  w.oai.reply(() => openAiErrors.contextLength());
  const h = w.chain();
  const events = await collect(h.chain.chat(ask));
  assert.equal((events.at(-1) as { provider: string }).provider, 'ant');
  assert.equal(w.oai.requests.length, 1);
  assert.equal(h.state.all().length, 0);
});

void test('a failure after output is surfaced, never replaced by a second answer', async (t) => {
  const w = await world(t);
  w.oai.reply(() => ({ kind: 'stream_error', chunks: ['Half an ans'], error: { type: 'server_error', message: 'overloaded' } }));
  const h = w.chain();
  const { events, error } = await drain(h.chain.chat(ask));
  assert.equal(text(events), 'Half an ans');
  assert.ok(error instanceof ProviderError);
  assert.equal(w.ant.requests.length, 0, 'no second provider after the first event');
  assert.equal(h.state.cooldown({ provider: 'oai', label: null })!.errorClass, 'overloaded', 'still recorded');
});

void test('a stalled provider times out and the next one answers', async (t) => {
  const w = await world(t);
  w.oai.reply(() => ({ kind: 'stall' }));
  const h = w.chain([
    { id: 'oai', kind: 'openai', base_url: w.oai.baseURL, timeout_ms: 200 },
    { id: 'ant', kind: 'anthropic', base_url: w.ant.baseURL },
  ]);
  const events = await collect(h.chain.chat(ask));
  assert.equal((events.at(-1) as { provider: string }).provider, 'ant');
  assert.equal(h.state.cooldown({ provider: 'oai', label: null })!.errorClass, 'timeout');
});

void test('exhaustion: ChainExhaustedError with every attempt, counted once; then immediate while cooling', async (t) => {
  const w = await world(t);
  w.oai.reply(() => openAiErrors.rateLimit());
  w.ant.reply(() => anthropicErrors.overloaded());
  const h = w.chain();
  const { error } = await drain(h.chain.chat(ask));
  assert.ok(error instanceof ChainExhaustedError);
  assert.deepEqual(error.attempts.map((a) => `${a.provider}:${a.errorClass}`), ['oai:rate_limit', 'oai:rate_limit', 'ant:overloaded']);
  assert.equal(await sampleValue(h.metrics, 'svc_llm_failover_chain_exhausted_total'), 1);
  const before = w.oai.requests.length + w.ant.requests.length;
  const again = await drain(h.chain.chat(ask));
  assert.ok(again.error instanceof ChainExhaustedError);
  assert.deepEqual(again.error.attempts.map((a) => `${a.provider}:${a.errorClass}`), ['oai:cooldown', 'ant:cooldown']);
  assert.equal(w.oai.requests.length + w.ant.requests.length, before, 'nothing was sent');
  assert.equal(await sampleValue(h.metrics, 'svc_llm_failover_chain_exhausted_total'), 2);
});

void test('members without keys or without a local provider are reported, not crashed on', async (t) => {
  const w = await world(t);
  const h = w.chain([
    { id: 'nokeys', kind: 'openai', base_url: w.oai.baseURL },
    { id: 'local', kind: 'local' },
  ]);
  const { error } = await drain(h.chain.chat(ask));
  assert.ok(error instanceof ChainExhaustedError);
  assert.deepEqual(error.attempts.map((a) => a.errorClass), ['auth', 'unknown']);
  assert.match(error.attempts[0]!.message, /svc key add nokeys/);
});

void test('a local provider and a keyless server take part without keys', async (t) => {
  const w = await world(t);
  const local: Provider = {
    id: 'local',
    kind: 'local',
    async *chat() {
      yield* [];
      throw new ProviderError('unknown', 'no intent matched', 'local');
    },
    listModels: () => Promise.resolve(['intents']),
  };
  const h = buildChain({
    settings: providerSettings([{ id: 'local', kind: 'local' }, { id: 'ollama', kind: 'openai', base_url: w.oai.baseURL, keyless: true }]),
    store: w.store.store,
    vault: w.vault,
    local,
  });
  const events = await collect(h.chain.chat(ask));
  assert.equal((events.at(-1) as { provider: string }).provider, 'ollama');
  assert.equal(w.oai.requests[0]!.apiKey, 'no-key');
});

void test('the chain declares its two metrics under the owner providers and renders what it counts', async (t) => {
  const w = await world(t);
  const h = buildChain({ settings: providerSettings([{ id: 'oai', kind: 'openai', base_url: w.oai.baseURL }]), store: w.store.store, vault: w.vault, now: () => w.clock.now });
  const owners = h.metrics.registry.owners();
  assert.deepEqual([owners.get('svc_llm_429_total'), owners.get('svc_llm_failover_chain_exhausted_total')], ['providers', 'providers']);
  assert.match(await h.metrics.render(), /^svc_llm_429_total\{provider="oai"\} 0$/m);
  w.oai.reply(() => openAiErrors.rateLimit(1));
  const { error } = await drain(h.chain.chat(ask));
  assert.ok(error instanceof ChainExhaustedError);
  const text_ = await h.metrics.render();
  assert.match(text_, /^svc_llm_429_total\{provider="oai"\} 2$/m);
  assert.match(text_, /^svc_llm_failover_chain_exhausted_total 1$/m);
});

void test('every key disabled: the next provider is told why (until when, svc key recover) and answering() names it', async (t) => {
  const w = await world(t);
  const seen: ChatRequest[] = [];
  const local: Provider = {
    id: 'local',
    kind: 'local',
    async *chat(request) {
      seen.push(request);
      yield* await Promise.resolve([{ type: 'text_delta' as const, text: 'local here' }, { type: 'done' as const, finish_reason: 'stop' as const, provider: 'local', model: 'sentences-v1' }]);
    },
    listModels: () => Promise.resolve(['sentences-v1']),
  };
  const h = buildChain({ settings: providerSettings([{ id: 'oai', kind: 'openai', base_url: w.oai.baseURL }, { id: 'local', kind: 'local' }]), store: w.store.store, vault: w.vault, local, now: () => w.clock.now });
  assert.deepEqual(h.chain.answering?.(), { id: 'oai', kind: 'openai' }, 'before any answer: the first usable member');
  w.oai.reply(() => openAiErrors.auth());
  assert.equal(text(await collect(h.chain.chat(ask))), 'local here');
  assert.deepEqual(seen[0]!.passed?.map((p) => `${p.provider}:${p.errorClass}`), ['oai:auth', 'oai:auth'], 'both keys failed in this walk');
  assert.deepEqual(h.chain.answering?.(), { id: 'local', kind: 'local' });

  await collect(h.chain.chat(ask));
  const passed = seen[1]!.passed ?? [];
  assert.equal(passed.length, 1);
  assert.equal(passed[0]!.errorClass, 'auth');
  assert.match(passed[0]!.message, /^key k1 disabled after auth until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, key k2 disabled after auth until .*svc key recover/);
  assert.equal(w.oai.requests.length, 2, 'the disabled keys were not tried again');
  assert.equal(seen.length, 2);

  await h.keys.resetCooldowns('oai');
  assert.deepEqual(h.chain.answering?.(), { id: 'local', kind: 'local' }, 'the member that answered last while it is usable');
  w.oai.reply(() => textReply('back'));
  assert.equal(text(await collect(h.chain.chat(ask))), 'back');
  assert.deepEqual(h.chain.answering?.(), { id: 'oai', kind: 'openai' });
});

void test('answering() is null when no member can answer', async (t) => {
  const w = await world(t);
  const h = w.chain([{ id: 'nokey', kind: 'openai', base_url: w.oai.baseURL }]);
  assert.equal(h.chain.answering?.(), null);
});
