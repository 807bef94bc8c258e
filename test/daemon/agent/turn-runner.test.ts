// The tool loop with a scripted provider on the Provider port: event order, tool results fed back,
// the step bound, the permission hook (privileged refused and counted), secret scrubbing, provider
// failures and cancellation always closing the turn with one text_response.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { ChainExhaustedError } from '../../../daemon/providers/provider';
import { defineTool } from '../../../daemon/kernel/tool';
import { LocalProvider } from '../../../daemon/providers/local/local-provider';
import { newTurnId } from '../../../daemon/agent/session-manager';
import type { BrainMessage } from '../../../protocol/session';
import { ScriptedProvider, RecordingClient, callTool, makeAgent, say, deferred } from './agent-fixtures';

const textOf = (frames: BrainMessage[]): string => frames.flatMap((f) => (f.type === 'stream_delta' ? [f.payload.text] : [])).join('');

void test('a tool call runs, its result goes back to the model, and the answer streams and closes the turn', async () => {
  const provider = new ScriptedProvider([() => callTool('remember', { text: 'the spare key is under the blue pot' }), () => say('Saved.')]);
  const { agent, memory } = makeAgent(provider);
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  const result = await agent.sessions.submit(session, 'remember that the spare key is under the blue pot', newTurnId());

  assert.deepEqual(client.types(), ['turn_started', 'tool_call', 'tool_result', 'stream_delta', 'text_response']);
  assert.equal(memory.notes[0]?.text, 'the spare key is under the blue pot');
  const toolMsg = provider.requests[1]!.messages.at(-1)!;
  assert.equal(toolMsg.role, 'tool');
  assert.match(toolMsg.role === 'tool' ? toolMsg.content : '', /"status":"ok"/);
  const final = client.frames.at(-1)!;
  assert.equal(final.type, 'text_response');
  if (final.type === 'text_response') {
    assert.equal(final.payload.text, textOf(client.frames));
    assert.equal(final.payload.tool_steps, 1);
    assert.ok(final.payload.sources.includes(memory.notes[0]?.id ?? ""));
    assert.deepEqual(final.payload.usage, { input_tokens: 10, output_tokens: 5 });
  }
  assert.equal(result.finishReason, 'stop');
});

void test('the number of tool steps per turn is bounded; the model then answers without tools', async () => {
  const provider = new ScriptedProvider([(req) => (req.tools ? callTool('status', {}, `c${Math.random()}`) : say('Enough checking.'))]);
  const { agent } = makeAgent(provider, { settings: { max_tool_steps: 3 } });
  const session = agent.sessions.open();
  const result = await agent.sessions.submit(session, 'status please', newTurnId());
  assert.equal(result.toolSteps, 3);
  assert.equal(result.finishReason, 'stop');
  assert.equal(result.text, 'Enough checking.');
  assert.equal(provider.requests.at(-1)!.tools, undefined, 'the last call offers no tools');
  assert.equal(provider.requests.length, 4);
});

void test('a model that keeps calling tools without being offered them ends the turn with tool_limit', async () => {
  const provider = new ScriptedProvider([() => callTool('status', {}, `c${Math.random()}`)]);
  const { agent } = makeAgent(provider, { settings: { max_tool_steps: 2 } });
  const result = await agent.sessions.submit(agent.sessions.open(), 'loop forever', newTurnId());
  assert.equal(result.finishReason, 'tool_limit');
  assert.equal(result.toolSteps, 2);
  assert.match(result.text, /stopped after 2 tool steps/);
});

void test('privileged tools are refused by the permission hook, counted in svc_tool_denials_total and never run', async () => {
  let ran = false;
  const provider = new ScriptedProvider([() => callTool('reboot_host', {}), () => say('I cannot do that.')]);
  const { agent, metrics } = makeAgent(provider);
  agent.tools.register('test', defineTool({ spec: { name: 'reboot_host', description: 'reboot', parameters: Type.Object({}) }, safety: 'privileged', run: async () => ((ran = true), { summary: 'rebooted' }) }));
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  await agent.sessions.submit(session, 'reboot the host', newTurnId());
  assert.equal(ran, false);
  const result = client.frames.find((f) => f.type === 'tool_result');
  assert.ok(result?.type === 'tool_result' && result.payload.status === 'denied');
  assert.match((provider.requests[1]!.messages.at(-1) as { content: string }).content, /approval/);
  assert.match(await metrics.render(), /svc_tool_denials_total\{tool="reboot_host"\} 1/);
  assert.deepEqual(agent.activity.recent(5).map((i) => i.kind).slice(0, 2), ['turn', 'tool_denied']);
});

void test('tool results never contain vault secrets, neither for the model nor for clients', async () => {
  const secret = 'sk-live-0123456789abcdef';
  const provider = new ScriptedProvider([() => callTool('leaky', {}), () => say('ok')]);
  const { agent } = makeAgent(provider, { secrets: [secret] });
  agent.tools.register('test', defineTool({ spec: { name: 'leaky', description: 'leaks', parameters: Type.Object({}) }, safety: 'passive', run: async () => ({ summary: `key is ${secret}`, data: { nested: [secret] }, ui: { id: 'x', template: 'card', data: { k: secret } } }) }));
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  await agent.sessions.submit(session, 'show me', newTurnId());
  assert.ok(!JSON.stringify(provider.requests[1]!.messages).includes(secret));
  assert.ok(!JSON.stringify(client.frames).includes(secret));
  assert.ok(JSON.stringify(client.frames).includes('[REDACTED]'));
});

void test('invalid arguments and unknown tools are reported to the model, not run', async () => {
  const provider = new ScriptedProvider([() => [...callTool('remember', { text: 42 }, 'a').slice(0, 1), ...callTool('nope', {}, 'b')], () => say('sorry')]);
  const { agent, memory } = makeAgent(provider);
  await agent.sessions.submit(agent.sessions.open(), 'x', newTurnId());
  const msgs = provider.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => (m as { content: string }).content);
  assert.match(msgs[0]!, /invalid arguments for remember/);
  assert.match(msgs[1]!, /no tool named nope/);
  assert.equal(memory.notes.length, 0);
});

void test('an exhausted provider chain still answers plainly and closes the turn', async () => {
  const provider = new ScriptedProvider([() => Promise.reject(new ChainExhaustedError([{ provider: 'openai', errorClass: 'rate_limit', message: '429' }]))]);
  const { agent } = makeAgent(provider);
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  const result = await agent.sessions.submit(session, 'hello', newTurnId());
  assert.equal(result.finishReason, 'error');
  assert.match(result.text, /could not get an answer from a language model/);
  assert.equal(client.frames.at(-1)!.type, 'text_response');
});

void test('a bug inside the turn becomes an error frame plus a closing text_response', async () => {
  const provider = new ScriptedProvider([() => Promise.reject(new TypeError('boom'))]);
  const { agent } = makeAgent(provider);
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  const result = await agent.sessions.submit(session, 'hello', newTurnId());
  assert.equal(result.finishReason, 'error');
  assert.deepEqual(client.types().slice(-3), ['error', 'stream_delta', 'text_response']);
});

void test('cancelling a running turn ends it with finish_reason cancelled', async () => {
  const gate = deferred();
  const provider = new ScriptedProvider([async () => (await gate.promise, say('too late'))]);
  const { agent } = makeAgent(provider);
  const session = agent.sessions.open();
  const turnId = newTurnId();
  const pending = agent.sessions.submit(session, 'slow question', turnId);
  await new Promise((r) => setImmediate(r));
  assert.equal(session.cancel(turnId), true);
  gate.resolve();
  assert.equal((await pending).finishReason, 'cancelled');
});

void test('tool UI data is sent as sdui_payload and returned as the turn sdui', async () => {
  const provider = new ScriptedProvider([() => callTool('status', {}), () => say('All good.')]);
  const { agent } = makeAgent(provider);
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  const result = await agent.sessions.submit(session, 'status', newTurnId());
  const sdui = client.frames.find((f) => f.type === 'sdui_payload');
  assert.ok(sdui?.type === 'sdui_payload' && sdui.payload.component.template === 'card');
  assert.equal(result.sdui?.id, 'brain-status');
});

void test('a turn that states a fact stores it in the knowledge graph with the turn as its source; a question stores none', async () => {
  const fx = makeAgent(new LocalProvider());
  const s = fx.agent.sessions.open();
  const turnId = newTurnId();
  await fx.agent.sessions.submit(s, 'my dog is called Rex', turnId);
  assert.deepEqual(fx.memory.stated, [{ triples: [{ subject: "user's dog", predicate: 'is called', object: 'Rex', confidence: 0.6 }], source: `turn:${turnId}` }]);
  await fx.agent.sessions.submit(s, "what's my dog called?", newTurnId());
  assert.equal(fx.memory.stated.length, 1);
});
