// The OpenAI adapter through the real `openai` client against a fake server speaking the real SSE
// wire format on loopback: text, tool calls assembled from argument deltas, message and tool mapping,
// every error class, and stalls that must end in a timeout instead of a hang.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { OpenAiProvider } from '../../../daemon/providers/openai-provider';
import { ProviderError, type ChatEvent } from '../../../daemon/providers/provider';
import { openAiErrors, startOpenAiServer, type FakeReply, type FakeServer } from '../../fakes/openai-server';
import { collect, drain } from './provider-fixtures';

const SECRET = 'sk-test-0123456789abcdef';

function adapter(fake: FakeServer, opts: { firstTokenMs?: number; idleMs?: number; apiKey?: string | null } = {}): OpenAiProvider {
  return new OpenAiProvider({
    id: 'oai',
    baseURL: fake.baseURL,
    apiKey: opts.apiKey === undefined ? SECRET : opts.apiKey,
    keyLabel: 'main',
    model: () => 'gpt-fake-mini',
    timeouts: { firstTokenMs: opts.firstTokenMs ?? 5000, idleMs: opts.idleMs ?? 5000 },
  });
}

async function withFake(t: { after: (fn: () => Promise<void>) => void }): Promise<FakeServer> {
  const fake = await startOpenAiServer();
  t.after(() => fake.close());
  return fake;
}

void test('streams text deltas and closes with done (usage, model, provider)', async (t) => {
  const fake = await withFake(t);
  const events = await collect(adapter(fake).chat({ messages: [{ role: 'user', content: 'hi' }] }));
  assert.deepEqual(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text), ['Hello', ' from', ' fake']);
  assert.deepEqual(events.at(-1), { type: 'done', finish_reason: 'stop', usage: { input_tokens: 12, output_tokens: 3 }, provider: 'oai', model: 'gpt-fake-mini' });
  const req = fake.requests[0]!;
  assert.equal(req.apiKey, SECRET);
  assert.equal(req.body?.stream, true);
  assert.equal(req.body?.model, 'gpt-fake-mini');
});

void test('assembles streamed tool_call argument deltas into whole ToolCall events, in index order', async (t) => {
  const fake = await withFake(t);
  fake.queue({
    kind: 'tool_calls',
    text: ['Checking.'],
    calls: [
      { id: 'call_a', name: 'get_weather', argumentChunks: ['{"ci', 'ty": "Ber', 'lin", "days"', ': 2}'] },
      { id: 'call_b', name: 'lights_off', argumentChunks: [] },
    ],
  });
  const events = await collect(adapter(fake).chat({ messages: [{ role: 'user', content: 'weather?' }] }));
  const calls = events.filter((e): e is Extract<ChatEvent, { type: 'tool_call' }> => e.type === 'tool_call').map((e) => e.call);
  assert.deepEqual(calls, [
    { id: 'call_a', name: 'get_weather', arguments: { city: 'Berlin', days: 2 } },
    { id: 'call_b', name: 'lights_off', arguments: {} },
  ]);
  assert.equal((events.at(-1) as { finish_reason: string }).finish_reason, 'tool_calls');
});

void test('maps messages and TypeBox tool specs to the Chat Completions request', async (t) => {
  const fake = await withFake(t);
  const params = Type.Object({ city: Type.String({ description: 'City name' }) });
  await collect(
    adapter(fake).chat({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'weather in Oslo?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' } }] },
        { role: 'tool', tool_call_id: 'call_1', name: 'get_weather', content: '{"temp": 3}' },
      ],
      tools: [{ name: 'get_weather', description: 'Weather now', parameters: params }],
      maxTokens: 50,
      model: 'gpt-fake',
    }),
  );
  const body = fake.requests[0]!.body!;
  assert.equal(body.model, 'gpt-fake');
  assert.equal(body.max_tokens, 50);
  assert.deepEqual(body.messages, [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'weather in Oslo?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp": 3}' },
  ]);
  assert.deepEqual(body.tools, [
    { type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] } } },
  ]);
});

const cases: [string, () => FakeReply, string, number | undefined][] = [
  ['429 with Retry-After', () => openAiErrors.rateLimit(7), 'rate_limit', 429],
  ['401 invalid key', openAiErrors.auth, 'auth', 401],
  ['429 insufficient_quota', openAiErrors.billing, 'billing', 429],
  ['402 payment required', openAiErrors.paymentRequired, 'billing', 402],
  ['503 overloaded', openAiErrors.overloaded, 'overloaded', 503],
  ['500 server error', () => openAiErrors.server(500), 'unknown', 500],
  ['400 context length', openAiErrors.contextLength, 'context_overflow', 400],
  ['400 bad request', openAiErrors.badRequest, 'bad_request', 400],
];

for (const [name, reply, expected, status] of cases) {
  void test(`classifies ${name} as ${expected}`, async (t) => {
    const fake = await withFake(t);
    fake.queue(reply());
    const { events, error } = await drain(adapter(fake).chat({ messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(events.length, 0);
    assert.ok(error instanceof ProviderError, String(error));
    assert.equal(error.errorClass, expected);
    assert.equal(error.opts.status, status);
    assert.equal(error.provider, 'oai');
    assert.equal(error.opts.keyLabel, 'main');
    if (expected === 'rate_limit') assert.equal(error.opts.retryAfterMs, 7000);
    assert.ok(!error.message.includes('sk-'), `no key material in "${error.message}"`);
  });
}

void test('an error inside the stream after text surfaces as a ProviderError after the text', async (t) => {
  const fake = await withFake(t);
  fake.queue({ kind: 'stream_error', chunks: ['partial'], error: { type: 'server_error', message: 'overloaded mid-stream' } });
  const { events, error } = await drain(adapter(fake).chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.deepEqual(events, [{ type: 'text_delta', text: 'partial' }]);
  assert.ok(error instanceof ProviderError);
  assert.equal(error.errorClass, 'overloaded');
});

void test('a server that sends headers and then nothing times out at the first-token timeout', async (t) => {
  const fake = await withFake(t);
  fake.queue({ kind: 'stall' });
  const { error } = await drain(adapter(fake, { firstTokenMs: 300, idleMs: 5000 }).chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.ok(error instanceof ProviderError);
  assert.equal(error.errorClass, 'timeout');
  assert.match(error.message, /first-token/);
});

void test('a stream that stalls between chunks times out at the idle timeout, after the text it sent', async (t) => {
  const fake = await withFake(t);
  fake.queue({ kind: 'stall', chunks: ['one', 'two'] });
  const { events, error } = await drain(adapter(fake, { idleMs: 150 }).chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.deepEqual(events.map((e) => e.type), ['text_delta', 'text_delta']);
  assert.ok(error instanceof ProviderError);
  assert.equal(error.errorClass, 'timeout');
  assert.match(error.message, /idle/);
});

void test('no answer at all before the first-token timeout (server holds the request) is a timeout', async (t) => {
  const { createServer } = await import('node:http');
  const server = createServer(() => undefined);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  const port = (server.address() as { port: number }).port;
  const p = new OpenAiProvider({ id: 'oai', baseURL: `http://127.0.0.1:${port}/v1`, apiKey: SECRET, keyLabel: null, model: () => 'm', timeouts: { firstTokenMs: 150, idleMs: 5000 } });
  const { error } = await drain(p.chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.ok(error instanceof ProviderError);
  assert.equal(error.errorClass, 'timeout');
  assert.match(error.message, /first-token/);
});

void test('a dropped connection mid-stream and a refused connection are network failures', async (t) => {
  const fake = await withFake(t);
  fake.queue({ kind: 'drop', chunks: ['half'] });
  const dropped = await drain(adapter(fake).chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.ok(dropped.error instanceof ProviderError);
  assert.equal(dropped.error.errorClass, 'network');
  const refused = new OpenAiProvider({ id: 'oai', baseURL: 'http://127.0.0.1:1/v1', apiKey: SECRET, keyLabel: null, model: () => 'm', timeouts: { firstTokenMs: 2000, idleMs: 2000 } });
  const { error } = await drain(refused.chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.ok(error instanceof ProviderError);
  assert.equal(error.errorClass, 'network');
});

void test('a caller abort ends the stream without a ProviderError', async (t) => {
  const fake = await withFake(t);
  fake.queue({ kind: 'stall', chunks: ['a'] });
  const ac = new AbortController();
  const events: ChatEvent[] = [];
  let error: unknown = null;
  try {
    for await (const e of adapter(fake).chat({ messages: [{ role: 'user', content: 'x' }], signal: ac.signal })) {
      events.push(e);
      ac.abort();
    }
  } catch (err) {
    error = err;
  }
  assert.equal(events.length, 1);
  assert.ok(!(error instanceof ProviderError), 'an abort is not a provider failure');
});

void test('lists models; a keyless server gets a placeholder key', async (t) => {
  const fake = await withFake(t);
  assert.deepEqual(await adapter(fake).listModels(), ['gpt-fake', 'gpt-fake-mini']);
  await adapter(fake, { apiKey: null }).listModels();
  assert.equal(fake.requests.at(-1)!.apiKey, 'no-key');
});
