// The svc CLI against the built brain: one-shot messages, a near-typo refused as usage, setup without
// a TTY, identity, and the REPL under a real pseudo-terminal (util-linux `script`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startBrain, SVC, type BrainProcess } from '../helpers/brain-process';

function svc(brain: BrainProcess, args: string[], input = '') {
  const r = spawnSync(process.execPath, [SVC, '--url', brain.url, ...args], { input, encoding: 'utf8', env: { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token }, timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const strip = (s: string): string => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

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

void test('the REPL under a pseudo-terminal streams answers, runs slash commands and quits cleanly', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const child = spawn('script', ['-qfec', `${process.execPath} ${SVC} --url ${brain.url}`, '/dev/null'], {
    env: { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token, TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
    for (const w of [...waiters]) {
      if (!w.re.test(strip(out))) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  const until = (re: RegExp) => new Promise<void>((resolve) => (re.test(strip(out)) ? resolve() : waiters.push({ re, resolve })));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));

  await until(/session ses_\S+\. \/help for commands/);
  child.stdin.write('remember that the spare bulbs are in the hall cupboard\r');
  await until(/I'll remember that the spare bulbs are in the hall cupboard\./);
  child.stdin.write('/identity\r');
  await until(/personality: /);
  child.stdin.write('/status\r');
  await until(/sessions 1 open \(1 clients\)/);
  child.stdin.write('/quit\r');
  assert.equal(await exited, 0);
  assert.match(strip(out), /· remember \{"text":"the spare bulbs are in the hall cupboard"\}/);
  const episodes = (await (await brain.api('/api/memory/episodes')).json()) as { items: { summary: string }[] };
  assert.match(episodes.items[0]?.summary ?? '', /spare bulbs/);
});
