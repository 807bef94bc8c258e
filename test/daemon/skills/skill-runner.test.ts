// daemon/skills/skill-runner.ts with the real sandbox pool (the built worker), a real ToolRegistry and
// PermissionPlane whose hook answers allow, deny or pending, and the brain's SecretScrubber knowing one
// secret: call_tool allowed returns the tool's result scrubbed; denied ends the run as a policy kill;
// pending ends it held with the approval's request id (turn id skill:<id>:<run>); a skill_* tool and a
// tool the manifest does not list are policy kills; a tool failure is a rejection the skill may catch;
// a busy loop is a timeout, an allocation loop a memory kill; every kill reaches `killed`; a run the
// full pool refuses is a 503.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Type } from '@sinclair/typebox';
import { SandboxPool } from '../../../skills/sandbox-pool';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import { defineTool, ToolFailure } from '../../../daemon/kernel/tool';
import { isOutsideTurn, PermissionPlane, type PermissionDecision, type PermissionRequest } from '../../../daemon/kernel/permissions';
import { SecretScrubber, REDACTED } from '../../../daemon/agent/tools/secret-scrubber';
import { SkillRunner, toolNameOf } from '../../../daemon/skills/skill-runner';
import { AppError } from '../../../daemon/kernel/errors';
import type { SkillManifest } from '../../../protocol/skills';
import { manifestOf, MiB, SECRET } from './skills-rig';

interface Runner {
  runner: SkillRunner;
  kills: string[];
  requests: PermissionRequest[];
  set(verdict: PermissionDecision): void;
}

function runnerRig(t: { after(fn: () => unknown): void }, limits = { wallMs: 2000, memoryBytes: 16 * MiB }, maxQueued?: number): Runner {
  const tools = new ToolRegistry();
  tools.register('rig', defineTool({ spec: { name: 'reveal', description: 'Answers a secret.', parameters: Type.Object({ n: Type.Optional(Type.Integer()) }) }, safety: 'active', run: async () => ({ summary: `key ${SECRET}`, data: { key: SECRET, nested: [SECRET] } }) }));
  tools.register('rig', defineTool({ spec: { name: 'broken', description: 'Fails.', parameters: Type.Object({}) }, safety: 'passive', run: async () => Promise.reject(new ToolFailure('no such lamp')) }));
  tools.register('skill:other', defineTool({ spec: { name: 'skill_other', description: 'Another skill.', parameters: Type.Object({}) }, safety: 'passive', run: async () => ({ summary: 'ran' }) }));
  let verdict: PermissionDecision = { verdict: 'allow' };
  const requests: PermissionRequest[] = [];
  const permissions = new PermissionPlane();
  permissions.use('rig', { check: (r) => (requests.push(r), verdict) });
  const pool = new SandboxPool({ size: 1, idleMs: 60_000, ...(maxQueued === undefined ? {} : { maxQueued }) });
  t.after(() => pool.close());
  const kills: string[] = [];
  const runner = new SkillRunner({ executor: pool, tools, permissions, secrets: new SecretScrubber(() => [SECRET]), clock: { now: () => Date.now() }, logger: pino({ level: 'silent' }), limits, killed: (r) => kills.push(r) });
  return { runner, kills, requests, set: (v) => (verdict = v) };
}

const skill = (source: string, tools: string[] = ['reveal', 'broken', 'skill_other', 'missing']) => ({ manifest: manifestOf({ id: 'caller', tools }) as unknown as SkillManifest, source });
const run = (r: Runner, source: string, tools?: string[]) => r.runner.run({ skill: skill(source, tools), params: {}, trigger: 'manual', sessionId: 'dashboard' });

void test('allowed: the tool\'s result reaches the skill scrubbed of the vault secret, and so do the run\'s result and logs', { timeout: 30_000 }, async (t) => {
  const r = runnerRig(t);
  const view = await run(r, `async function main() { const out = await call_tool('reveal', {}); log('got', out); return out; }`);
  assert.equal(view.status, 'ok', JSON.stringify(view));
  assert.deepEqual(view.result, { summary: `key ${REDACTED}`, data: { key: REDACTED, nested: [REDACTED] } });
  assert.ok(!JSON.stringify(view).includes(SECRET));
  assert.equal(r.requests.length, 1);
  const request = r.requests[0]!;
  assert.equal(request.tool, 'reveal');
  assert.equal(request.safety, 'active');
  assert.equal(request.sessionId, 'dashboard');
  assert.ok(request.turnId.startsWith(`skill:caller:${view.run_id}`), request.turnId);
  assert.ok(isOutsideTurn(request.turnId));
  assert.deepEqual(r.kills, []);
  // What the skill sees is scrubbed already: a transformed secret cannot get past the final scrub.
  const reversed = await run(r, `async function main() { const out = await call_tool('reveal', {}); return out.data.key.split('').reverse().join(''); }`);
  assert.equal(reversed.result, [...REDACTED].reverse().join(''));
  // A secret the skill itself produces is scrubbed from its result too.
  const leaked = await run(r, `'${SECRET}'`);
  assert.equal(leaked.result, REDACTED);
});

void test('denied: a policy kill, counted, even when the skill catches the rejection', { timeout: 30_000 }, async (t) => {
  const r = runnerRig(t);
  r.set({ verdict: 'deny', reason: 'reveal is not for skills' });
  const view = await run(r, `async function main() { try { await call_tool('reveal', {}); } catch (e) { return 'caught'; } }`);
  assert.equal(view.status, 'killed', JSON.stringify(view));
  assert.equal(view.kill, 'policy');
  assert.match(view.message!, /reveal is not for skills/);
  assert.deepEqual(r.kills, ['policy']);
});

void test('pending: the run ends held with the approval request id, not a kill', { timeout: 30_000 }, async (t) => {
  const r = runnerRig(t);
  r.set({ verdict: 'pending', requestId: 'apr_42', reason: 'needs approval' });
  const view = await run(r, `async function main() { await call_tool('reveal', {}); return 'ran past the hold'; }`);
  assert.equal(view.status, 'held', JSON.stringify(view));
  assert.equal(view.request_id, 'apr_42');
  assert.match(view.message!, /apr_42/);
  assert.deepEqual(r.kills, []);
});

void test('a skill_* tool, and a tool the manifest does not list, are policy kills that never reach the plane', { timeout: 30_000 }, async (t) => {
  const r = runnerRig(t);
  const recursive = await run(r, `async function main() { return call_tool('skill_other', {}); }`);
  assert.equal(recursive.kill, 'policy', JSON.stringify(recursive));
  assert.match(recursive.message!, /cannot run another skill/);
  const undeclared = await run(r, `async function main() { return call_tool('reveal', {}); }`, ['broken']);
  assert.equal(undeclared.kill, 'policy', JSON.stringify(undeclared));
  assert.deepEqual(r.requests, []);
  assert.deepEqual(r.kills, ['policy', 'policy']);
});

void test('a tool that fails, a listed tool the brain lacks and bad arguments reject call_tool; the skill may catch each', { timeout: 30_000 }, async (t) => {
  const r = runnerRig(t);
  const view = await run(
    r,
    `async function main() {
       const out = [];
       for (const [name, args] of [['broken', {}], ['missing', {}], ['reveal', { n: 'x' }]]) {
         try { await call_tool(name, args); out.push('no error'); } catch (e) { out.push(String(e.message ?? e)); }
       }
       return out;
     }`,
  );
  assert.equal(view.status, 'ok', JSON.stringify(view));
  const [broken, missing, badArgs] = view.result as string[];
  assert.match(broken!, /no such lamp/);
  assert.match(missing!, /no tool named missing/);
  assert.match(badArgs!, /invalid arguments for reveal/);
  assert.deepEqual(r.requests.map((q) => q.tool), ['broken']);
});

void test('a busy loop is killed as timeout and an allocation loop as memory; each kill is counted once', { timeout: 30_000 }, async (t) => {
  const r = runnerRig(t, { wallMs: 1500, memoryBytes: 8 * MiB });
  const spin = await run(r, 'while (true) {}');
  assert.equal(spin.kill, 'timeout', JSON.stringify(spin));
  const bomb = await run(r, 'let s = "x"; for (;;) s += s;');
  assert.equal(bomb.kill, 'memory', JSON.stringify(bomb));
  const thrown = await run(r, 'throw new TypeError("no such city")');
  assert.equal(thrown.kill, 'error');
  assert.deepEqual(r.kills, ['timeout', 'memory', 'error']);
});

void test('a full pool is a 503 UNAVAILABLE (try again), not an internal error; the run it refused is no kill', { timeout: 30_000 }, async (t) => {
  const r = runnerRig(t, { wallMs: 500, memoryBytes: 8 * MiB }, 0);
  const first = run(r, 'while (true) {}');
  await assert.rejects(run(r, '1'), (err: unknown) => err instanceof AppError && err.status === 503 && err.code === 'UNAVAILABLE');
  assert.equal((await first).kill, 'timeout');
  assert.deepEqual(r.kills, ['timeout']);
  assert.equal((await run(r, '2')).result, 2, 'the pool takes runs again once free');
});

void test('toolNameOf: skill_ and the id with - as _', () => {
  assert.equal(toolNameOf('unit-convert'), 'skill_unit_convert');
  assert.equal(toolNameOf('a'), 'skill_a');
});
