// daemon/skills/skills.ts on real parts (skills-rig.ts): installs of signed and unsigned skills (the
// audit entry of an unsigned one is committed before its files land), 409 for the same or an older
// version, an upgrade keeping the disabled flag, removal, first-party skills that cannot be removed or
// replaced, the tool skill_<id> coming and going with its skill, params checked against the manifest
// (400), and a restart over the same home: installed skills come back, a skill whose files changed on
// disk or whose publisher key is no longer trusted turns to error with the reason, staging leftovers
// are swept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, UnverifiedManifestError } from '../../../daemon/kernel/errors';
import { BUILTIN } from '../../../daemon/skills/skills';
import { packArchive } from '../../../signing/archive';
import { MAX_ENTRY_BYTES } from '../../../skills/manifest';
import { newKey, skillsRig, writeSkill, manifestOf } from './skills-rig';

const rejectsWith = async (p: Promise<unknown>, status: number, includes?: string): Promise<void> => {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.status, status, err.message);
    if (includes) assert.ok(err.message.includes(includes), err.message);
    return true;
  });
};

void test('a signed skill installs from its folder: active, signed_by its key id, its tool skill_<id> owned by skill:<id>, and it runs', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  rig.trust(key);
  const dir = writeSkill(rig.work, { id: 'hello-world' }, key);
  const result = await rig.skills.install({ path: dir }, 'admin');
  assert.deepEqual(result, { skill: { id: 'hello-world', name: 'Skill hello-world', version: '1.0.0', status: 'active' }, signed_by: key.keyId, unsigned: false, upgraded_from: null });
  assert.equal(rig.tools.ownerOf('skill_hello_world'), 'skill:hello-world');
  assert.deepEqual(rig.skills.list(), [result.skill]);
  const detail = rig.skills.detail('hello-world');
  assert.equal(detail.signed_by, key.keyId);
  assert.equal(detail.source, 'path');
  assert.equal(detail.tool, 'skill_hello_world');
  const run = await rig.skills.execute('hello-world', { name: 'Ada' }, 'manual', 'dashboard');
  assert.equal(run.status, 'ok', JSON.stringify(run));
  assert.deepEqual(run.result, { hello: 'Ada' });
  assert.equal(rig.skills.detail('hello-world').recent_runs[0]!.run_id, run.run_id);
  assert.deepEqual(rig.audit.list({ limit: 10 }), [], 'a signed install is not audited');
});

void test('unsigned: refused with reason unsigned; with allow_unsigned admitted, and the unsigned_install entry exists before the files land', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const dir = writeSkill(rig.work, { id: 'loose' });
  await assert.rejects(rig.skills.install({ path: dir }, 'admin'), (err: unknown) => err instanceof UnverifiedManifestError && err.reason === 'unsigned');
  assert.equal(existsSync(join(rig.home, 'skills', 'loose')), false);
  assert.deepEqual(rig.audit.list({ limit: 10 }), []);
  // Watch the audit write: when it is committed, the skill's folder must not exist yet.
  const record = rig.audit.record.bind(rig.audit);
  let folderWhenAudited: boolean | undefined;
  rig.audit.record = async (entry) => {
    const id = await record(entry);
    folderWhenAudited = existsSync(join(rig.home, 'skills', 'loose'));
    return id;
  };
  const result = await rig.skills.install({ path: dir, allow_unsigned: true }, 'admin');
  assert.equal(folderWhenAudited, false, 'the audit entry is committed before the skill is placed');
  assert.equal(result.unsigned, true);
  assert.equal(result.signed_by, null);
  const entries = rig.audit.list({ limit: 10 });
  assert.equal(entries.length, 1);
  assert.equal(entries[0]!.tag, 'unsigned_install');
  assert.equal(entries[0]!.actor, 'admin');
  assert.equal(entries[0]!.subject, 'skill:loose@1.0.0');
  assert.deepEqual(entries[0]!.details, { source: dir });
});

void test('an unsigned install whose audit entry cannot be written leaves nothing installed', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const dir = writeSkill(rig.work, { id: 'loose' });
  rig.audit.record = () => Promise.reject(new Error('disk full'));
  await assert.rejects(rig.skills.install({ path: dir, allow_unsigned: true }, 'admin'), /disk full/);
  assert.equal(existsSync(join(rig.home, 'skills', 'loose')), false);
  assert.deepEqual(rig.skills.list(), []);
  assert.equal(rig.tools.get('skill_loose'), undefined);
});

void test('409 for the same or an older version; a newer one upgrades and keeps the disabled flag', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  rig.trust(key);
  await rig.skills.install({ path: writeSkill(rig.work, { id: 'lamp', version: '1.2.0' }, key) }, 'admin');
  await rejectsWith(rig.skills.install({ path: writeSkill(rig.work, { id: 'lamp', version: '1.2.0' }, key) }, 'admin'), 409, 'already installed');
  await rejectsWith(rig.skills.install({ path: writeSkill(rig.work, { id: 'lamp', version: '1.2.0-rc.1' }, key) }, 'admin'), 409);
  await rejectsWith(rig.skills.install({ path: writeSkill(rig.work, { id: 'lamp', version: '1.1.9' }, key) }, 'admin'), 409);
  assert.deepEqual(await rig.skills.setEnabled('lamp', false), { id: 'lamp', name: 'Skill lamp', version: '1.2.0', status: 'disabled' });
  assert.equal(rig.tools.get('skill_lamp'), undefined, 'a disabled skill offers no tool');
  const up = await rig.skills.install({ path: writeSkill(rig.work, { id: 'lamp', version: '1.10.0', source: 'function main() { return 2; }' }, key) }, 'admin');
  assert.equal(up.upgraded_from, '1.2.0');
  assert.deepEqual(up.skill, { id: 'lamp', name: 'Skill lamp', version: '1.10.0', status: 'disabled' });
  assert.equal(rig.tools.get('skill_lamp'), undefined);
  await rig.skills.setEnabled('lamp', true);
  assert.ok(rig.tools.get('skill_lamp'));
  const run = await rig.skills.execute('lamp', {}, 'manual', 'dashboard');
  assert.equal(run.result, 2, 'the new code runs');
  assert.deepEqual(readdirSync(join(rig.home, 'skills')).sort(), ['lamp'], 'no staging or old folder is left');
});

void test('remove: the skill, its tool and its folder go; an unknown id is 404', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  rig.trust(key);
  await rig.skills.install({ path: writeSkill(rig.work, { id: 'gone' }, key) }, 'admin');
  assert.ok(rig.tools.get('skill_gone'));
  await rig.skills.remove('gone');
  assert.equal(rig.tools.get('skill_gone'), undefined);
  assert.equal(existsSync(join(rig.home, 'skills', 'gone')), false);
  assert.deepEqual(rig.skills.list(), []);
  assert.equal(rig.store.get('gone'), undefined);
  await rejectsWith(rig.skills.remove('gone'), 404);
  assert.throws(() => rig.skills.detail('gone'), (err: unknown) => err instanceof AppError && err.status === 404);
});

void test('params are checked against the manifest schema (Ajv): a bad call is 400 naming the problem and never runs', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  rig.trust(key);
  const params = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'], additionalProperties: false };
  await rig.skills.install({ path: writeSkill(rig.work, { id: 'counter', params, source: 'function main(p) { return p.n * 2; }' }, key) }, 'admin');
  await rejectsWith(rig.skills.execute('counter', {}, 'manual', 'dashboard'), 400, 'n');
  await rejectsWith(rig.skills.execute('counter', { n: 0 }, 'manual', 'dashboard'), 400, '>= 1');
  await rejectsWith(rig.skills.execute('counter', { n: 2, extra: true }, 'manual', 'dashboard'), 400);
  assert.deepEqual(rig.skills.detail('counter').recent_runs, []);
  assert.equal((await rig.skills.execute('counter', { n: 21 }, 'manual', 'dashboard')).result, 42);
});

void test('first-party skills: listed as builtin, cannot be removed nor replaced by an install (409), can be disabled', { timeout: 30_000 }, async (t) => {
  const builtin = mkdtempSync(join(tmpdir(), 'svc-builtin-'));
  t.after(() => rmSync(builtin, { recursive: true, force: true }));
  mkdirSync(join(builtin, 'clock'));
  writeFileSync(join(builtin, 'clock', 'manifest.json'), JSON.stringify(manifestOf({ id: 'clock', version: '1.0.0' })));
  writeFileSync(join(builtin, 'clock', 'main.js'), 'function main() { return "tick"; }');
  const rig = await skillsRig(t, { builtinDir: builtin });
  assert.deepEqual(rig.skills.list(), [{ id: 'clock', name: 'Skill clock', version: '1.0.0', status: 'active' }]);
  assert.equal(rig.skills.detail('clock').source, BUILTIN);
  assert.equal(rig.tools.ownerOf('skill_clock'), 'skill:clock');
  await rejectsWith(rig.skills.remove('clock'), 409, 'ships with svc');
  await rejectsWith(rig.skills.install({ path: writeSkill(rig.work, { id: 'clock', version: '9.0.0' }), allow_unsigned: true }, 'admin'), 409, 'ships with svc');
  assert.deepEqual(rig.audit.list({ limit: 5 }), []);
  assert.equal((await rig.skills.setEnabled('clock', false)).status, 'disabled');
  await rig.restart();
  assert.equal(rig.skills.list()[0]!.status, 'disabled', 'the disabled flag of a first-party skill survives a restart');
});

void test('restart: installed skills come back active; a changed main.js, a changed manifest and an untrusted key turn theirs to error with the reason', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  const other = newKey();
  rig.trust(key);
  rig.trust(other);
  for (const id of ['steady', 'tampered-code', 'tampered-manifest', 'stripped']) await rig.skills.install({ path: writeSkill(rig.work, { id }, key) }, 'admin');
  await rig.skills.install({ path: writeSkill(rig.work, { id: 'orphaned' }, other) }, 'admin');
  await rig.skills.install({ path: writeSkill(rig.work, { id: 'loose' }), allow_unsigned: true }, 'admin');
  await rig.skills.setEnabled('loose', false);
  writeFileSync(join(rig.home, 'skills', 'tampered-code', 'main.js'), 'function main() { return "evil"; }');
  const manifestPath = join(rig.home, 'skills', 'tampered-manifest', 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { permissions: { tools: string[] } };
  manifest.permissions.tools = ['reboot'];
  writeFileSync(manifestPath, JSON.stringify(manifest));
  rig.pinned.delete(other.keyId);
  rmSync(join(rig.home, 'skills', 'stripped', 'manifest.signed.json'));
  mkdirSync(join(rig.home, 'skills', '.staging-left-over'));
  writeFileSync(join(rig.home, 'skills', '.staging-left-over', 'main.js'), '');
  mkdirSync(join(rig.home, 'skills', '.old-left-over'));

  await rig.restart();
  const status = Object.fromEntries(rig.skills.list().map((s) => [s.id, s.status]));
  assert.deepEqual(status, { steady: 'active', 'tampered-code': 'error', 'tampered-manifest': 'error', orphaned: 'error', stripped: 'error', loose: 'disabled' });
  assert.match(rig.skills.detail('tampered-code').error!, /^file_mismatch: main\.js/);
  assert.match(rig.skills.detail('tampered-manifest').error!, /^manifest_mismatch/);
  assert.match(rig.skills.detail('orphaned').error!, /^unknown_key/);
  assert.match(rig.skills.detail('stripped').error!, /^unsigned/, 'a signed skill stripped of its signature does not pass as unsigned');
  assert.equal(rig.skills.detail('steady').error, null);
  assert.ok(rig.tools.get('skill_steady'));
  for (const id of ['skill_tampered_code', 'skill_tampered_manifest', 'skill_orphaned', 'skill_stripped', 'skill_loose']) assert.equal(rig.tools.get(id), undefined, id);
  await rejectsWith(rig.skills.execute('tampered-code', {}, 'manual', 'dashboard'), 409, 'file_mismatch');
  assert.deepEqual(readdirSync(join(rig.home, 'skills')).filter((n) => n.startsWith('.')), [], 'staging and old folders are swept');
  assert.ok(rig.warnings.some((w) => w.includes('.staging-left-over')));
  // A broken skill may be replaced by the same version (it no longer counts as installed).
  rig.trust(other);
  const again = await rig.skills.install({ path: writeSkill(rig.work, { id: 'tampered-code' }, key) }, 'admin');
  assert.equal(again.skill.status, 'active');
});

void test('restart: a skill whose folder is gone turns to error; a folder without a record is ignored', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  rig.trust(key);
  await rig.skills.install({ path: writeSkill(rig.work, { id: 'vanishing' }, key) }, 'admin');
  rmSync(join(rig.home, 'skills', 'vanishing'), { recursive: true });
  mkdirSync(join(rig.home, 'skills', 'stray'));
  await rig.restart();
  assert.deepEqual(rig.skills.list(), [{ id: 'vanishing', name: 'vanishing', version: '1.0.0', status: 'error' }]);
  assert.ok(rig.skills.detail('vanishing').error);
  assert.ok(rig.warnings.some((w) => w.includes('stray')));
});

void test('restart: an installed skill whose id a newer build ships as a first-party skill is shadowed by it, and the brain still starts', { timeout: 30_000 }, async (t) => {
  const builtin = mkdtempSync(join(tmpdir(), 'svc-builtin-'));
  t.after(() => rmSync(builtin, { recursive: true, force: true }));
  const rig = await skillsRig(t, { builtinDir: builtin });
  const key = newKey();
  rig.trust(key);
  await rig.skills.install({ path: writeSkill(rig.work, { id: 'clock', version: '1.0.0', source: 'function main() { return "installed"; }' }, key) }, 'admin');
  // The next build ships a first-party `clock`.
  mkdirSync(join(builtin, 'clock'));
  writeFileSync(join(builtin, 'clock', 'manifest.json'), JSON.stringify(manifestOf({ id: 'clock', version: '2.0.0' })));
  writeFileSync(join(builtin, 'clock', 'main.js'), 'function main() { return "first-party"; }');
  await rig.restart();
  assert.deepEqual(rig.skills.list(), [{ id: 'clock', name: 'Skill clock', version: '2.0.0', status: 'active' }]);
  assert.equal(rig.skills.detail('clock').source, BUILTIN);
  assert.equal((await rig.skills.execute('clock', {}, 'manual', 'dashboard')).result, 'first-party');
});

void test('two installs of the same skill at once: one installs, the other is a 409; the skill is active with one tool', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  rig.trust(key);
  const dirs = [writeSkill(rig.work, { id: 'twin' }, key), writeSkill(rig.work, { id: 'twin' }, key)];
  const outcomes = await Promise.allSettled(dirs.map((path) => rig.skills.install({ path }, 'admin')));
  assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected'], JSON.stringify(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))));
  const failed = outcomes.find((o) => o.status === 'rejected')!;
  assert.ok(failed.reason instanceof AppError && failed.reason.status === 409, String(failed.reason));
  assert.deepEqual(rig.skills.list(), [{ id: 'twin', name: 'Skill twin', version: '1.0.0', status: 'active' }]);
  assert.equal(rig.tools.ownerOf('skill_twin'), 'skill:twin');
  assert.equal((await rig.skills.execute('twin', {}, 'manual', 'dashboard')).status, 'ok');
});

void test('a schedule whose cron expression does not parse is refused at install (400) and installs nothing', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  rig.trust(key);
  const dir = writeSkill(rig.work, { id: 'bad-cron', triggers: [{ type: 'schedule', cron: 'every monday at noon' }] }, key);
  await rejectsWith(rig.skills.install({ path: dir }, 'admin'), 400, 'cron');
  assert.deepEqual(rig.skills.list(), []);
  assert.equal(existsSync(join(rig.home, 'skills', 'bad-cron')), false);
  await rig.restart();
  assert.deepEqual(rig.skills.list(), []);
});

void test('an every_seconds past what a timer can hold (24.8 days) is refused at install: Node would run it every millisecond', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  rig.trust(key);
  const dir = writeSkill(rig.work, { id: 'monthly', triggers: [{ type: 'schedule', every_seconds: 3_000_000 }] }, key);
  await rejectsWith(rig.skills.install({ path: dir }, 'admin'), 400, 'every_seconds');
  assert.deepEqual(rig.skills.list(), []);
  const ok = writeSkill(rig.work, { id: 'monthly', triggers: [{ type: 'schedule', every_seconds: 2_147_483 }] }, key);
  assert.equal((await rig.skills.install({ path: ok }, 'admin')).skill.status, 'active');
  assert.deepEqual(rig.skills.detail('monthly').recent_runs, []);
});

void test('a .tar.gz whose main.js is larger than a skill folder may hold is refused at install, not admitted to break at the next start', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  rig.trust(key);
  const big = `function main() { return 1; }\n//${'x'.repeat(MAX_ENTRY_BYTES)}`;
  const dir = writeSkill(rig.work, { id: 'bulky', source: big }, key);
  const tgz = join(rig.work, 'bulky.tar.gz');
  writeFileSync(tgz, packArchive(readdirSync(dir).map((name) => ({ path: name, bytes: readFileSync(join(dir, name)) }))));
  await rejectsWith(rig.skills.install({ path: dir }, 'admin'), 400, 'larger than');
  await rejectsWith(rig.skills.install({ path: tgz }, 'admin'), 400, 'larger than');
  assert.deepEqual(rig.skills.list(), []);
});
