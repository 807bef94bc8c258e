// The embedded local agent through the real turn loop: sentence → tool call → tool result → answer,
// streamed like any provider; honest fallback pointing at `svc key add` for everything else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalProvider, loadBundledData, LOCAL_MODEL } from '../../../../daemon/providers/local/local-provider';
import type { ChatEvent } from '../../../../daemon/providers/provider';
import { newTurnId } from '../../../../daemon/agent/session-manager';
import { makeAgent, RecordingClient } from '../../agent/agent-fixtures';

const lamp = { id: 'lamp1', name: 'Desk Lamp', kind: 'light', online: true, state: { power: 'off' } };

async function ask(text: string, devices = [structuredClone(lamp)]) {
  const fx = makeAgent(new LocalProvider(), { devices });
  const session = fx.agent.sessions.open();
  const client = new RecordingClient();
  fx.agent.sessions.attach(session, client);
  const result = await fx.agent.sessions.submit(session, text, newTurnId());
  return { ...fx, result, client, session };
}

void test('the bundled sentence file is valid and every intent names a built-in tool or none', () => {
  const data = loadBundledData();
  const tools = new Set(['remember', 'search_memory', 'forget', 'knowledge_query', 'identity', 'status', 'list_devices', 'set_device']);
  for (const intent of data.intents) if (intent.tool) assert.ok(tools.has(intent.tool), intent.intent);
});

void test('remember, then recall, then forget — all offline', async () => {
  const fx = makeAgent(new LocalProvider());
  const s = fx.agent.sessions.open();
  const r1 = await fx.agent.sessions.submit(s, 'Remember that the spare key is under the blue pot', newTurnId());
  assert.equal(r1.text, "I'll remember that the spare key is under the blue pot.");
  assert.equal(r1.provider, 'local');
  assert.equal(r1.model, LOCAL_MODEL);
  assert.equal(fx.memory.notes.length, 1);
  const r2 = await fx.agent.sessions.submit(s, 'what do you know about the spare key?', newTurnId());
  assert.match(r2.text, /under the blue pot/);
  const r3 = await fx.agent.sessions.submit(s, 'forget the spare key', newTurnId());
  assert.match(r3.text, /Forgotten/);
  assert.equal(fx.memory.notes.length, 0);
});

void test('status, devices and switching a device', async () => {
  assert.match((await ask('status')).result.text, /is running/);
  assert.match((await ask('list devices')).result.text, /Desk Lamp \(off\)/);
  const on = await ask('turn on the desk lamp');
  assert.equal(on.result.text, 'Desk Lamp is now on.');
  assert.equal(on.devices.devices[0]!.state.power, 'on');
  assert.equal(on.result.specialist, 'home');
  assert.match((await ask('set the brightness of the desk lamp to 40')).result.text, /brightness 40/);
  assert.match((await ask('turn off the toaster')).result.text, /no device called toaster/);
});

void test('help, identity, and the honest fallback that says how to connect a model', async () => {
  assert.match((await ask('help')).result.text, /svc key add/);
  assert.match((await ask('who are you?')).result.text, /^I'm svc\./);
  assert.match((await ask('who am I')).result.text, /You are Ada/);
  const fallback = await ask('what is the meaning of life?');
  assert.match(fallback.result.text, /svc key add openai/);
  assert.match(fallback.result.text, /meaning of life/);
  assert.equal(fallback.result.toolSteps, 0);
});

void test('it streams through the same events as any provider', async () => {
  const { client } = await ask('help');
  const deltas = client.frames.filter((f) => f.type === 'stream_delta');
  assert.ok(deltas.length > 3, 'the answer arrives in several deltas');
  assert.equal(client.frames.at(-1)!.type, 'text_response');
});

void test('a matched tool that is not offered is explained, not called', async () => {
  const events: ChatEvent[] = [];
  for await (const e of new LocalProvider().chat({ messages: [{ role: 'user', content: 'remember x' }], tools: [] })) events.push(e);
  assert.equal(events.some((e) => e.type === 'tool_call'), false);
  assert.match(events.map((e) => (e.type === 'text_delta' ? e.text : '')).join(''), /isn't available/);
});
