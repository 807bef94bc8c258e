// `svc skills`, `svc publisher` and `svc app verify` black-box: the built brain on an empty home and the
// built CLI, driven as a user and a publisher would. The brain lists its first-party skills; the
// publisher makes a key in its own home and signs a skill folder; the brain refuses it (unknown_key,
// with the fix) until the key is trusted, then installs it; runs answer their result, and a run whose
// tool call waits for approval exits 1 naming the request that `svc twin approvals` lists; verify says
// OK, then file_mismatch once main.js changes; an unsigned install is audited; disable, enable and
// remove answer JSON; after untrust and a restart the skill shows status error with the reason; an
// unknown skill is exit 1 with the brain's message and bad --params exit 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { runSvc, type RunResult } from './fixtures/processes';

interface Skill {
  id: string;
  status: string;
}

/** A skill folder under `parent`: manifest.json and main.js. */
function writeSkill(parent: string, id: string, source: string, tools: string[] = []): string {
  const dir = join(parent, id);
  mkdirSync(dir);
  const manifest = {
    id,
    name: `Skill ${id}`,
    version: '1.0.0',
    description: 'Written by a test.',
    entry: 'main.js',
    params: { type: 'object', properties: { name: { type: 'string' } } },
    permissions: { network: { allow: [] }, tools },
    triggers: [{ type: 'manual' }],
  };
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(dir, 'main.js'), source);
  return dir;
}

/** The first-party skills of this source tree (the brain finds skills/builtin above dist/). */
const builtinIds = (): string[] =>
  readdirSync(join(ROOT, 'skills', 'builtin'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);

const ok = (r: RunResult, what: string): RunResult => {
  assert.equal(r.code, 0, `${what}: exit ${String(r.code)}\n${r.stdout}${r.stderr}`);
  return r;
};

void test('a publisher signs a skill, the user trusts it, installs, runs, verifies, and untrusts it', async (t) => {
  const work = tempHome('svc-e2e-skills-cli-');
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const home = join(work, 'brain');
  const pubHome = join(work, 'publisher');
  let brain: BrainProcess = await startBrain({ home });
  t.after(() => brain.stop());
  // The user's CLI reads the token from the brain's home; the publisher's has its own home.
  const svc = (...args: string[]) => runSvc(args, { SVC_HOME: home, SVC_URL: brain.url });
  const pub = (...args: string[]) => runSvc(['--home', pubHome, ...args], { SVC_URL: brain.url, SVC_API_TOKEN: brain.token });

  // The first-party skills, as a table and as JSON.
  const firstParty = builtinIds();
  assert.ok(firstParty.length > 0, 'this tree ships first-party skills');
  const table = ok(await svc('skills'), 'svc skills');
  assert.match(table.stdout, /^ID\s+NAME\s+VERSION\s+STATUS$/m);
  for (const id of firstParty) assert.match(table.stdout, new RegExp(`^${id}\\s`, 'm'), id);
  const listed = JSON.parse(ok(await svc('skills', 'list', '--json'), 'svc skills list --json').stdout) as { skills: Skill[] };
  assert.deepEqual(listed.skills.map((s) => s.id).sort(), [...firstParty].sort());

  // The publisher's key, made once in its home.
  const init = ok(await pub('publisher', 'init', '--json'), 'svc publisher init');
  const identity = JSON.parse(init.stdout) as { key_id: string; public_key: string; created: boolean };
  assert.equal(identity.created, true);
  const again = ok(await pub('publisher', 'init'), 'svc publisher init again');
  assert.match(again.stdout, /already there/);
  assert.ok(again.stdout.includes(identity.public_key));

  // A skill folder, signed under key id acme.
  const greeter = writeSkill(work, 'greeter', 'function main(p) { return { hello: p.name ?? "world" }; }\n');
  const signed = ok(await pub('skills', 'sign', greeter, '--key-id', 'acme'), 'svc skills sign');
  assert.ok(signed.stdout.includes(`svc publisher trust acme ${identity.public_key}`));
  const noKeyId = await pub('skills', 'sign', greeter);
  assert.equal(noKeyId.code, 2);

  // Refused until the key is trusted, with the reason and what to do.
  const refused = await svc('skills', 'install', greeter);
  assert.equal(refused.code, 1, refused.stdout);
  assert.match(refused.stderr, /^svc: not installed: unknown_key: /m);
  assert.match(refused.stderr, /^fix: .*svc publisher trust <key_id> <public_key>$/m);
  ok(await svc('publisher', 'trust', 'acme', identity.public_key), 'svc publisher trust');
  const shown = ok(await pub('publisher'), 'svc publisher');
  assert.ok(shown.stdout.includes(`public key: ${identity.public_key}`));
  assert.match(shown.stdout, new RegExp(`^acme\\s+${identity.public_key.replace(/[+/]/g, '\\$&')}$`, 'm'));
  const installed = ok(await svc('skills', 'install', greeter), 'svc skills install');
  assert.equal(installed.stdout, 'installed greeter 1.0.0 (signed by acme): active\n');

  // A run answers its result.
  const ran = ok(await svc('skills', 'run', 'greeter', '--params', '{"name":"Ada"}'), 'svc skills run');
  assert.match(ran.stdout, /^ok in \d+ ms\nresult: \{"hello":"Ada"\}\n$/);
  const ranJson = JSON.parse(ok(await svc('skills', 'run', 'greeter', '--json'), 'svc skills run --json').stdout) as { status: string; result: unknown };
  assert.deepEqual([ranJson.status, ranJson.result], ['ok', { hello: 'world' }]);

  // A tool call held for approval: exit 1 with the request, which the approval queue lists.
  const shell = writeSkill(work, 'shell-user', 'async function main() { return await call_tool("run_command", { argv: ["echo", "hi"] }); }\n', ['run_command']);
  ok(await pub('skills', 'sign', shell, '--key-id', 'acme'), 'svc skills sign shell-user');
  ok(await svc('skills', 'install', shell), 'svc skills install shell-user');
  const held = await svc('skills', 'run', 'shell-user');
  assert.equal(held.code, 1, held.stderr);
  const requestId = /^held for approval \(request ([^)]+)\)$/m.exec(held.stdout)?.[1];
  assert.ok(requestId, held.stdout);
  assert.ok(held.stdout.includes(`svc twin approvals approve ${requestId}`));
  const approvals = JSON.parse(ok(await svc('twin', 'approvals', '--json'), 'svc twin approvals').stdout) as { request_id: string; tool_name: string; session_id: string }[];
  assert.deepEqual(approvals.map((a) => [a.request_id, a.tool_name, a.session_id]), [[requestId, 'run_command', 'dashboard']]);

  // verify: OK against the keys the brain trusts, file_mismatch once the code changes.
  const envelope = join(greeter, 'manifest.signed.json');
  const verified = ok(await svc('app', 'verify', envelope), 'svc app verify');
  assert.match(verified.stdout, /^OK\nsigned by acme at /);
  appendFileSync(join(greeter, 'main.js'), '// changed after signing\n');
  const tampered = await svc('app', 'verify', envelope);
  assert.equal(tampered.code, 1);
  assert.equal(tampered.stdout, 'file_mismatch\nmain.js is not the file that was signed\n');

  // An unsigned folder installs only on purpose, and the audit log says so.
  const loose = writeSkill(work, 'loose', '"loose";\n');
  assert.equal((await svc('skills', 'install', loose)).code, 1);
  const unsigned = JSON.parse(ok(await svc('skills', 'install', loose, '--allow-unsigned', '--json'), 'install --allow-unsigned').stdout) as { unsigned: boolean; signed_by: string | null };
  assert.deepEqual([unsigned.unsigned, unsigned.signed_by], [true, null]);
  const audit = (await (await brain.api('/api/audit')).json()) as { entries: { tag: string; subject: string }[] };
  assert.deepEqual(audit.entries.filter((e) => e.tag === 'unsigned_install').map((e) => e.subject), ['skill:loose@1.0.0']);

  // disable, enable, remove, each with --json.
  const change = async (action: string): Promise<unknown> => JSON.parse(ok(await svc('skills', action, 'loose', '--json'), action).stdout) as unknown;
  assert.deepEqual(await change('disable'), { id: 'loose', name: 'Skill loose', version: '1.0.0', status: 'disabled' });
  const disabledRun = await svc('skills', 'run', 'loose');
  assert.equal(disabledRun.code, 1);
  assert.match(disabledRun.stderr, /is disabled; enable it first \(svc skills enable loose\)/);
  assert.deepEqual(await change('enable'), { id: 'loose', name: 'Skill loose', version: '1.0.0', status: 'active' });
  assert.deepEqual(await change('remove'), { id: 'loose', removed: true });
  const gone = await svc('skills', 'show', 'loose');
  assert.equal(gone.code, 1);

  // Untrusted, then restarted: the skill it signed is status error with the reason.
  ok(await svc('publisher', 'untrust', 'acme'), 'svc publisher untrust');
  await brain.stop();
  brain = await startBrain({ home });
  const broken = ok(await svc('skills', 'show', 'greeter'), 'svc skills show after restart');
  assert.match(broken.stdout, /^greeter \(greeter\) 1\.0\.0: error — unknown_key: no publisher key is pinned for key id acme$/m);
  const brokenJson = JSON.parse(ok(await svc('skills', 'show', 'greeter', '--json'), 'show --json').stdout) as { status: string; error: string };
  assert.equal(brokenJson.status, 'error');
  assert.match(brokenJson.error, /^unknown_key: /);
  const cannot = await svc('skills', 'run', 'greeter');
  assert.equal(cannot.code, 1);
  assert.match(cannot.stderr, /^svc: skill greeter cannot run: unknown_key: /);

  // An unknown skill, and --params that are not a JSON object.
  const nope = await svc('skills', 'run', 'nope');
  assert.equal(nope.code, 1);
  assert.equal(nope.stderr, 'svc: skill "nope" not found\n');
  for (const params of ['[1]', '{"name":', '42']) {
    const bad = await svc('skills', 'run', 'greeter', '--params', params);
    assert.equal(bad.code, 2, params);
    assert.match(bad.stderr, /^svc: --params is /);
  }
});
