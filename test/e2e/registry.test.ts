// The marketplace registry black-box, on the built CLI: `svc registry serve` as a process on loopback
// (its reviewer token printed once and kept 0600), `svc publish` of a skill and a daemon (submitted and
// private: not listed, not installable), reviews with and without the reviewer token, the listing after
// approval, a download whose sha256 and detached signature an independent Ed25519 check accepts, a
// tampered upload refused, and `svc install` into a real brain: refused until the brain trusts the
// publisher key, then installed through POST /api/skills/install and POST /api/daemons/install. A brain
// with the registry capability enabled serves the same API, reviewed with its own API token.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SVC, startBrain } from '../helpers/brain-process';
import { runSvc, waitForLine } from './fixtures/processes';

const scratch = (t: TestContext): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-registry-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** `svc registry serve --port 0` on `dir`: its URL, the reviewer token it printed, and a stop that returns the exit code. */
async function serveRegistry(t: TestContext, dir: string) {
  const child = spawn(process.execPath, [SVC, 'registry', 'serve', '--dir', dir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const url = /listening on (http:\/\/\S+)/.exec(await waitForLine(lines, /listening on http/))![1]!;
  const token = /reviewer token .*: (\S+)$/.exec(await waitForLine(lines, /reviewer token/))![1]!;
  return { url, token, lines, stop: async () => (child.kill('SIGTERM'), exited) };
}

function writeSkill(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const manifest = { id: 'hello-skill', name: 'Hello', version: '1.0.0', description: 'Says hello', entry: 'main.js', params: { type: 'object' }, permissions: { network: { allow: [] }, tools: [] }, triggers: [{ type: 'manual' }] };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  writeFileSync(join(dir, 'main.js'), 'export default function run() { return "hi"; }\n');
}

function writeDaemon(dir: string): void {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ node_id: 'garden-pump', version: '0.1.0', entry: 'bin/run.js', brand: { name: 'Garden Pump' } }));
  writeFileSync(join(dir, 'bin', 'run.js'), 'console.log("pump");\n');
}

/** Ed25519 over `svc-artifact-v1\n<hex sha256>` (docs/signing.md "Detached signatures"), with node:crypto only. */
function independentlyValid(bytes: Uint8Array, sig: string, publicKey: string): boolean {
  const sha = createHash('sha256').update(bytes).digest('hex');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey, 'base64').toString('base64url') }, format: 'jwk' });
  return verify(null, Buffer.from(`svc-artifact-v1\n${sha}`), key, Buffer.from(sig, 'base64'));
}

test('svc registry serve: publish → private → review → listed → download verifies → svc install into a brain that trusts the publisher', async (t) => {
  const dir = scratch(t);
  const registry = await serveRegistry(t, join(dir, 'registry'));
  assert.equal(statSync(join(dir, 'registry', 'reviewer-token')).mode & 0o777, 0o600);
  assert.equal(readFileSync(join(dir, 'registry', 'reviewer-token'), 'utf8').trim(), registry.token);
  const second = await runSvc(['registry', 'serve', '--dir', join(dir, 'registry'), '--port', '0']);
  assert.equal(second.code, 1, 'one server per directory');
  assert.match(second.stderr, /another svc registry serve \(pid \d+\) is running/);
  const brain = await startBrain();
  t.after(() => brain.stop());
  const env = { SVC_HOME: brain.home, SVC_URL: brain.url, SVC_REGISTRY_URL: registry.url };
  const reviewer = { ...env, SVC_REGISTRY_TOKEN: registry.token };
  writeSkill(join(dir, 'skill'));
  writeDaemon(join(dir, 'daemon'));

  assert.equal((await runSvc(['publish'], env)).code, 2);
  assert.equal((await runSvc(['publish', '--skill', join(dir, 'skill'), '--daemon', join(dir, 'daemon')], env)).code, 2);
  const published = await runSvc(['publish', '--skill', join(dir, 'skill')], env);
  assert.equal(published.code, 0, published.stderr);
  assert.match(published.stdout, /^state: submitted$/m);
  assert.match(published.stdout, /^visibility: private$/m);
  const skillId = /^id: (\S+)$/m.exec(published.stdout)![1]!;

  assert.deepEqual(JSON.parse((await runSvc(['marketplace', '--json'], env)).stdout), { items: [] });
  const early = await runSvc(['install', 'hello-skill'], env);
  assert.equal(early.code, 1);
  assert.match(early.stderr, /not installable until reviewed/);
  const unknown = await runSvc(['install', 'no-such-skill'], env);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no skill or daemon named "no-such-skill"/);
  assert.equal((await runSvc(['marketplace', 'review'], env)).code, 1, 'the queue needs the reviewer token');

  const queue = JSON.parse((await runSvc(['marketplace', 'review', '--json'], reviewer)).stdout) as { submissions: { submission_id: string; name: string }[] };
  assert.deepEqual(queue.submissions.map((s) => s.name), ['hello-skill']);
  assert.equal((await runSvc(['marketplace', 'review', queue.submissions[0]!.submission_id, '--approve', '--reject'], reviewer)).code, 2);
  const approved = await runSvc(['marketplace', 'review', queue.submissions[0]!.submission_id, '--approve'], reviewer);
  assert.equal(approved.code, 0, approved.stderr);
  assert.match(approved.stdout, /published \(public\)/);

  const found = JSON.parse((await runSvc(['marketplace', 'search', 'says', 'hello', '--json'], env)).stdout) as { items: { id: string; name: string }[] };
  assert.deepEqual(found.items.map((i) => [i.id, i.name]), [[skillId, 'hello-skill']]);
  const detail = JSON.parse((await runSvc(['marketplace', 'show', skillId, '--json'], env)).stdout) as { current: { download: string; sha256: string; public_key: string; signature: { sig: string } } };
  const download = await fetch(`${registry.url}${detail.current.download}`);
  const bytes = new Uint8Array(await download.arrayBuffer());
  assert.equal(createHash('sha256').update(bytes).digest('hex'), detail.current.sha256);
  assert.equal(download.headers.get('x-svc-sha256'), detail.current.sha256);
  assert.ok(independentlyValid(bytes, detail.current.signature.sig, detail.current.public_key), 'the detached signature verifies independently');

  // A tampered upload: one byte of the tarball changed after signing.
  const tampered = Buffer.from(bytes);
  tampered[tampered.length - 5]! ^= 1;
  const upload = await fetch(`${registry.url}/registry/v1/items`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'skill', archive: tampered.toString('base64'), signature: { alg: 'ed25519', sha256: detail.current.sha256, key_id: (JSON.parse(readFileSync(join(brain.home, 'publisher.key'), 'utf8')) as { key_id: string }).key_id, sig: detail.current.signature.sig }, public_key: detail.current.public_key }),
  });
  assert.equal(upload.status, 400);

  // The brain trusts nobody yet: the install is refused, with what to pin.
  const untrusted = await runSvc(['install', 'hello-skill'], env);
  assert.equal(untrusted.code, 1);
  assert.match(untrusted.stderr, /svc publisher trust \S+ \S+/);
  const trust = /svc publisher trust (\S+) (\S+)/.exec(untrusted.stderr)!;
  assert.equal((await runSvc(['publisher', 'trust', trust[1]!, trust[2]!], env)).code, 0);
  const installed = await runSvc(['install', 'hello-skill'], env);
  assert.equal(installed.code, 0, installed.stderr);
  const skills = (await (await brain.api('/api/skills')).json()) as { skills: { id: string; version: string }[] };
  assert.ok(skills.skills.some((s) => s.id === 'hello-skill' && s.version === '1.0.0'));

  // A daemon, installed by its registry UUID.
  const daemon = await runSvc(['publish', '--daemon', join(dir, 'daemon'), '--json'], env);
  assert.equal(daemon.code, 0, daemon.stderr);
  const daemonId = (JSON.parse(daemon.stdout) as { id: string }).id;
  assert.equal((await runSvc(['marketplace', 'review', 'garden-pump', '--approve'], reviewer)).code, 0);
  const placed = await runSvc(['install', daemonId, '--json'], env);
  assert.equal(placed.code, 0, placed.stderr);
  const daemons = (await (await brain.api('/api/daemons')).json()) as { daemons: { node_id: string; version: string; path: string }[] };
  assert.deepEqual(daemons.daemons.map((d) => [d.node_id, d.version]), [['garden-pump', '0.1.0']]);
  assert.ok(existsSync(join(daemons.daemons[0]!.path, 'bin', 'run.js')));

  assert.equal(await registry.stop(), 0);
});

test('a brain with the registry capability enabled serves it, reviewed with its API token; a Python entry is refused', async (t) => {
  const dir = scratch(t);
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-registry-brain-'));
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ registry: { enabled: true } }));
  const brain = await startBrain({ home });
  t.after(async () => {
    await brain.stop();
    rmSync(home, { recursive: true, force: true });
  });
  const env = { SVC_HOME: brain.home, SVC_URL: brain.url };
  writeDaemon(join(dir, 'daemon'));
  const published = await runSvc(['publish', '--daemon', join(dir, 'daemon')], env);
  assert.equal(published.code, 0, published.stderr);
  assert.match(published.stdout, new RegExp(`to ${brain.url}`));
  const approved = await runSvc(['marketplace', 'review', 'garden-pump', '--approve'], env);
  assert.equal(approved.code, 0, approved.stderr);
  assert.deepEqual((JSON.parse((await runSvc(['marketplace', '--json'], env)).stdout) as { items: { name: string }[] }).items.map((i) => i.name), ['garden-pump']);

  writeFileSync(join(dir, 'daemon', 'manifest.json'), JSON.stringify({ node_id: 'py-node', version: '0.1.0', entry: 'impl.py' }));
  const python = await runSvc(['publish', '--daemon', join(dir, 'daemon')], env);
  assert.equal(python.code, 1);
  assert.match(python.stderr, /impl\.py is not supported/);
});
