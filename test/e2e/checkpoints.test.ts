// Checkpoints end to end: the built brain, with the fake OpenAI server as its model, writes, edits and
// deletes files in a granted folder and runs a command; `svc checkpoints` (dist/svc.mjs, reading
// $SVC_HOME/checkpoints itself) lists the turn, `show` changes nothing, `undo` restores; a file edited
// by hand after the agent's turn is drifted and refused (exit 1) until `--force`. The same with the
// brain running and stopped, and the brain keeps recording after the CLI reverted under it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SVC, startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { connect } from '../helpers/session-client';
import { startOpenAiServer, type FakeReply, type FakeServer } from '../fakes/openai-server';
import type { BrainMessage } from '../../protocol/session';

interface Call {
  name: string;
  args: Record<string, unknown>;
}

/** The model: a user message `DO <base64 JSON calls>` gets those tool calls; a tool result gets "done". */
function scriptModel(fake: FakeServer): void {
  let n = 0;
  fake.reply((req): FakeReply => {
    const messages = (Array.isArray(req.body?.messages) ? req.body.messages : []) as { role: string; content?: unknown }[];
    if (messages[0]?.role === 'system' && String(messages[0].content).startsWith('Extract the facts')) return { kind: 'text', chunks: ['{"triples":[]}'] };
    const last = messages.at(-1);
    const m = last?.role === 'user' ? /^DO (\S+)$/.exec(String(last.content)) : null;
    if (m) {
      const calls = JSON.parse(Buffer.from(m[1]!, 'base64').toString('utf8')) as Call[];
      return { kind: 'tool_calls', calls: calls.map((c) => ({ id: `call_${++n}`, name: c.name, argumentChunks: [JSON.stringify(c.args)] })) };
    }
    return { kind: 'text', chunks: ['done'] };
  });
}

const svc = (home: string, args: string[]) => spawnSync(process.execPath, [SVC, 'checkpoints', ...args], { env: { ...process.env, SVC_HOME: home }, encoding: 'utf8', timeout: 30_000 });

/** One turn that makes the model call `calls`; resolves with the turn id once the answer is in. */
async function turn(brain: BrainProcess, calls: Call[]): Promise<string> {
  const { ws, frames } = await connect(brain);
  try {
    const text = `DO ${Buffer.from(JSON.stringify(calls)).toString('base64')}`;
    ws.send(JSON.stringify({ type: 'text_command', session_id: '', payload: { text } }));
    const done = await new Promise<BrainMessage>((resolve) => {
      const check = (): void => {
        const r = frames.find((f) => f.type === 'text_response');
        if (r) resolve(r);
        else ws.once('message', check);
      };
      check();
    });
    const started = frames.find((f) => f.type === 'turn_started');
    assert.ok(started && started.type === 'turn_started', JSON.stringify(frames.map((f) => f.type)));
    const results = frames.filter((f) => f.type === 'tool_result');
    assert.equal(results.length, calls.length, JSON.stringify(results));
    assert.equal(done.type === 'text_response' && done.payload.text, 'done');
    return started.payload.turn_id;
  } finally {
    ws.close();
  }
}

void test('svc checkpoints lists, shows and undoes the agent’s file changes, brain running and stopped; drift needs --force', async (t) => {
  const fake = await startOpenAiServer();
  scriptModel(fake);
  const home = tempHome('svc-checkpoints-e2e-');
  const work = join(home, 'work');
  mkdirSync(work);
  const dir = realpathSync(work);
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'openai', kind: 'openai', base_url: fake.baseURL, keyless: true }] }, approvals: { tools: { delete_file: 'auto', run_command: 'auto' } } }));
  let brain = await startBrain({ home, keepHome: true });
  t.after(async () => {
    await brain.kill();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  });
  const granted = await brain.api('/api/grants', { method: 'POST', body: JSON.stringify({ path: dir, write: true }) });
  assert.equal(granted.status, 201, await granted.text());
  const [a, b, c] = ['a.txt', 'b.txt', 'c.txt'].map((name) => join(dir, name)) as [string, string, string];
  writeFileSync(b, 'bee');
  writeFileSync(c, 'sea');
  const read = (p: string): string | null => (existsSync(p) ? readFileSync(p, 'utf8') : null);
  const state = () => [read(a), read(b), read(c)];

  // Brain running: one turn writes, edits, deletes and runs a command.
  const t1 = await turn(brain, [
    { name: 'write_file', args: { path: a, content: 'new file' } },
    { name: 'edit_file', args: { path: b, old_text: 'bee', new_text: 'bee edited' } },
    { name: 'delete_file', args: { path: c } },
    { name: 'run_command', args: { argv: ['true'], cwd: dir } },
  ]);
  assert.deepEqual(state(), ['new file', 'bee edited', null]);
  const listed = svc(home, ['--json']);
  assert.equal(listed.status, 0, listed.stderr);
  const turns = JSON.parse(listed.stdout) as { turn_id: string; changes: number; not_revertible: number }[];
  assert.deepEqual(turns.map((x) => [x.turn_id, x.changes, x.not_revertible]), [[t1, 4, 1]]);
  assert.match(svc(home, []).stdout, new RegExp(`^TURN\\s+SESSION\\s+LAST CHANGE\\s+CHANGES\\s+STATE\\n${t1}\\s`));

  const shown = svc(home, ['show']);
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /not revertible\s+ran \["true"\]/);
  assert.match(shown.stdout, /revert\s+recreate|revert\s+restore .*c\.txt/);
  assert.deepEqual(state(), ['new file', 'bee edited', null], 'show changes nothing');

  const undone = svc(home, ['undo']);
  assert.equal(undone.status, 0, undone.stderr);
  assert.match(undone.stdout, new RegExp(`^turn ${t1} reverted:`));
  assert.deepEqual(state(), [null, 'bee', 'sea']);
  const again = svc(home, ['undo', t1]);
  assert.equal(again.status, 0);
  assert.match(again.stdout, /already reverted/);

  // The brain records after the CLI reverted under it; a hand edit makes the turn drifted.
  const t2 = await turn(brain, [{ name: 'write_file', args: { path: b, content: 'agent two' } }]);
  writeFileSync(b, 'by hand');
  const refused = svc(home, ['undo']);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, new RegExp(`turn ${t2} not reverted; nothing was changed[\\s\\S]*drifted[\\s\\S]*b\\.txt[\\s\\S]*svc checkpoints undo ${t2} --force`));
  assert.equal(read(b), 'by hand');
  const forced = svc(home, ['undo', t2, '--force']);
  assert.equal(forced.status, 0, forced.stderr);
  assert.equal(read(b), 'bee');

  // Brain stopped: the CLI works on the files alone.
  const t3 = await turn(brain, [
    { name: 'edit_file', args: { path: b, old_text: 'bee', new_text: 'three' } },
    { name: 'move_file', args: { from: c, to: join(dir, 'moved.txt') } },
  ]);
  assert.equal(await brain.stop(), 0);
  assert.deepEqual((JSON.parse(svc(home, ['--json']).stdout) as { turn_id: string }[]).map((x) => x.turn_id), [t3, t2, t1]);
  writeFileSync(join(dir, 'moved.txt'), 'hand edit of the moved file');
  const stoppedShow = svc(home, ['show', '--json']);
  assert.equal(stoppedShow.status, 0, stoppedShow.stderr);
  assert.deepEqual((JSON.parse(stoppedShow.stdout) as { steps: { status: string }[] }).steps.map((s) => s.status), ['drifted', 'revert']);
  const stoppedRefused = svc(home, ['undo']);
  assert.equal(stoppedRefused.status, 1);
  assert.match(stoppedRefused.stderr, /moved\.txt/);
  assert.deepEqual(state(), [null, 'three', null]);
  const stoppedForced = svc(home, ['undo', '--force']);
  assert.equal(stoppedForced.status, 0, stoppedForced.stderr);
  assert.deepEqual(state(), [null, 'bee', 'sea']);
  assert.ok(!existsSync(join(dir, 'moved.txt')));

  // And the brain starts again on a home the CLI wrote to, and records the next turn.
  brain = await startBrain({ home, keepHome: true });
  const t4 = await turn(brain, [{ name: 'write_file', args: { path: a, content: 'four' } }]);
  assert.equal((JSON.parse(svc(home, ['--json']).stdout) as { turn_id: string }[])[0]?.turn_id, t4);
  assert.equal(svc(home, ['undo', 'no-such-turn']).status, 1);
  const usage = svc(home, ['show', '--force']);
  assert.equal(usage.status, 2, 'show takes no --force: a usage error');
  assert.match(usage.stderr, /--force/);
});
