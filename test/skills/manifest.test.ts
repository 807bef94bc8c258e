// skills/manifest.ts: readSkillDir reads a good skill, names every problem of a bad manifest, refuses a
// Python entry with the sentence that says what svc runs, and refuses entries outside the directory,
// symbolic links, missing files and files past their size bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_ENTRY_BYTES, PYTHON_REFUSED, readSkillDir } from '../../skills/manifest';
import { goodManifest } from './skill-fixtures';

function skillDir(t: { after: (fn: () => void) => void }, manifest: unknown, files: Record<string, string> = { 'main.js': 'log(1)' }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-skill-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'manifest.json'), typeof manifest === 'string' ? manifest : JSON.stringify(manifest));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

test('a good skill directory gives its manifest and source', async (t) => {
  const dir = skillDir(t, goodManifest);
  const out = await readSkillDir(dir);
  assert.deepEqual(out, { ok: true, skill: { dir, manifest: goodManifest, source: 'log(1)' } });
});

test('an impl.py entry is refused with what svc runs', async (t) => {
  const out = await readSkillDir(skillDir(t, { ...goodManifest, entry: 'impl.py' }, { 'impl.py': 'print(1)' }));
  assert.equal(out.ok, false);
  assert.deepEqual(!out.ok && out.problems, [`/entry ${PYTHON_REFUSED}`]);
  assert.equal(PYTHON_REFUSED, 'svc runs JavaScript skills in a QuickJS sandbox; impl.py is not supported');
});

test('every problem of a bad manifest is named with its path', async (t) => {
  const out = await readSkillDir(skillDir(t, { ...goodManifest, id: 'Bad Id', version: '1' }));
  const problems = out.ok ? [] : out.problems;
  assert.ok(problems.some((p) => p.startsWith('/id ')), problems.join('; '));
  assert.ok(problems.some((p) => p.startsWith('/version ')), problems.join('; '));
  const notJson = await readSkillDir(skillDir(t, '{ nope'));
  assert.match(notJson.ok ? '' : notJson.problems[0]!, /^manifest.json: not JSON/);
});

test('entries outside the directory, links, missing and oversized files are refused', async (t) => {
  assert.equal((await readSkillDir(skillDir(t, { ...goodManifest, entry: '../main.js' }))).ok, false);
  const missing = await readSkillDir(skillDir(t, goodManifest, {}));
  assert.deepEqual(!missing.ok && missing.problems, ['main.js: missing']);
  const outside = mkdtempSync(join(tmpdir(), 'svc-outside-'));
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(join(outside, 'secret.js'), 'secret');
  const linked = skillDir(t, goodManifest, {});
  symlinkSync(join(outside, 'secret.js'), join(linked, 'main.js'));
  assert.match((await readSkillDir(linked)).ok ? '' : 'refused', /refused/);
  const folder = skillDir(t, goodManifest, {});
  mkdirSync(join(folder, 'main.js'));
  assert.equal((await readSkillDir(folder)).ok, false);
  const big = await readSkillDir(skillDir(t, goodManifest, { 'main.js': 'x'.repeat(MAX_ENTRY_BYTES + 1) }));
  assert.deepEqual(!big.ok && big.problems, [`main.js: larger than ${MAX_ENTRY_BYTES} bytes`]);
  assert.deepEqual(await readSkillDir(join(outside, 'none')), { ok: false, problems: ['manifest.json: missing'] });
});
