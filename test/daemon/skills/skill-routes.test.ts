// daemon/skills/skill-routes.ts in an in-process brain with the real capabilities: /api/skills lists
// (spec 2.8 shape), shows, installs (201; 422 {error: "UnverifiedManifest", reason} for an unsigned or
// tampered skill; 409 on a re-install), executes (200 with the run; 400 for bad params), disables and
// enables, and deletes (the tool goes with it); an unknown or malformed id is answered in the spec
// envelope; an allowed unsigned install is in GET /api/audit with the admin as its actor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Static } from '@sinclair/typebox';
import { SkillDetail, SkillList } from '../../../protocol/skills';
import { AuditList } from '../../../protocol/audit';
import { inProcessBrain } from '../../helpers/assembled-brain';
import { newKey, writeSkill } from './skills-rig';

type Api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) => Promise<{ statusCode: number; json(): unknown; body: string }>;

async function started(t: { after(fn: () => unknown): void }): Promise<{ api: Api; work: string; brain: Awaited<ReturnType<typeof inProcessBrain>>['brain'] }> {
  const { brain, token } = await inProcessBrain(t);
  const work = mkdtempSync(join(tmpdir(), 'svc-skill-routes-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const api: Api = (method, url, payload) => brain.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  return { api, work, brain };
}

const envelope = (res: { statusCode: number; json(): unknown; body: string }, status: number, code: string): void => {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json() as { error: { code: string; message: string; details: unknown } };
  assert.equal(body.error.code, code, res.body);
  assert.equal(typeof body.error.message, 'string');
  assert.ok('details' in body.error);
};

void test('install, list, show, execute, disable, enable, delete over /api/skills', { timeout: 30_000 }, async (t) => {
  const { api, work, brain } = await started(t);
  const listed = await api('GET', '/api/skills');
  assert.equal(listed.statusCode, 200);
  assert.ok(TypeCompiler.Compile(SkillList).Check(listed.json()));
  const key = newKey();
  assert.equal((await api('PUT', `/api/publishers/keys/${key.keyId}`, { public_key: key.publicKey })).statusCode, 200);
  const dir = writeSkill(work, { id: 'hello', params: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false } }, key);
  const installed = await api('POST', '/api/skills/install', { path: dir });
  assert.equal(installed.statusCode, 201, installed.body);
  assert.deepEqual(installed.json(), { skill: { id: 'hello', name: 'Skill hello', version: '1.0.0', status: 'active' }, signed_by: key.keyId, unsigned: false, upgraded_from: null });
  // The first-party skills of skills/builtin/ are listed too (in-process, the brain finds the source tree's).
  const base = (listed.json() as SkillListBody).skills;
  const now = (await api('GET', '/api/skills')).json() as SkillListBody;
  assert.deepEqual(now.skills, [...base, { id: 'hello', name: 'Skill hello', version: '1.0.0', status: 'active' as const }].sort((a, b) => a.id.localeCompare(b.id)));
  assert.ok(brain.tools.get('skill_hello'));
  const run = await api('POST', '/api/skills/hello/execute', { params: { name: 'Ada' } });
  assert.equal(run.statusCode, 200, run.body);
  assert.deepEqual((run.json() as { status: string; result: unknown }).result, { hello: 'Ada' });
  envelope(await api('POST', '/api/skills/hello/execute', { params: { age: 3 } }), 400, 'BAD_REQUEST');
  const detail = await api('GET', '/api/skills/hello');
  assert.ok(TypeCompiler.Compile(SkillDetail).Check(detail.json()), detail.body);
  assert.equal((detail.json() as SkillDetail).recent_runs.length, 1);
  envelope(await api('POST', '/api/skills/install', { path: dir }), 409, 'CONFLICT');
  assert.deepEqual((await api('POST', '/api/skills/hello/disable')).json(), { id: 'hello', name: 'Skill hello', version: '1.0.0', status: 'disabled' });
  envelope(await api('POST', '/api/skills/hello/execute', {}), 409, 'CONFLICT');
  assert.equal(brain.tools.get('skill_hello'), undefined);
  assert.equal(((await api('POST', '/api/skills/hello/enable')).json() as { status: string }).status, 'active');
  assert.deepEqual((await api('DELETE', '/api/skills/hello')).json(), { id: 'hello', removed: true });
  assert.equal(brain.tools.get('skill_hello'), undefined);
  envelope(await api('GET', '/api/skills/hello'), 404, 'NOT_FOUND');
  envelope(await api('DELETE', '/api/skills/hello'), 404, 'NOT_FOUND');
  envelope(await api('GET', '/api/skills/Not_An_Id'), 400, 'BAD_REQUEST');
});

void test('unsigned: 422 {error: "UnverifiedManifest", reason: "unsigned"}; allowed: 201 and an unsigned_install audit entry by the admin', { timeout: 30_000 }, async (t) => {
  const { api, work } = await started(t);
  const dir = writeSkill(work, { id: 'loose' });
  const refused = await api('POST', '/api/skills/install', { path: dir });
  assert.equal(refused.statusCode, 422, refused.body);
  const body = refused.json() as { error: string; reason: string; message: string };
  assert.equal(body.error, 'UnverifiedManifest');
  assert.equal(body.reason, 'unsigned');
  assert.match(body.message, /allow-unsigned/);
  assert.deepEqual((await api('GET', '/api/audit')).json(), { entries: [] });
  const admitted = await api('POST', '/api/skills/install', { path: dir, allow_unsigned: true });
  assert.equal(admitted.statusCode, 201, admitted.body);
  const audit = (await api('GET', '/api/audit?tag=unsigned_install')).json() as AuditList;
  assert.ok(TypeCompiler.Compile(AuditList).Check(audit));
  assert.equal(audit.entries.length, 1);
  assert.equal(audit.entries[0]!.actor, 'admin');
  assert.equal(audit.entries[0]!.subject, 'skill:loose@1.0.0');
  // Tampered after signing: 422 with its reason.
  const key = newKey();
  await api('PUT', `/api/publishers/keys/${key.keyId}`, { public_key: key.publicKey });
  const signed = writeSkill(work, { id: 'tampered' }, key);
  writeFileSync(join(signed, 'main.js'), 'function main() { return "evil"; }');
  const tampered = await api('POST', '/api/skills/install', { path: signed });
  assert.equal(tampered.statusCode, 422);
  assert.equal((tampered.json() as { reason: string }).reason, 'file_mismatch');
});

type SkillListBody = Static<typeof SkillList>;
type AuditList = { entries: { tag: string; actor: string; subject: string }[] };
