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
  assert.equal((await ask('set the brightness of the desk lamp to 40')).result.text, 'Desk Lamp is now brightness 40.', 'what was asked, not every state the device has');
  assert.match((await ask('turn off the toaster')).result.text, /no device called toaster/);
});

void test('help, identity, and the honest fallback that says how to connect a model', async () => {
  assert.match((await ask('help')).result.text, /svc key add/);
  assert.match((await ask('who are you?')).result.text, /^I'm svc\./);
  assert.match((await ask('who am I')).result.text, /You are Ada/);
  const fallback = await ask('play some music');
  assert.match(fallback.result.text, /svc key add openai/);
  assert.match(fallback.result.text, /didn't understand “play some music”/);
  assert.equal(fallback.result.toolSteps, 1, 'one memory lookup, which found nothing');
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

const spoken = async (events: AsyncIterable<ChatEvent>): Promise<string> => {
  let out = '';
  for await (const e of events) if (e.type === 'text_delta') out += e.text;
  return out;
};

void test('when the chain passed over configured models, the fallback says why instead of "connect a model"', async () => {
  const passed = [
    { provider: 'openai', errorClass: 'auth' as const, message: 'key default disabled after auth until 2030-01-01T00:00:00Z; once the key is fixed run `svc key recover`, or add another: `svc key add openai <label>`' },
    { provider: 'claude', errorClass: 'billing' as const, message: 'Your credit balance is too low' },
  ];
  const text = await spoken(new LocalProvider().chat({ messages: [{ role: 'user', content: 'write me a poem' }], tools: [], passed }));
  assert.match(text, /didn't understand “write me a poem”/);
  assert.match(text, /No model can answer right now: openai: key default disabled after auth until 2030-01-01T00:00:00Z; once the key is fixed run `svc key recover`/);
  assert.match(text, /claude: Your credit balance is too low \(fix the key, then run `svc key recover`\)/);
  assert.doesNotMatch(text, /connect a model/);
  const plain = await spoken(new LocalProvider().chat({ messages: [{ role: 'user', content: 'write me a poem' }], tools: [] }));
  assert.match(plain, /connect a model/);
});

void test('greetings and thanks are answered directly; a statement is remembered; "Remember: …" too', async () => {
  assert.match((await ask('Good morning!')).result.text, /^Good morning! What can I do for you\?/);
  assert.equal((await ask('thanks a lot')).result.text, "You're welcome!");
  const stated = await ask('my dog is called Biscuit');
  assert.equal(stated.memory.notes[0]?.text, 'my dog is called Biscuit');
  const colon = await ask('Remember: the parcel is next door');
  assert.equal(colon.memory.notes[0]?.text, 'the parcel is next door');
});

void test('a recall question is answered with the matching note in the second person; nothing matching says so', async () => {
  const fx = makeAgent(new LocalProvider());
  await fx.memory.remember('I put my passport in the top drawer');
  await fx.memory.remember('The garage code is 4821');
  const s = fx.agent.sessions.open();
  assert.equal((await fx.agent.sessions.submit(s, 'where did I put my passport?', newTurnId())).text, 'You put your passport in the top drawer.');
  assert.equal((await fx.agent.sessions.submit(s, 'garage code?', newTurnId())).text, "I didn't understand that as a request, but my memory has this: The garage code is 4821.");
  assert.match((await fx.agent.sessions.submit(s, 'when is the school play', newTurnId())).text, /^I don.t have anything about “school play” in memory/);
});
