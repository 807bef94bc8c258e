// The Anthropic adapter through the real @anthropic-ai/sdk against a fake Messages API speaking the
// real event stream on loopback: text, tool_use blocks from input_json_delta pieces, system and
// tool_result mapping, every error class (429 Retry-After, 401, 402, 529, 5xx, 400 prompt too long),
// error events inside the stream, and stalls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { AnthropicProvider, toAnthropicMessages } from '../../../daemon/providers/anthropic-provider';
import { ProviderError } from '../../../daemon/providers/provider';
import { anthropicErrors, startAnthropicServer } from '../../fakes/anthropic-server';
import type { FakeReply, FakeServer } from '../../fakes/openai-server';
import { collect, drain } from './provider-fixtures';

const SECRET = 'sk-ant-test-0123456789';

function adapter(fake: FakeServer, opts: { firstTokenMs?: number; idleMs?: number } = {}): AnthropicProvider {
  return new AnthropicProvider({
    id: 'claude',
    baseURL: fake.baseURL,
    apiKey: SECRET,
    keyLabel: 'work',
    model: () => 'claude-fake-haiku',
    timeouts: { firstTokenMs: opts.firstTokenMs ?? 5000, idleMs: opts.idleMs ?? 5000 },
  });
}

async function withFake(t: { after: (fn: () => Promise<void>) => void }): Promise<FakeServer> {
  const fake = await startAnthropicServer();
  t.after(() => fake.close());
  return fake;
}

void test('streams text_delta events and closes with done (usage from message_start and message_delta)', async (t) => {
  const fake = await withFake(t);
  fake.queue({ kind: 'text', chunks: ['Hi', ' there'] });
  const events = await collect(adapter(fake).chat({ messages: [{ role: 'user', content: 'hi' }] }));
  assert.deepEqual(events, [
    { type: 'text_delta', text: 'Hi' },
    { type: 'text_delta', text: ' there' },
    { type: 'done', finish_reason: 'stop', usage: { input_tokens: 12, output_tokens: 3 }, provider: 'claude', model: 'claude-fake-haiku' },
  ]);
  const req = fake.requests[0]!;
  assert.equal(req.apiKey, SECRET);
  assert.equal(req.body?.stream, true);
  assert.equal(req.body?.max_tokens, 4096, 'the Messages API requires max_tokens');
});

void test('assembles input_json_delta pieces into whole ToolCall events at content_block_stop', async (t) => {
  const fake = await withFake(t);
  fake.queue({
    kind: 'tool_calls',
    text: ['Let me look.'],
    calls: [
      { id: 'toolu_1', name: 'get_weather', argumentChunks: ['{"city"', ': "Par', 'is"}'] },
      { id: 'toolu_2', name: 'now', argumentChunks: [''] },
    ],
  });
  const events = await collect(adapter(fake).chat({ messages: [{ role: 'user', content: 'weather?' }] }));
  assert.deepEqual(events, [
    { type: 'text_delta', text: 'Let me look.' },
    { type: 'tool_call', call: { id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris' } } },
    { type: 'tool_call', call: { id: 'toolu_2', name: 'now', arguments: {} } },
    { type: 'done', finish_reason: 'tool_calls', usage: { input_tokens: 12, output_tokens: 2 }, provider: 'claude', model: 'claude-fake-haiku' },
  ]);
});

void test('maps system messages, assistant tool calls, merged tool results and TypeBox tools', async (t) => {
  const fake = await withFake(t);
  await collect(
    adapter(fake).chat({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'lights and weather' },
        { role: 'assistant', content: 'On it.', tool_calls: [{ id: 't1', name: 'lights', arguments: { on: false } }, { id: 't2', name: 'weather', arguments: {} }] },
        { role: 'tool', tool_call_id: 't1', name: 'lights', content: 'ok' },
        { role: 'tool', tool_call_id: 't2', name: 'weather', content: 'sunny' },
      ],
      tools: [{ name: 'lights', description: 'Switch lights', parameters: Type.Object({ on: Type.Boolean() }) }],
    }),
  );
  const body = fake.requests[0]!.body!;
  assert.equal(body.system, 'be brief');
  assert.deepEqual(body.messages, [
    { role: 'user', content: 'lights and weather' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'On it.' },
        { type: 'tool_use', id: 't1', name: 'lights', input: { on: false } },
        { type: 'tool_use', id: 't2', name: 'weather', input: {} },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: 'ok' },
        { type: 'tool_result', tool_use_id: 't2', content: 'sunny' },
      ],
    },
  ]);
  assert.deepEqual(body.tools, [{ name: 'lights', description: 'Switch lights', input_schema: { type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'] } }]);
});

void test('a plain assistant message stays a string', () => {
  const { messages } = toAnthropicMessages([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }]);
  assert.deepEqual(messages, [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }]);
});

const cases: [string, () => FakeReply, string, number][] = [
  ['429 with Retry-After', () => anthropicErrors.rateLimit(12), 'rate_limit', 429],
  ['401 authentication_error', anthropicErrors.auth, 'auth', 401],
  ['402 billing_error', anthropicErrors.billing, 'billing', 402],
  ['400 low credit balance', anthropicErrors.lowCredit400, 'billing', 400],
  ['529 overloaded_error', anthropicErrors.overloaded, 'overloaded', 529],
  ['500 api_error', () => anthropicErrors.server(500), 'unknown', 500],
  ['400 prompt is too long', anthropicErrors.contextLength, 'context_overflow', 400],
  ['400 invalid_request_error', anthropicErrors.badRequest, 'bad_request', 400],
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
    assert.equal(error.opts.keyLabel, 'work');
    if (expected === 'rate_limit') assert.equal(error.opts.retryAfterMs, 12_000);
  });
}

void test('an `event: error` overloaded_error inside the stream surfaces after the text it follows', async (t) => {
  const fake = await withFake(t);
  fake.queue({ kind: 'stream_error', chunks: ['par'], error: { type: 'overloaded_error', message: 'Overloaded' } });
  const { events, error } = await drain(adapter(fake).chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.deepEqual(events, [{ type: 'text_delta', text: 'par' }]);
  assert.ok(error instanceof ProviderError);
  assert.equal(error.errorClass, 'overloaded');
});

void test('headers then nothing: first-token timeout; text then nothing: idle timeout', async (t) => {
  const fake = await withFake(t);
  fake.queue({ kind: 'stall' }, { kind: 'stall', chunks: ['a'] });
  const first = await drain(adapter(fake, { firstTokenMs: 150 }).chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.ok(first.error instanceof ProviderError);
  assert.equal(first.error.errorClass, 'timeout');
  assert.match(first.error.message, /first-token/);
  const idle = await drain(adapter(fake, { idleMs: 150 }).chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.deepEqual(idle.events, [{ type: 'text_delta', text: 'a' }]);
  assert.ok(idle.error instanceof ProviderError);
  assert.equal(idle.error.errorClass, 'timeout');
  assert.match(idle.error.message, /idle/);
});

void test('a dropped connection before message_stop is a network failure', async (t) => {
  const fake = await withFake(t);
  fake.queue({ kind: 'drop', chunks: ['x'] });
  const { error } = await drain(adapter(fake).chat({ messages: [{ role: 'user', content: 'x' }] }));
  assert.ok(error instanceof ProviderError);
  assert.equal(error.errorClass, 'network');
});

void test('lists models through GET /v1/models', async (t) => {
  const fake = await withFake(t);
  assert.deepEqual(await adapter(fake).listModels(), ['claude-fake-haiku', 'claude-fake-sonnet']);
  assert.equal(fake.requests[0]!.path, '/v1/models');
});
