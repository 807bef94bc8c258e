// run_command with real processes through an assembled brain's registry: argv runs without a shell in
// a granted folder, exit codes and signals come back, a timeout kills the whole process group, output
// is capped and says so, the child's environment holds no vault secret nor the brain's variables, and a
// cwd outside the grants (also through a symlink) is refused. Registered as privileged, so the default
// approval policy asks for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, symlinkSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { commandEnv, RUN_LIMITS, type CommandResult } from '../../../daemon/files/run-command';
import { ApprovalSettings, policyFor } from '../../../daemon/approvals/approval-policy';
import { ToolFailure } from '../../../daemon/kernel/tool';
import { filesBrain } from './files-brain';

const refused = (why: RegExp) => (e: unknown) => e instanceof ToolFailure && why.test(e.message);

async function granted(t: Parameters<typeof filesBrain>[0]) {
  const b = await filesBrain(t);
  const docs = join(b.dir, 'docs');
  await b.grant(docs, { write: true });
  const run = async (args: Record<string, unknown>): Promise<CommandResult> => (await b.call('run_command', { cwd: docs, ...args })).data as CommandResult;
  return { ...b, docs, run };
}

/** True when the process is gone (or a zombie waiting to be reaped: it runs no more). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw e;
  }
}

void test('run_command is registered by the files capability as privileged, so the default policy asks', async (t) => {
  const { brain } = await filesBrain(t);
  const tool = brain.tools.get('run_command');
  assert.equal(tool?.safety, 'privileged');
  assert.equal(brain.tools.ownerOf('run_command'), 'files');
  assert.equal(policyFor(Value.Default(ApprovalSettings, {}) as ApprovalSettings, 'run_command', tool.safety), 'ask');
});

void test('argv runs without a shell in the granted folder; exit code, stderr and not revertible come back', async (t) => {
  const { run, docs } = await granted(t);
  const echo = await run({ argv: ['/bin/echo', 'hello', '$HOME', '; ls'] });
  assert.deepEqual(echo, {
    argv: ['/bin/echo', 'hello', '$HOME', '; ls'],
    cwd: docs,
    exit_code: 0, signal: null, timed_out: false, stdout: 'hello $HOME ; ls\n', stderr: '', truncated: false, output_bytes: 17, revertible: false });
  assert.equal((await run({ argv: ['pwd'] })).stdout, `${docs}\n`);
  const failed = await run({ argv: ['/bin/sh', '-c', 'echo oops >&2; exit 3'] });
  assert.equal(failed.exit_code, 3);
  assert.equal(failed.stderr, 'oops\n');
  await assert.rejects(run({ argv: ['/no/such/program'] }), refused(/cannot be run \(ENOENT\)/));
  await assert.rejects(run({ argv: ['/bin/echo', 'a\0b'] }), refused(/NUL character/));
});

void test('a timeout kills the whole process group and says so', async (t) => {
  const { run } = await granted(t);
  const r = await run({ argv: ['/bin/sh', '-c', 'sleep 300 & echo $!; wait'], timeout_ms: 300 });
  assert.equal(r.timed_out, true);
  assert.equal(r.signal, 'SIGKILL');
  assert.equal(r.exit_code, null);
  const sleeper = Number(r.stdout.trim());
  assert.ok(Number.isInteger(sleeper) && sleeper > 0, r.stdout);
  assert.ok(gone(sleeper), `the sleep child ${sleeper} still runs`);
});

void test('output past the cap is dropped and the result says it was cut', async (t) => {
  const { run } = await granted(t);
  const r = await run({ argv: ['/bin/sh', '-c', `head -c ${RUN_LIMITS.outputBytes} /dev/zero; head -c 1000 /dev/zero >&2`] });
  assert.equal(r.exit_code, 0);
  assert.equal(r.stdout.length + r.stderr.length, RUN_LIMITS.outputBytes);
  assert.equal(r.truncated, true);
  assert.equal(r.output_bytes, RUN_LIMITS.outputBytes + 1000);
});

void test('the environment holds no vault secret and none of the brain\'s variables', async (t) => {
  const { run, brain } = await granted(t);
  const inVault = `sk-vault-${Math.random().toString(36).slice(2)}`;
  const inEnv = `sk-env-${Math.random().toString(36).slice(2)}`;
  brain.vault.set('providers', 'openai', inVault);
  brain.vault.set('channels', 'telegram', inEnv);
  process.env.SVC_TEST_LEAK = inEnv;
  process.env.SVC_TEST_LEAK_TOO = inVault;
  t.after(() => {
    delete process.env.SVC_TEST_LEAK;
    delete process.env.SVC_TEST_LEAK_TOO;
  });
  const r = await run({ argv: ['/usr/bin/env'] });
  assert.equal(r.exit_code, 0);
  assert.ok(!r.stdout.includes(inVault) && !r.stdout.includes(inEnv), r.stdout);
  assert.ok(!r.stdout.includes('SVC_TEST_LEAK'), r.stdout);
  assert.match(r.stdout, /^PATH=/m);
});

void test('a variable whose value holds a secret is dropped (property: no value keeps any secret)', () => {
  const home = userInfo().homedir;
  assert.equal(commandEnv([home]).HOME, undefined);
  assert.equal(commandEnv([home.slice(1, 3) || '/']).HOME, undefined);
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('/usr', 'bin', 'UTF', home)), { maxLength: 5 }), (secrets) => {
      const env = commandEnv(secrets);
      for (const value of Object.values(env)) for (const s of secrets) if (s.length > 0) assert.ok(!value.includes(s), `${value} keeps ${s}`);
    }),
  );
});

void test('a cwd outside the grants, through a symlink to outside, read-only, missing or a file is refused', async (t) => {
  const { run, call, dir, docs, grant } = await granted(t);
  const priv = join(dir, 'private');
  symlinkSync(priv, join(docs, 'door'));
  await assert.rejects(run({ cwd: priv, argv: ['/bin/echo'] }), refused(/outside every granted folder/));
  await assert.rejects(run({ cwd: join(docs, 'door'), argv: ['/bin/echo'] }), refused(/outside every granted folder \(it resolves to /));
  await assert.rejects(run({ cwd: `${docs}/../private`, argv: ['/bin/echo'] }), refused(/outside every granted folder/));
  await grant(priv);
  await assert.rejects(run({ cwd: priv, argv: ['/bin/echo'] }), refused(/granted read-only/));
  await assert.rejects(call('run_command', { argv: ['/bin/echo'] }), refused(/needs a cwd/));
  await assert.rejects(run({ cwd: 'docs', argv: ['/bin/echo'] }), refused(/not an absolute path/));
});

void test('aborting the turn kills the command', async (t) => {
  const { brain, docs } = await granted(t);
  const abort = new AbortController();
  const running = brain.tools.get('run_command')!.run({ argv: ['/bin/sh', '-c', 'echo started; sleep 300'], cwd: docs, timeout_ms: 600_000 }, { sessionId: 's', turnId: 't', specialist: 'general', signal: abort.signal });
  abort.abort();
  const r = (await running).data as CommandResult;
  assert.equal(r.signal, 'SIGKILL');
  assert.equal(r.timed_out, false);
});
