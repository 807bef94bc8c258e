// The built `svc` client, black-box: help, usage errors (exit 2 with hints), status against a running
// and a stopped brain, doctor's fix for a world-readable vault.key, a start/stop round trip, chat words
// that look like commands, text-valued flags, the brain that is actually on the port, and `svc serve`
// re-executing itself with the brain's runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ROOT, SVC, startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { BRAIN_ENV, BRAIN_NODE_FLAGS, RUNTIME_MARKER } from '../../cli/brain-runtime';
import { runInPty } from '../helpers/pty';
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

/** svc against a running brain with its home and token, stdin piped from `input`. */
function svcIn(brain: BrainProcess, args: string[], input = '', env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [SVC, '--url', brain.url, ...args], { env: { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

test('chat words are not commands: `svc stop the music` asks the brain and leaves it running; `svc status of the lights` is a message', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const music = await svcIn(brain, ['stop', 'the', 'music']);
  assert.equal(music.code, 0, music.stderr);
  assert.match(music.stdout, /“stop the music”/, 'the local agent answered the message');
  assert.equal((await fetch(`${brain.url}/health`)).status, 200, 'the brain still runs');
  assert.equal(brain.child.exitCode, null);
  const lights = await svcIn(brain, ['status', 'of', 'the', 'lights']);
  assert.equal(lights.code, 0, lights.stderr);
  assert.doesNotMatch(lights.stdout, /^brain: /m);
  assert.match(lights.stdout, /“status of the lights”/);
  const episodes = (await (await brain.api('/api/memory/episodes')).json()) as { items: unknown[] };
  assert.equal(episodes.items.length, 2, 'both went to the brain as one-shot sessions');
});

test('flags: values stay strings, --no-probe works, a lone - reads stdin, a missing argument exits 2 with the usage line', async (t) => {
  const brain = await startBrain({ keepHome: true });
  t.after(async () => {
    await brain.kill();
    rmSync(brain.home, { recursive: true, force: true });
  });
  const tags = await svcIn(brain, ['memory', 'note', 'the', 'code', 'is', '00123', '--tags', '007', '--json']);
  assert.equal(tags.code, 0, tags.stderr);
  assert.deepEqual((JSON.parse(tags.stdout) as { text: string; tags: string[] }).tags, ['007']);
  assert.equal((JSON.parse(tags.stdout) as { text: string }).text, 'the code is 00123', 'every word of the note is kept');
  const empty = await svcIn(brain, ['memory', 'note', 'untagged', '--tags', '', '--json']);
  assert.equal(empty.code, 0, empty.stderr);
  assert.deepEqual((JSON.parse(empty.stdout) as { tags: string[] }).tags, []);
  const piped = await svcIn(brain, ['memory', 'note', '-', '--json'], 'the boiler was serviced in May\n');
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal((JSON.parse(piped.stdout) as { text: string }).text, 'the boiler was serviced in May');
  const missing = await svcIn(brain, ['memory', 'search']);
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, 'svc: missing <query>\nUsage: svc memory search <query>\nRun `svc --help` for usage.\n');

  // A keyed provider that is never called: --no-probe stores the key without asking it.
  writeFileSync(join(brain.home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'openai', kind: 'openai', base_url: 'http://127.0.0.1:9/v1' }, { id: 'local', kind: 'local' }] } }));
  await brain.stop();
  const again = await startBrain({ home: brain.home });
  t.after(() => again.kill());
  const added = await svcIn(again, ['key', 'add', 'openai', '00123', '--no-probe'], 'sk-test-not-real\n');
  assert.equal(added.code, 0, added.stderr);
  assert.match(added.stdout, /^added openai\/00123 \(fingerprint \S+; not probed\)\n$/);
  const unlabelled = await svcIn(again, ['key', 'add', 'openai', '--no-probe'], 'sk-test-other\n');
  assert.equal(unlabelled.code, 0, unlabelled.stderr);
  assert.match(unlabelled.stdout, /^added openai\/default /, 'without a label (and no terminal) the key is "default"');
});

test('unexpected errors print one line; SVC_DEBUG=1 adds the stack', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const missingFile = join(brain.home, 'no-such-file.md');
  const plain = await svcIn(brain, ['identity', 'set-user', missingFile]);
  assert.equal(plain.code, 1);
  assert.equal(plain.stderr, `svc: ENOENT: no such file or directory, open '${missingFile}'\n`);
  const debug = await svcIn(brain, ['identity', 'set-user', missingFile], '', { SVC_DEBUG: '1' });
  assert.equal(debug.code, 1);
  assert.match(debug.stderr, /\n\s+at /);
  const refused = await svcIn(brain, ['memory', 'search', 'x'], '', { SVC_API_TOKEN: 'not-the-token' });
  assert.equal(refused.code, 1);
  assert.equal(refused.stderr.split('\n').length, 2, refused.stderr);
  assert.match(refused.stderr, /refused the request \(401\)/);
});

test('svc status, start and doctor speak of the brain actually on the port, not of the caller home', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const other = home(t);
  // The caller's home is another one; SVC_API_TOKEN is the brain's token: status names the brain's home and pid.
  const st = await runSvc(['status', '--url', brain.url, '--home', other], { SVC_API_TOKEN: brain.token });
  assert.equal(st.code, 0);
  assert.match(st.stdout, new RegExp(`\\n  home: +${brain.home}\\n  \\(not the brain of ${other}\\)\\n  pid: +${brain.child.pid}\\n$`));
  const json = JSON.parse((await runSvc(['status', '--json', '--url', brain.url, '--home', other], { SVC_API_TOKEN: brain.token })).stdout) as { home: string; pid: number };
  assert.deepEqual([json.home, json.pid], [brain.home, brain.child.pid]);
  // Without a token the brain accepts, status says so instead of naming the caller's home and pid.
  const anon = await runSvc(['status', '--url', brain.url, '--home', other]);
  assert.equal(anon.code, 0);
  assert.match(anon.stdout, /home: +unknown: .*refused the request \(401\)/);
  assert.doesNotMatch(anon.stdout, /pid:/);
  // svc start on a port another home's brain holds: exit 1, and which brain it is.
  const start = await runSvc(['start', '--port', String(brain.port), '--home', other]);
  assert.equal(start.code, 1);
  assert.match(start.stdout, /is taken by a brain that refuses the token of /);
  const started = await runSvc(['start', '--port', String(brain.port), '--home', other], { SVC_API_TOKEN: brain.token });
  assert.equal(started.code, 1);
  assert.match(started.stdout, new RegExp(`is taken by the brain of ${brain.home} \\(pid ${brain.child.pid}\\)`));
  // doctor proves the token on an authenticated route: /health alone answers anyone.
  const doc = JSON.parse((await runSvc(['doctor', '--json', '--url', brain.url, '--home', other], { SVC_API_TOKEN: 'wrong' })).stdout) as { checks: { name: string; ok: boolean; fix?: string }[] };
  const token = doc.checks.find((c) => c.name === 'api token');
  assert.equal(token?.ok, false);
  assert.match(token?.fix ?? '', /SVC_API_TOKEN/);
  const good = JSON.parse((await runSvc(['doctor', '--json', '--url', brain.url, '--home', brain.home])).stdout) as { checks: { name: string; ok: boolean }[] };
  assert.equal(good.checks.find((c) => c.name === 'api token')?.ok, true);
});

/** `svc <word>` in backquotes, or after "fix:", "with:", "run", in the product's sources and docs. */
function suggestedCommands(): { where: string; command: string }[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|json|ya?ml|md|service)$/.test(e.name)) files.push(p);
    }
  };
  for (const d of ['cli', 'daemon', 'protocol', 'docs', 'systemd', 'mesh', 'sync', 'node-agent', 'phone-bridge']) walk(join(ROOT, d));
  files.push(join(ROOT, 'README.md'));
  const out: { where: string; command: string }[] = [];
  for (const f of files) {
    for (const m of readFileSync(f, 'utf8').matchAll(/(?:`|\b(?:fix|with|run|Run|use|try):? )svc ([a-z][a-z-]*)/g)) out.push({ where: f.slice(ROOT.length + 1), command: m[1]! });
  }
  return out;
}

test('every svc command a message, fix or doc suggests exists (no svc pair, svc update, ...)', async () => {
  const listed = new Set(listedCommands((await runSvc(['--help'])).stdout));
  // Not commands, but words after `svc` in prose: the chat banner, the brain's log line, a typo example.
  const prose = new Set(['chat', 'brain', 'stauts']);
  const unknown = suggestedCommands().filter((s) => !listed.has(s.command) && !prose.has(s.command));
  assert.deepEqual(unknown, []);
});

/** The environment of a terminal or container: none of the brain runtime's variables, no re-exec marker. */
const bareEnv = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== RUNTIME_MARKER && !(k in BRAIN_ENV)));

test('svc serve started bare re-executes itself with the brain runtime; signals, exit status and stdio pass through', { timeout: 60_000 }, async (t) => {
  const dir = home(t);
  const port = await freePort();
  const serve = spawn(process.execPath, [SVC, 'serve', '--port', String(port)], { env: { ...bareEnv(), SVC_HOME: dir, SVC_API_TOKEN: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => serve.kill('SIGKILL'));
  let out = '';
  serve.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => serve.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve) => serve.stdout.on('data', () => (/svc brain listening/.test(out) ? resolve() : undefined)));
  const brainPid = Number(readFileSync(join(dir, 'brain.pid'), 'utf8').split('\n')[0]);
  t.after(() => {
    if (existsSync(`/proc/${brainPid}`)) process.kill(brainPid, 'SIGKILL');
  });
  assert.notEqual(brainPid, serve.pid, 'the brain is the re-executed process');
  const argv = readFileSync(`/proc/${brainPid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  assert.deepEqual(argv.slice(1, 1 + BRAIN_NODE_FLAGS.length), [...BRAIN_NODE_FLAGS]);
  const environ = readFileSync(`/proc/${brainPid}/environ`, 'utf8').split('\0');
  for (const [k, v] of Object.entries(BRAIN_ENV)) assert.ok(environ.includes(`${k}=${v}`), `${k}=${v}`);
  assert.match(out, new RegExp(`"pid":${brainPid}`), "the brain's log reaches the caller's stdout");
  serve.kill('SIGTERM');
  assert.equal(await exited, 0);
  assert.match(out, /"msg":"stopped"/);
  assert.ok(!existsSync(join(dir, 'brain.pid')), 'the brain shut down cleanly and released its pid file');
  // An exit status of the brain is the caller's: a home another brain holds exits 75.
  const holder = await startBrain({ home: dir });
  t.after(() => holder.kill());
  const second = await runSvc(['serve', '--port', '0'], { SVC_HOME: dir });
  assert.equal(second.code, 75, second.stderr);
  assert.equal(second.stderr.trim(), `svc: another brain (pid ${holder.child.pid}) is already running on ${dir}`);
});

test('Ctrl-C on a terminal stops a re-executed svc serve once, cleanly (no second signal)', { timeout: 60_000 }, async (t) => {
  const dir = home(t);
  const pty = runInPty(`${process.execPath} ${SVC} serve --port 0`, { ...bareEnv(), SVC_HOME: dir, SVC_API_TOKEN: '' });
  t.after(() => pty.kill());
  await pty.until(/svc brain listening/);
  pty.write('\x03');
  assert.equal(await pty.exited, 0, pty.output());
  assert.match(pty.output(), /"msg":"stopped"/);
  assert.doesNotMatch(pty.output(), /second signal/);
});
