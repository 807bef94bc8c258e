// svc serve started bare re-executes itself with the brain's runtime (cli/brain-runtime.ts), exactly
// once, keeping whatever the caller set itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BRAIN_ENV, BRAIN_NODE_FLAGS, missingRuntime, reexecPlan, RUNTIME_MARKER } from '../../cli/brain-runtime';

const ARGV = ['/usr/bin/node', '/opt/svc/dist/svc.mjs', 'serve', '--port', '9090'];

void test('bare svc serve gets every flag before the script and every variable, plus the marker', () => {
  const plan = reexecPlan([], ARGV, { PATH: '/bin' });
  assert.deepEqual(plan, { args: [...BRAIN_NODE_FLAGS, '/opt/svc/dist/svc.mjs', 'serve', '--port', '9090'], env: { PATH: '/bin', ...BRAIN_ENV, [RUNTIME_MARKER]: '1' } });
});

void test('no re-exec when svc start or the systemd unit already gave the runtime, or after one re-exec', () => {
  assert.equal(reexecPlan([...BRAIN_NODE_FLAGS], ARGV, { ...BRAIN_ENV }), null);
  assert.equal(reexecPlan([], ARGV, { [RUNTIME_MARKER]: '1' }), null);
  assert.equal(reexecPlan([], ARGV, { ...BRAIN_ENV, NODE_OPTIONS: BRAIN_NODE_FLAGS.join(' ') }), null, 'flags in NODE_OPTIONS count');
});

void test("the caller's own values stand: a flag or variable set to another value is not overridden", () => {
  const m = missingRuntime(['--max-semi-space-size=16'], { MALLOC_ARENA_MAX: '4' });
  assert.deepEqual(m.flags, BRAIN_NODE_FLAGS.filter((f) => !f.startsWith('--max-semi-space-size')));
  assert.equal(m.env.MALLOC_ARENA_MAX, undefined);
  const plan = reexecPlan(['--max-semi-space-size=16', '--inspect'], ARGV, { MALLOC_ARENA_MAX: '4' });
  assert.ok(plan);
  assert.deepEqual(plan.args.slice(-6), ['--max-semi-space-size=16', '--inspect', '/opt/svc/dist/svc.mjs', 'serve', '--port', '9090']);
  assert.equal(plan.env.MALLOC_ARENA_MAX, '4');
});

void test('property: a re-executed process never re-executes again, and then has the whole runtime', () => {
  const flag = fc.constantFrom(...BRAIN_NODE_FLAGS, '--inspect', '--max-old-space-size=64');
  const variable = fc.constantFrom(...Object.keys(BRAIN_ENV), 'PATH', 'HOME');
  fc.assert(
    fc.property(fc.uniqueArray(flag), fc.dictionary(variable, fc.constantFrom('1', '32768', '/x')), (execArgv, env) => {
      const plan = reexecPlan(execArgv, ARGV, env);
      if (!plan) return;
      const childExecArgv = plan.args.slice(0, plan.args.indexOf(ARGV[1]!));
      assert.equal(reexecPlan(childExecArgv, ARGV, plan.env), null);
      const rest = missingRuntime(childExecArgv, plan.env);
      assert.deepEqual(rest, { flags: [], env: {} });
    }),
  );
});
