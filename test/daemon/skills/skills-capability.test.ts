// daemon/skills/skills-capability.ts in an in-process brain: it is in the capability list, its settings
// section has its defaults and bounds, svc_sandbox_kills_total starts at zero for every reason and
// counts a run killed as timeout; a skill's tool in the brain's registry calls a privileged tool
// through the approvals capability and ends held with a request that GET /api/approvals lists.
// builtinSkillsDir finds builtin-skills/ beside the bundle or the source tree's skills/builtin/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CAPABILITIES } from '../../../daemon/capabilities';
import { parseSettings, settingsFormat, SettingsError } from '../../../daemon/config/load-settings';
import { builtinSkillsDir, skillsCapability } from '../../../daemon/skills/skills-capability';
import { ToolFailure } from '../../../daemon/kernel/tool';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { newKey, writeSkill } from './skills-rig';

const format = settingsFormat(CAPABILITIES);

void test('settings: memory_mb 64 (8-256), wall_ms 5000 (100-60000), concurrent_runs 1 (1-8), idle_worker_ms 60000; anything else refused with its path', () => {
  assert.ok(CAPABILITIES.includes(skillsCapability));
  const defaults = parseSettings({}, 'settings.json', format) as unknown as { skills: Record<string, unknown> };
  assert.deepEqual(defaults.skills, { memory_mb: 64, wall_ms: 5000, concurrent_runs: 1, idle_worker_ms: 60_000 });
  for (const [section, path] of [
    [{ memory_mb: 7 }, '/skills/memory_mb'],
    [{ memory_mb: 257 }, '/skills/memory_mb'],
    [{ wall_ms: 99 }, '/skills/wall_ms'],
    [{ concurrent_runs: 9 }, '/skills/concurrent_runs'],
    [{ idle_worker_ms: 999 }, '/skills/idle_worker_ms'],
    [{ python: true }, '/skills'],
  ] as const) {
    assert.throws(() => parseSettings({ skills: section }, 'settings.json', format), (err: unknown) => err instanceof SettingsError && err.message.includes(path));
  }
});

function metricValue(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

void test('svc_sandbox_kills_total counts a timeout; a skill tool held for approval fails with the request id, which /api/approvals lists', { timeout: 30_000 }, async (t) => {
  const { brain, token } = await inProcessBrain(t, { file: { skills: { wall_ms: 300 } } });
  const api = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => brain.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const work = mkdtempSync(join(tmpdir(), 'svc-skills-cap-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const before = await brain.metrics.render();
  for (const reason of ['timeout', 'memory', 'error', 'policy']) assert.equal(metricValue(before, `svc_sandbox_kills_total{reason="${reason}"}`), 0, reason);
  const key = newKey();
  await api('PUT', `/api/publishers/keys/${key.keyId}`, { public_key: key.publicKey });
  assert.equal((await api('POST', '/api/skills/install', { path: writeSkill(work, { id: 'spin', source: 'while (true) {}' }, key) })).statusCode, 201);
  const spun = await api('POST', '/api/skills/spin/execute', {});
  assert.equal(spun.json<{ kill: string }>().kill, 'timeout', spun.body);
  assert.equal(metricValue(await brain.metrics.render(), 'svc_sandbox_kills_total{reason="timeout"}'), 1);

  const source = `async function main() { return call_tool('run_command', { argv: ['true'], cwd: '/tmp' }); }`;
  assert.equal((await api('POST', '/api/skills/install', { path: writeSkill(work, { id: 'runner', source, tools: ['run_command'] }, key) })).statusCode, 201);
  const tool = brain.tools.get('skill_runner');
  assert.ok(tool);
  assert.equal(tool.safety, 'active', 'a skill that calls tools is an active tool itself');
  const session = brain.agent.sessions.open();
  await assert.rejects(tool.run({}, { sessionId: session.id, turnId: 'turn-1', specialist: 'general', signal: AbortSignal.timeout(10_000) }), (err: unknown) => err instanceof ToolFailure && /waits for your approval/.test(err.message));
  const approvals = (await api('GET', '/api/approvals')).json<{ approvals: { request_id: string; tool_name: string; session_id: string }[] }>();
  const held = approvals.approvals.filter((a) => a.tool_name === 'run_command');
  assert.equal(held.length, 1, JSON.stringify(approvals));
  assert.equal(held[0]!.session_id, session.id, 'the held call joins the session of the turn that called the skill');
  assert.equal(metricValue(await brain.metrics.render(), 'svc_sandbox_kills_total{reason="policy"}'), 0, 'a held run is not a kill');
});

void test('builtinSkillsDir: builtin-skills/ right beside the module, else skills/builtin/ of the first folder above it with a package.json, never a look-alike folder', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-builtin-dir-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const deep = join(root, 'tree', 'b', 'c');
  mkdirSync(deep, { recursive: true });
  assert.equal(builtinSkillsDir(deep), null, 'no package.json above, no builtin-skills beside');
  mkdirSync(join(root, 'tree', 'b', 'skills', 'builtin'), { recursive: true });
  assert.equal(builtinSkillsDir(deep), null, 'a skills/builtin that is not at a package root is a look-alike');
  writeFileSync(join(root, 'tree', 'package.json'), '{}');
  assert.equal(builtinSkillsDir(deep), null, 'the package root has no skills/builtin');
  mkdirSync(join(root, 'tree', 'skills', 'builtin'), { recursive: true });
  assert.equal(builtinSkillsDir(deep), join(root, 'tree', 'skills', 'builtin'));
  mkdirSync(join(deep, 'builtin-skills'));
  assert.equal(builtinSkillsDir(deep), join(deep, 'builtin-skills'), 'the bundle\'s own folder wins');
});
