// The user sees a flow in the chat (issue 12): in the REPL under a real pseudo-terminal, the model
// (the fake OpenAI server, real wire format) starts a TaskFlow with start_taskflow; the flow runs in
// the background in the chat's session and its taskflow_update frames show in the REPL as it waits
// and completes, without the user asking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SVC, startBrain, tempHome } from '../helpers/brain-process';
import { runInPty } from '../helpers/pty';
import { startOpenAiServer, type FakeReply, type RecordedRequest } from '../fakes/openai-server';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskflowList } from '../../protocol/taskflows';

type Message = { role: string; content?: unknown };
const messagesOf = (req: RecordedRequest): Message[] => (Array.isArray(req.body?.messages) ? (req.body.messages as Message[]) : []);

void test('a flow the model starts shows in the REPL as it waits and completes', { timeout: 90_000 }, async (t) => {
  const fake = await startOpenAiServer();
  t.after(() => fake.close());
  const steps = [{ type: 'note', text: 'the plants were watered' }, { type: 'wait', seconds: 1 }, { type: 'tool', tool: 'status' }];
  fake.reply((req): FakeReply => {
    const messages = messagesOf(req);
    if (String(messages[0]?.content).startsWith('Extract the facts')) return { kind: 'text', chunks: ['{"triples":[]}'] };
    const last = messages.at(-1);
    if (last?.role === 'user' && String(last.content) === 'water the plants later') {
      return { kind: 'tool_calls', calls: [{ id: 'call_flow', name: 'start_taskflow', argumentChunks: [JSON.stringify({ title: 'Plants', steps })] }] };
    }
    if (last?.role === 'tool') return { kind: 'text', chunks: ['I started a flow for the plants.'] };
    return { kind: 'text', chunks: ['ok'] };
  });
  const home = tempHome('svc-chat-flows-');
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'openai', kind: 'openai', base_url: fake.baseURL, keyless: true }] } }));
  const brain = await startBrain({ home });
  t.after(() => brain.kill());
  const pty = runInPty(`${process.execPath} ${SVC} --url ${brain.url}`, { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token });
  t.after(() => pty.kill());
  await pty.until(/\/help for commands/);
  pty.write('water the plants later\r');
  await pty.until(/I started a flow for the plants\./);
  await pty.until(/⟳ Plants \(flw_[\w-]+\): waiting — step 1 waits until \S+/);
  await pty.until(/⟳ Plants \(flw_[\w-]+\): completed — all 3 steps done/);
  const list = (await (await brain.api('/api/taskflows')).json()) as TaskflowList;
  assert.equal(list.count, 1);
  assert.equal(list.taskflows[0]!.status, 'completed');
  pty.write('/quit\r');
  assert.equal(await pty.exited, 0);
});
