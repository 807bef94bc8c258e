// The built `svc` client, black-box: help, usage errors (exit 2 with hints), status against a running
// and a stopped brain, doctor's fix for a world-readable vault.key, and a start/stop round trip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startBrain, tempHome } from '../helpers/brain-process';
import { freePort, runSvc } from './fixtures/processes';

const FOUNDATION = ['serve', 'start', 'stop', 'status', 'doctor'];

function home(t: { after: (fn: () => void) => void }): string {
  const dir = tempHome('svc-cli-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Command names listed under "Available Commands" in `svc --help`. */
const listedCommands = (help: string): string[] =>
  [...(help.split('Available Commands')[1]?.split('For more info')[0] ?? '').matchAll(/^ {4}(\S+)\s/gm)].map((m) => m[1]!);

test('svc --help lists the commands and global options; exit 0', async () => {
  const r = await runSvc(['--help']);
  assert.equal(r.code, 0);
  const listed = listedCommands(r.stdout);
  for (const command of FOUNDATION) assert.ok(listed.includes(command), `${command} in:\n${r.stdout}`);
  assert.match(r.stdout, /--url/);
  assert.match(r.stdout, /--home/);
});

test('every listed command answers --help with its own usage; exit 0', async () => {
  const listed = listedCommands((await runSvc(['--help'])).stdout);
  assert.ok(listed.length >= FOUNDATION.length);
  for (const command of listed) {
    const r = await runSvc([command, '--help']);
    assert.equal(r.code, 0, command);
    assert.match(r.stdout, new RegExp(`\\$ svc ${command}\\b`), command);
    assert.equal(r.stderr, '', command);
  }
});

test('svc --version prints the version', async () => {
  const r = await runSvc(['--version']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^svc, \d+\.\d+\.\d+/);
});

// A word far from every command is not a usage error: `svc '<message>'` sends it to the brain as a
// one-shot message (spec 4.14). Only a near miss of a command is taken for a typo.
test('a mistyped command exits 2 with a did-you-mean hint', async () => {
  for (const [typo, meant] of [
    ['stauts', 'status'],
    ['strat', 'start'],
    ['doctr', 'doctor'],
  ]) {
    const r = await runSvc([typo!]);
    assert.equal(r.code, 2, typo);
    assert.equal(r.stderr, `svc: unknown command '${typo}'; did you mean '${meant}'?\nRun \`svc --help\` for usage.\n`);
  }
});

test('an unknown option exits 2 and names it', async () => {
  const r = await runSvc(['status', '--colour']);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'svc: unknown option --colour\nRun `svc --help` for usage.\n');
  const port = await runSvc(['start', '--port', 'http']);
  assert.equal(port.code, 2);
  assert.match(port.stderr, /--port http: expected a port number/);
});

test('svc status against a running brain (--url): text and --json, exit 0', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const text = await runSvc(['status', '--url', brain.url, '--home', brain.home]);
  assert.equal(text.code, 0);
  assert.match(text.stdout, new RegExp(`^brain: ok at ${brain.url}\\n  version: \\d+\\.\\d+\\.\\d+\\n  uptime: +\\d+s\\n  home: +${brain.home}\\n  pid: +${brain.child.pid}\\n$`));
  const json = await runSvc(['status', '--json', '--url', brain.url, '--home', brain.home]);
  assert.equal(json.code, 0);
  const body = JSON.parse(json.stdout) as { running: boolean; url: string; pid: number; health: { status: string; version: string } };
  assert.equal(body.running, true);
  assert.equal(body.url, brain.url);
  assert.equal(body.pid, brain.child.pid);
  assert.equal(body.health.status, 'ok');
});

test('svc status against a stopped brain: exit 1, text and --json say so', async (t) => {
  const url = `http://127.0.0.1:${await freePort()}`;
  const dir = home(t);
  const text = await runSvc(['status', '--url', url, '--home', dir]);
  assert.equal(text.code, 1);
  assert.match(text.stdout, new RegExp(`^brain: not running at ${url}\\n  start it with: svc start`));
  const json = await runSvc(['status', '--json', '--url', url, '--home', dir]);
  assert.equal(json.code, 1);
  assert.deepEqual(JSON.parse(json.stdout), { running: false, url, home: dir, pid: null, health: null });
});

test('svc doctor reports a world-readable vault.key with the chmod that fixes it', async (t) => {
  const dir = home(t);
  chmodSync(dir, 0o700);
  const key = join(dir, 'vault.key');
  writeFileSync(key, `${randomBytes(32).toString('hex')}\n`);
  chmodSync(key, 0o644);
  const url = `http://127.0.0.1:${await freePort()}`;
  const r = await runSvc(['doctor', '--url', url], { SVC_HOME: dir });
  assert.equal(r.code, 1);
  assert.match(r.stdout, new RegExp(`^FAIL vault key file: ${key} is readable by others \\(mode 644\\)\\n {5}fix: chmod 600 ${key}$`, 'm'));
  chmodSync(key, 0o600);
  const fixed = await runSvc(['doctor', '--json', '--url', url], { SVC_HOME: dir });
  const checks = (JSON.parse(fixed.stdout) as { checks: { name: string; ok: boolean }[] }).checks;
  assert.deepEqual(
    checks.filter((c) => c.name.startsWith('vault')).map((c) => [c.name, c.ok]),
    [
      ['vault key file', true],
      ['vault', true],
    ],
  );
});

test('svc start then svc stop on a temporary home and a free port', async (t) => {
  const dir = home(t);
  const port = await freePort();
  const env = { SVC_HOME: dir };
  t.after(() => {
    const pid = Number(existsSync(join(dir, 'brain.pid')) ? readFileSync(join(dir, 'brain.pid'), 'utf8').split('\n')[0] : 0);
    if (pid > 0) process.kill(pid, 'SIGKILL');
  });
  const started = await runSvc(['start', '--port', String(port)], env);
  assert.equal(started.code, 0, started.stdout + started.stderr);
  assert.match(started.stdout, new RegExp(`^brain running at http://127\\.0\\.0\\.1:${port} \\(svc [^,]+, pid \\d+\\); logs in ${join(dir, 'brain.log')}\\n$`));
  const pid = Number(readFileSync(join(dir, 'brain.pid'), 'utf8').split('\n')[0]);

  const again = await runSvc(['start', '--port', String(port)], env);
  assert.equal(again.code, 0);
  assert.match(again.stdout, /^brain already running at /);

  const status = await runSvc(['status', '--url', `http://127.0.0.1:${port}`], env);
  assert.equal(status.code, 0);
  assert.match(status.stdout, new RegExp(`pid: +${pid}\\n`));

  const stopped = await runSvc(['stop'], env);
  assert.equal(stopped.code, 0);
  assert.equal(stopped.stdout, `brain stopped (pid ${pid})\n`);
  assert.ok(!existsSync(join(dir, 'brain.pid')));
  assert.equal((await runSvc(['status', '--url', `http://127.0.0.1:${port}`], env)).code, 1);
  assert.equal((await runSvc(['stop'], env)).stdout, `no brain is running on ${dir}\n`);
});

test('svc stop never signals a process that merely reuses the pid recorded in a stale brain.pid', async (t) => {
  const dir = home(t);
  const bystander = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.after(() => bystander.kill('SIGKILL'));
  await new Promise((resolve) => bystander.once('spawn', resolve));
  writeFileSync(join(dir, 'brain.pid'), `${bystander.pid}\n1\n`); // same pid, another process start time
  const r = await runSvc(['stop'], { SVC_HOME: dir });
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^no brain is running on /);
  assert.equal(bystander.exitCode, null);
  assert.equal(bystander.signalCode, null, 'the bystander was not signalled');
});
