// The svc CLI against the built brain: one-shot messages, a near-typo refused as usage, setup without
// a TTY, identity, and the REPL under a real pseudo-terminal (util-linux `script`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startBrain, SVC, type BrainProcess } from '../helpers/brain-process';
import { runInPty } from '../helpers/pty';

function svc(brain: BrainProcess, args: string[], input = '') {
  const r = spawnSync(process.execPath, [SVC, '--url', brain.url, ...args], { input, encoding: 'utf8', env: { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token }, timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}


void test('one-shot messages print the answer and exit 0; a near-typo of a command is a usage error', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const remembered = svc(brain, ['remember that the bins go out on Tuesday']);
  assert.equal(remembered.code, 0, remembered.err);
  assert.equal(remembered.out, "I'll remember that the bins go out on Tuesday.\n");
  const unknown = svc(brain, ['tell', 'me', 'the', 'meaning', 'of', 'life']);
  assert.equal(unknown.code, 0);
  assert.match(unknown.out, /svc key add/);
  const typo = svc(brain, ['stauts']);
  assert.equal(typo.code, 2);
  assert.match(typo.err, /did you mean 'status'/);
  const episodes = (await (await brain.api('/api/memory/episodes')).json()) as { items: unknown[] };
  assert.equal(episodes.items.length, 2, 'each one-shot session ended and wrote its episode');
});

void test('setup without a TTY never prompts, keeps defaults and marks the first run done; identity prints the persona', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const r = svc(brain, ['setup']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /nothing was asked/);
  assert.ok(existsSync(join(brain.home, 'setup.json')));
  const id = svc(brain, ['identity']);
  assert.equal(id.code, 0);
  assert.match(id.out, /^name: +svc$/m);
  assert.match(id.out, /^rules:$/m);
  assert.equal(svc(brain, ['identity', 'user']).out.startsWith('# USER.md'), true);
});

// Bounded: a prompt that never appears fails the test instead of hanging the suite.
void test('the REPL under a pseudo-terminal streams answers, runs slash commands and quits cleanly', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const pty = runInPty(`${process.execPath} ${SVC} --url ${brain.url}`, { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token });
  t.after(() => pty.kill());
  const until = (re: RegExp): Promise<void> => pty.until(re);
  await until(/session ses_\S+\. \/help for commands/);
  pty.write('remember that the spare bulbs are in the hall cupboard\r');
  await until(/I'll remember that the spare bulbs are in the hall cupboard\./);
  pty.write('/identity\r');
  await until(/personality: /);
  pty.write('/status\r');
  await until(/sessions 1 open \(1 clients\)/);
  pty.write('/devices\r');
  await until(/no hardware devices connected \(docs\/hardware\.md: node-agent run, svc bridge pair\)/);
  pty.write('/quit\r');
  assert.equal(await pty.exited, 0);
  assert.match(pty.output(), /· remember \{"text":"the spare bulbs are in the hall cupboard"\}/);
  const episodes = (await (await brain.api('/api/memory/episodes')).json()) as { items: { summary: string }[] };
  assert.match(episodes.items[0]?.summary ?? '', /spare bulbs/);
});

// Bounded: a prompt that never appears fails the test instead of hanging the suite.
void test('the setup wizard under a pseudo-terminal asks, then writes the answers through the API', { timeout: 60_000 }, async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const pty = runInPty(`${process.execPath} ${SVC} setup --url ${brain.url}`, { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token });
  t.after(() => pty.kill());
  await pty.until(/What should I call you\?/);
  pty.write('Ada\r');
  await pty.until(/What is the assistant's name\?/);
  pty.write('Nova\r'); // typing replaces the suggested name (it once appended to it: "svcNova")
  await pty.until(/Which personality\?/);
  pty.write('\x1b[B\r'); // one down from "keep the current one": the first preset (calm)
  await pty.until(/Which model should answer\?/);
  pty.write('\r'); // the built-in local agent
  assert.equal(await pty.exited, 0);
  const soul = (await (await brain.api('/api/identity/soul')).json()) as { name: string; personality: string };
  assert.equal(soul.name, 'Nova');
  assert.match(soul.personality, /calm, practical/);
  const twin = (await (await brain.api('/api/identity/twin')).json()) as { name: string | null };
  assert.equal(twin.name, 'Ada');
});
