// svc skills against a loopback HTTP server that answers like /api/skills: the list, a skill's detail
// and a run's outcome as text (held runs name the approval command); --params is a JSON object or exit 2
// without a call (fast-check: any object round-trips, arrays, scalars and broken JSON are refused);
// install sends an absolute path (relative to the CLI's folder) or the URL as given, and a refusal of
// trust prints the reason and its fix; sign adds the file digests to a real folder's manifest and
// writes an envelope that verifies, refuses a folder missing its entry (1) and a missing --key-id (2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describeDetail, describeList, describeRun, installBody, parseParams, skillsChange, skillsInstall, skillsList, skillsRun, skillsShow, skillsSign } from '../../../cli/commands/skills';
import type { SkillDetail, SkillRunView } from '../../../protocol/skills';
import { PUBLISHER_KEY_FILE, readPublisherKey } from '../../../signing/publisher-key';
import { SIGNED_MANIFEST_FILE, verifySignedManifestText } from '../../../signing/signed-manifest';
import { fakeBrain, io } from '../../helpers/cli-rig';

const T0 = 1_780_000_000; // epoch seconds
const run = (over: Partial<SkillRunView>): SkillRunView => ({ run_id: 'run_1', trigger: 'manual', started_at: T0, status: 'ok', duration_ms: 12, ...over });
const manifest = {
  id: 'unit-convert',
  name: 'Unit conversion',
  version: '1.0.0',
  description: 'Converts between units offline.',
  entry: 'main.js',
  params: { type: 'object', properties: { value: { type: 'number' } } },
  permissions: { network: { allow: ['api.example.org'] }, tools: ['echo'] },
  triggers: [{ type: 'manual' }],
};
const detail = (over: Partial<SkillDetail> = {}): SkillDetail => ({
  id: 'unit-convert',
  name: 'Unit conversion',
  version: '1.0.0',
  status: 'active',
  manifest,
  source: 'path',
  signed_by: 'acme',
  unsigned: false,
  error: null,
  tool: 'skill_unit-convert',
  installed_at: T0,
  recent_runs: [],
  ...over,
});

const scratch = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-skills-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

// ── describe* ──────────────────────────────────────────────────────────────────────────────────────

void test('describeList: a table of id, name, version and status, or how to install one', () => {
  assert.equal(describeList([]), 'no skills (svc skills install <path|url>)\n');
  const text = describeList([
    { id: 'greeter', name: 'Greeter', version: '1.0.0', status: 'active' },
    { id: 'unit-convert', name: 'Unit conversion', version: '2.1.0-beta.1', status: 'error' },
  ]);
  const lines = text.trimEnd().split('\n');
  assert.equal(lines.length, 3);
  assert.match(lines[0]!, /^ID\s+NAME\s+VERSION\s+STATUS$/);
  assert.match(lines[1]!, /^greeter\s+Greeter\s+1\.0\.0\s+active$/);
  assert.match(lines[2]!, /^unit-convert\s+Unit conversion\s+2\.1\.0-beta\.1\s+error$/);
});

void test('describeRun: ok with its result, a kill with its reason, a held run with the approval command, and the logs', () => {
  assert.equal(describeRun(run({ result: { metres: 1609.344 }, logs: ['converting 1 mi'] })), 'ok in 12 ms\nresult: {"metres":1609.344}\nlog: converting 1 mi\n');
  assert.equal(describeRun(run({})), 'ok in 12 ms\nresult: null\n');
  assert.equal(describeRun(run({ status: 'killed', kill: 'timeout', message: 'the skill ran past its wall time of 5000 ms' })), 'stopped: timeout\nthe skill ran past its wall time of 5000 ms\n');
  const held = describeRun(run({ status: 'held', request_id: 'req-7', message: 'call_tool: run_command waits for your approval' }));
  assert.equal(held.split('\n')[0], 'held for approval (request req-7)');
  assert.ok(held.includes('call_tool: run_command waits for your approval\n'));
  assert.ok(held.includes('svc twin approvals approve req-7'));
});

void test('describeDetail: name, status and its reason, signature, reach, triggers and the recent runs by age', () => {
  const text = describeDetail(detail({ recent_runs: [run({ started_at: T0 - 90, status: 'killed', kill: 'memory', message: 'x'.repeat(300) }), run({ started_at: T0 - 5 })] }), T0 * 1000);
  const lines = text.trimEnd().split('\n');
  assert.equal(lines[0], 'Unit conversion (unit-convert) 1.0.0: active');
  assert.equal(lines[1], 'source: path; signed by acme');
  assert.equal(lines[2], 'tool: skill_unit-convert');
  assert.equal(lines[3], 'about: Converts between units offline.');
  assert.equal(lines[4], 'reaches: api.example.org; tools: echo');
  assert.equal(lines[5], 'triggers: {"type":"manual"}');
  assert.equal(lines[6], 'recent runs:');
  assert.equal(lines[7], `  90 s ago  manual  killed (memory): ${'x'.repeat(120)}`, 'a long message is cut at 120 characters');
  assert.equal(lines[8], '  5 s ago  manual  ok');

  const broken = describeDetail(detail({ status: 'error', error: 'unknown_key: no publisher key is pinned for key id acme', manifest: null }), T0 * 1000);
  assert.equal(broken, 'Unit conversion (unit-convert) 1.0.0: error — unknown_key: no publisher key is pinned for key id acme\nsource: path; signed by acme\ntool: skill_unit-convert\n');
  assert.match(describeDetail(detail({ signed_by: null, unsigned: true }), 0), /^source: path; unsigned \(installed with --allow-unsigned\)$/m);
  const builtin = describeDetail(detail({ signed_by: null, source: 'builtin', manifest: { ...manifest, permissions: { network: { allow: [] }, tools: [] } } }), 0);
  assert.match(builtin, /^source: builtin; ships with svc$/m);
  assert.match(builtin, /^reaches: no network; tools: none$/m);
});

// ── --params ─────────────────────────────────────────────────────────────────────────────────────

void test('parseParams: no --params is {}; any JSON object round-trips', () => {
  assert.deepEqual(parseParams(undefined), { ok: true, params: {} });
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (object) => {
      const text = JSON.stringify(object);
      const parsed = parseParams(text);
      assert.ok(parsed.ok, text);
      assert.equal(JSON.stringify(parsed.params), text);
    }),
  );
});

void test('parseParams: arrays, scalars and null are refused as not an object; broken JSON as not JSON', () => {
  const notObject = fc.oneof(fc.array(fc.jsonValue()), fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null));
  fc.assert(
    fc.property(notObject, (value) => {
      const parsed = parseParams(JSON.stringify(value));
      assert.ok(!parsed.ok);
      assert.match(parsed.problem, /^--params is a JSON object/);
    }),
  );
  const broken = fc.string().filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  });
  fc.assert(
    fc.property(broken, (text) => {
      const parsed = parseParams(text);
      assert.ok(!parsed.ok);
      assert.match(parsed.problem, /^--params is not JSON: /);
    }),
  );
});

// ── install body ─────────────────────────────────────────────────────────────────────────────────

void test('installBody: a path is made absolute against the CLI\'s folder, a URL is kept as given', () => {
  assert.deepEqual(installBody('skills/greeter', false, '/home/ada/work'), { path: '/home/ada/work/skills/greeter' });
  assert.deepEqual(installBody('../greeter.tar.gz', true, '/home/ada/work'), { path: '/home/ada/greeter.tar.gz', allow_unsigned: true });
  assert.deepEqual(installBody('/srv/skills/greeter', false, '/home/ada'), { path: '/srv/skills/greeter' });
  assert.deepEqual(installBody('https://skills.example.org/greeter-1.0.0.tar.gz', false, '/x'), { url: 'https://skills.example.org/greeter-1.0.0.tar.gz' });
  assert.deepEqual(installBody('HTTP://127.0.0.1:8080/g.tar.gz', true, '/x'), { url: 'HTTP://127.0.0.1:8080/g.tar.gz', allow_unsigned: true });
  assert.deepEqual(installBody('greeter', false), { path: resolve(process.cwd(), 'greeter') }, 'the process\'s folder by default');
  const segment = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
  fc.assert(
    fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.array(segment, { minLength: 1, maxLength: 4 }), (cwdParts, relParts) => {
      const cwd = `/${cwdParts.join('/')}`;
      const body = installBody(relParts.join('/'), false, cwd);
      assert.deepEqual(body, { path: `${cwd}/${relParts.join('/')}` });
    }),
  );
});

// ── calls to the brain ───────────────────────────────────────────────────────────────────────────

void test('skills list and show: GET /api/skills[/:id], text or --json; a 404 prints the brain\'s message and exits 1', async (t) => {
  const { conn, seen } = await fakeBrain(t, (s) => {
    if (s.url === '/api/skills') return [200, { skills: [{ id: 'greeter', name: 'Greeter', version: '1.0.0', status: 'disabled' }] }];
    if (s.url === '/api/skills/unit-convert') return [200, detail()];
    return [404, { error: { code: 'NOT_FOUND', message: 'skill "nope" not found', details: null } }];
  });
  const list = io();
  assert.equal(await skillsList(conn, list.io, { json: false }), 0);
  assert.match(list.text.out, /^greeter\s+Greeter\s+1\.0\.0\s+disabled$/m);
  const listJson = io();
  assert.equal(await skillsList(conn, listJson.io, { json: true }), 0);
  assert.deepEqual(JSON.parse(listJson.text.out), { skills: [{ id: 'greeter', name: 'Greeter', version: '1.0.0', status: 'disabled' }] });
  const show = io();
  assert.equal(await skillsShow(conn, show.io, { id: 'unit-convert', json: false, now: () => T0 * 1000 }), 0);
  assert.match(show.text.out, /^Unit conversion \(unit-convert\) 1\.0\.0: active$/m);
  const showJson = io();
  assert.equal(await skillsShow(conn, showJson.io, { id: 'unit-convert', json: true }), 0);
  assert.deepEqual(JSON.parse(showJson.text.out), detail());
  const missing = io();
  assert.equal(await skillsShow(conn, missing.io, { id: 'nope', json: false }), 1);
  assert.equal(missing.text.err, 'svc: skill "nope" not found\n');
  assert.equal(missing.text.out, '');
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), ['GET /api/skills', 'GET /api/skills', 'GET /api/skills/unit-convert', 'GET /api/skills/unit-convert', 'GET /api/skills/nope']);
});

void test('skills run: POST …/execute with the params; exit 0 ok, 1 held or stopped; bad --params is exit 2 with no call', async (t) => {
  const outcomes: Record<string, SkillRunView> = {
    greeter: run({ result: { hello: 'Ada' } }),
    'shell-user': run({ status: 'held', request_id: 'req-1', message: 'call_tool: run_command waits for your approval (request req-1)' }),
    looper: run({ status: 'killed', kill: 'timeout', message: 'the skill ran past its wall time of 5000 ms' }),
  };
  const { conn, seen } = await fakeBrain(t, (s) => {
    const id = /^\/api\/skills\/([^/]+)\/execute$/.exec(s.url)?.[1] ?? '';
    return id in outcomes ? [200, outcomes[id]] : [404, { error: { code: 'NOT_FOUND', message: `skill "${id}" not found`, details: null } }];
  });
  const ok = io();
  assert.equal(await skillsRun(conn, ok.io, { id: 'greeter', params: '{"name":"Ada"}', json: false }), 0);
  assert.equal(ok.text.out, 'ok in 12 ms\nresult: {"hello":"Ada"}\n');
  assert.deepEqual(seen.at(-1), { method: 'POST', url: '/api/skills/greeter/execute', body: { params: { name: 'Ada' } } });
  const held = io();
  assert.equal(await skillsRun(conn, held.io, { id: 'shell-user', json: false }), 1);
  assert.match(held.text.out, /^held for approval \(request req-1\)$/m);
  assert.deepEqual(seen.at(-1)!.body, { params: {} });
  const killed = io();
  assert.equal(await skillsRun(conn, killed.io, { id: 'looper', json: true }), 1);
  assert.deepEqual(JSON.parse(killed.text.out), outcomes.looper);
  const nope = io();
  assert.equal(await skillsRun(conn, nope.io, { id: 'nope', json: false }), 1);
  assert.equal(nope.text.err, 'svc: skill "nope" not found\n');
  const calls = seen.length;
  for (const params of ['[1,2]', '3', 'null', '{"name":', '']) {
    const bad = io();
    assert.equal(await skillsRun(conn, bad.io, { id: 'greeter', params, json: false }), 2, params);
    assert.match(bad.text.err, /^svc: --params is/);
  }
  assert.equal(seen.length, calls, 'no call for bad --params');
});

void test('skills install: the body the brain gets, installed and upgraded lines, a refusal of trust with its fix, other refusals as the brain said', async (t) => {
  const answers: [number, unknown][] = [
    [201, { skill: { id: 'greeter', name: 'Greeter', version: '1.0.0', status: 'active' }, signed_by: 'acme', unsigned: false, upgraded_from: null }],
    [201, { skill: { id: 'greeter', name: 'Greeter', version: '1.1.0', status: 'disabled' }, signed_by: null, unsigned: true, upgraded_from: '1.0.0' }],
    [422, { error: 'UnverifiedManifest', reason: 'unknown_key', message: 'no publisher key is pinned for key id acme' }],
    [422, { error: 'UnverifiedManifest', reason: 'unsigned', message: 'skill greeter has no manifest.signed.json' }],
    [422, { error: 'UnverifiedManifest', reason: 'signature_mismatch', message: 'the signature does not cover this manifest' }],
    [409, { error: { code: 'CONFLICT', message: 'skill greeter is already installed (version 1.1.0); only a newer version upgrades it', details: null } }],
  ];
  const { conn, seen } = await fakeBrain(t, () => answers.shift()!);
  const first = io();
  assert.equal(await skillsInstall(conn, first.io, { source: 'greeter', allowUnsigned: false, json: false }), 0);
  assert.equal(first.text.out, 'installed greeter 1.0.0 (signed by acme): active\n');
  assert.deepEqual(seen[0], { method: 'POST', url: '/api/skills/install', body: { path: resolve('greeter') } });
  const upgrade = io();
  assert.equal(await skillsInstall(conn, upgrade.io, { source: 'https://skills.example.org/g.tar.gz', allowUnsigned: true, json: false }), 0);
  assert.match(upgrade.text.out, /^upgraded greeter 1\.0\.0 → 1\.1\.0 \(unsigned, recorded in the audit log\): disabled\n$/);
  assert.deepEqual(seen[1]!.body, { url: 'https://skills.example.org/g.tar.gz', allow_unsigned: true });
  const unknown = io();
  assert.equal(await skillsInstall(conn, unknown.io, { source: '/s', allowUnsigned: false, json: false }), 1);
  assert.equal(unknown.text.err, 'svc: not installed: unknown_key: no publisher key is pinned for key id acme\nfix: if you trust this publisher, pin their key: svc publisher trust <key_id> <public_key>\n');
  const unsigned = io();
  assert.equal(await skillsInstall(conn, unsigned.io, { source: '/s', allowUnsigned: false, json: false }), 1);
  assert.match(unsigned.text.err, /^fix: sign it \(svc skills sign <dir> --key-id <id>\), or .*--allow-unsigned/m);
  const tampered = io();
  assert.equal(await skillsInstall(conn, tampered.io, { source: '/s', allowUnsigned: false, json: false }), 1);
  assert.equal(tampered.text.err, 'svc: not installed: signature_mismatch: the signature does not cover this manifest\n', 'no fix for a tampered skill');
  const conflict = io();
  assert.equal(await skillsInstall(conn, conflict.io, { source: '/s', allowUnsigned: false, json: true }), 1);
  assert.equal(conflict.text.err, 'svc: skill greeter is already installed (version 1.1.0); only a newer version upgrades it\n');
  assert.equal(conflict.text.out, '');
});

void test('skills remove, enable, disable: the call each makes, its line or --json, and a refusal', async (t) => {
  const { conn, seen } = await fakeBrain(t, (s) => {
    if (s.url.startsWith('/api/skills/builtin-one')) return [409, { error: { code: 'CONFLICT', message: 'skill builtin-one ships with svc; disable it instead (svc skills disable builtin-one)', details: null } }];
    if (s.method === 'DELETE') return [200, { id: 'greeter', removed: true }];
    return [200, { id: 'greeter', name: 'Greeter', version: '1.0.0', status: s.url.endsWith('/disable') ? 'disabled' : 'active' }];
  });
  const outs: string[] = [];
  for (const action of ['disable', 'enable', 'remove'] as const) {
    const r = io();
    assert.equal(await skillsChange(conn, r.io, { id: 'greeter', action, json: false }), 0);
    outs.push(r.text.out);
  }
  assert.deepEqual(outs, ['greeter: disabled\n', 'greeter: active\n', 'removed greeter\n']);
  const asJson = io();
  assert.equal(await skillsChange(conn, asJson.io, { id: 'greeter', action: 'remove', json: true }), 0);
  assert.deepEqual(JSON.parse(asJson.text.out), { id: 'greeter', removed: true });
  const refused = io();
  assert.equal(await skillsChange(conn, refused.io, { id: 'builtin-one', action: 'remove', json: false }), 1);
  assert.match(refused.text.err, /ships with svc; disable it instead/);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), ['POST /api/skills/greeter/disable', 'POST /api/skills/greeter/enable', 'DELETE /api/skills/greeter', 'DELETE /api/skills/greeter', 'DELETE /api/skills/builtin-one']);
});

// ── sign ─────────────────────────────────────────────────────────────────────────────────────────

/** A skill folder with main.js and a helper file the manifest lists (with a stale digest). */
function skillFolder(parent: string): string {
  const dir = join(parent, 'greeter');
  mkdirSync(dir);
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, id: 'greeter', files: { 'words.txt': '0'.repeat(64) } }));
  writeFileSync(join(dir, 'main.js'), 'function main(p) { return { hello: p.name ?? "world" }; }\n');
  writeFileSync(join(dir, 'words.txt'), 'hello\nbonjour\n');
  return dir;
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

void test('skills sign: the manifest gains the digests of the entry and listed files, and the envelope verifies under the key id', (t) => {
  const parent = scratch(t);
  const dir = skillFolder(parent);
  const home = join(parent, 'home');
  const r = io();
  assert.equal(skillsSign(r.io, { dir, keyId: 'acme', home, json: false }), 0, r.text.err);
  const key = readPublisherKey(home)!;
  const signed = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as typeof manifest & { files: Record<string, string> };
  assert.deepEqual(signed.files, { 'main.js': sha256(join(dir, 'main.js')), 'words.txt': sha256(join(dir, 'words.txt')) });
  assert.equal(signed.description, manifest.description, 'the rest of the manifest is kept');
  const envelope = readFileSync(join(dir, SIGNED_MANIFEST_FILE), 'utf8');
  const verdict = verifySignedManifestText(envelope, (id) => (id === 'acme' ? key.publicKey : undefined));
  assert.ok(verdict.ok);
  assert.deepEqual(verdict.manifest, signed);
  assert.ok(r.text.out.includes(`signed: ${join(dir, SIGNED_MANIFEST_FILE)}\n`));
  assert.ok(r.text.out.includes('files: main.js, words.txt\n'));
  assert.ok(r.text.out.includes(`svc publisher trust acme ${key.publicKey}\n`));
  const again = io();
  assert.equal(skillsSign(again.io, { dir, keyId: 'acme', home, json: true }), 0);
  assert.deepEqual(JSON.parse(again.text.out), { path: join(dir, SIGNED_MANIFEST_FILE), key_id: 'acme', public_key: key.publicKey, files: signed.files });
});

void test('skills sign: a missing entry or listed file is exit 1 with no envelope; --key-id missing or invalid is exit 2 before any key is made', (t) => {
  const parent = scratch(t);
  const dir = skillFolder(parent);
  const home = join(parent, 'home');
  for (const keyId of [undefined, '', '-acme', 'has space']) {
    const r = io();
    assert.equal(skillsSign(r.io, { dir, keyId, home, json: false }), 2, String(keyId));
    assert.match(r.text.err, /--key-id is required/);
  }
  assert.equal(existsSync(join(home, PUBLISHER_KEY_FILE)), false, 'no key made');
  rmSync(join(dir, 'main.js'));
  const missing = io();
  assert.equal(skillsSign(missing.io, { dir, keyId: 'acme', home, json: false }), 1);
  assert.match(missing.text.err, /^svc skills sign: main\.js is missing from .* \(the manifest names it\)\n$/);
  assert.equal(existsSync(join(dir, SIGNED_MANIFEST_FILE)), false);
  const noFolder = io();
  assert.equal(skillsSign(noFolder.io, { dir: join(parent, 'nowhere'), keyId: 'acme', home, json: false }), 1);
  assert.match(noFolder.text.err, /^svc skills sign: /);
});
