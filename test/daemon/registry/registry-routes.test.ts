// The registry's HTTP API in the real app (buildApp) on a real store: publish → not listed, not
// downloadable → approve (admin only) → listed → download with the sha256 and a detached signature that
// verifies against the publisher's key; and the refusals: bytes changed after signing, a signature by
// another key or of another item, a key id that is not the key's own, hostile archives (`../x`, a link),
// a Python entry, another publisher's version of a bound name, unknown ids, a withdrawal not signed by
// the publisher.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { REGISTRY_PREFIX, type ItemDetail, type ItemList, type PublishResult, type Submission, type SubmissionList, type VersionView } from '../../../protocol/registry';
import { PYTHON_REFUSED } from '../../../skills/manifest';
import { packArchive } from '../../../signing/archive';
import { signArtifact, verifyArtifact } from '../../../signing/detached';
import { signMessage } from '../../../signing/ed25519';
import { DOWNLOAD_HEADERS, registryRoutes } from '../../../daemon/registry/registry-routes';
import { withdrawMessage } from '../../../daemon/registry/registry-service';
import { auth, testApp } from '../../helpers/app';
import { daemonBody, daemonFiles, hostileTar, publishBody, publisherKey, skillBody, skillFiles, tempRegistry } from '../../helpers/registry-bundles';

const P = REGISTRY_PREFIX;
const ALICE = publisherKey();
const MALLORY = publisherKey();

async function rig(t: TestContext) {
  const { registry } = tempRegistry(t);
  const { app } = await testApp({ routes: [registryRoutes(registry, 4 * 1024 * 1024)] });
  t.after(() => app.close());
  return app;
}

type App = Awaited<ReturnType<typeof rig>>;
const reasonOf = (body: string): unknown => (JSON.parse(body) as { error: { details: { reason?: unknown } } }).error.details.reason;
const publish = (app: App, body: unknown) => app.inject({ method: 'POST', url: `${P}/items`, payload: body as object });

void test('publish lands submitted and private; approved it is listed and downloads with a digest and signature that verify', async (t) => {
  const app = await rig(t);
  const res = await publish(app, skillBody(ALICE, 'weather', '1.0.0'));
  assert.equal(res.statusCode, 201, res.body);
  const published = res.json<PublishResult>();
  assert.deepEqual({ state: published.state, visibility: published.visibility, name: published.name, kind: published.kind }, { state: 'submitted', visibility: 'private', name: 'weather', kind: 'skill' });

  assert.deepEqual((await app.inject({ url: `${P}/items` })).json<ItemList>().items, [], 'a submission is not listed');
  const before = (await app.inject({ url: `${P}/items/weather` })).json<ItemDetail>();
  assert.deepEqual({ installable: before.installable, current: before.current, versions: before.versions, display_name: before.display_name, description: before.description }, { installable: false, current: null, versions: [], display_name: 'weather', description: '' }, 'a private submission shows only its name');
  const early = await app.inject({ url: `${P}/items/weather/download` });
  assert.equal(early.statusCode, 409);
  assert.equal(reasonOf(early.body), 'not_reviewed');
  assert.match(early.json<{ error: { message: string } }>().error.message, /not installable until reviewed/);

  assert.equal((await app.inject({ url: `${P}/review` })).statusCode, 401, 'the queue is for reviewers');
  assert.equal((await app.inject({ method: 'POST', url: `${P}/review/weather`, payload: { decision: 'approve' } })).statusCode, 401, 'so is a review');
  const queue = (await app.inject({ url: `${P}/review`, headers: auth })).json<SubmissionList>().submissions;
  assert.deepEqual(queue.map((s) => [s.name, s.version, s.key_id]), [['weather', '1.0.0', ALICE.keyId]]);

  const approved = await app.inject({ method: 'POST', url: `${P}/review/${published.submission_id}`, headers: auth, payload: { decision: 'approve' } });
  assert.equal(approved.statusCode, 200, approved.body);
  assert.deepEqual([approved.json<Submission>().state, approved.json<Submission>().visibility], ['published', 'public']);

  const listed = (await app.inject({ url: `${P}/items?q=WEATH` })).json<ItemList>().items;
  assert.deepEqual(listed.map((i) => [i.id, i.name, i.version]), [[published.id, 'weather', '1.0.0']]);
  const detail = (await app.inject({ url: `${P}/items/${published.id}` })).json<ItemDetail>();
  assert.equal(detail.installable, true);
  assert.equal(detail.key_id, ALICE.keyId);

  const download = await app.inject({ url: detail.current!.download! });
  assert.equal(download.statusCode, 200);
  const bytes = download.rawPayload;
  assert.equal(download.headers[DOWNLOAD_HEADERS.sha256], detail.current!.sha256);
  const pins = (id: string) => (id === ALICE.keyId ? ALICE.publicKey : undefined);
  assert.deepEqual(verifyArtifact(bytes, detail.current!.signature, pins), { ok: true, keyId: ALICE.keyId, sha256: detail.current!.sha256 });
  const fromHeaders = { alg: 'ed25519', sha256: String(download.headers[DOWNLOAD_HEADERS.sha256]), key_id: String(download.headers[DOWNLOAD_HEADERS.keyId]), sig: String(download.headers[DOWNLOAD_HEADERS.signature]) };
  assert.equal(verifyArtifact(bytes, fromHeaders, pins).ok, true);
});

void test('refused publishes: bytes changed after signing, another key, another item, a key id not the key\'s own', async (t) => {
  const app = await rig(t);
  const archive = packArchive(skillFiles(ALICE, 'weather', '1.0.0'));
  const tampered = Buffer.from(archive);
  tampered[tampered.length - 10]! ^= 0xff;
  const tamperedRes = await publish(app, { ...publishBody('skill', archive, ALICE), archive: tampered.toString('base64') });
  assert.equal(tamperedRes.statusCode, 400);
  assert.match(tamperedRes.body, /digest_mismatch/);

  // Mallory's signature over Alice's archive, presented with Alice's key: the key id is Mallory's, not the key's.
  const otherKey = await publish(app, { ...publishBody('skill', archive, ALICE), signature: signArtifact(archive, MALLORY) });
  assert.equal(otherKey.statusCode, 400);
  assert.equal(reasonOf(otherKey.body), 'signature');
  // Mallory's signature and key over Alice's archive: the signature verifies, but manifest.signed.json is Alice's.
  const resigned = await publish(app, publishBody('skill', archive, MALLORY));
  assert.equal(resigned.statusCode, 400);
  assert.match(resigned.body, /manifest\.signed\.json is refused \(unknown_key\)/);
  // Alice's signature of another item, sent with this archive.
  const otherItem = packArchive(skillFiles(ALICE, 'other', '1.0.0'));
  const swapped = await publish(app, { ...publishBody('skill', archive, ALICE), signature: signArtifact(otherItem, ALICE) });
  assert.equal(swapped.statusCode, 400);
  assert.match(swapped.body, /digest_mismatch/);
  // A claimed key id that the public key does not derive.
  const claimed = await publish(app, { ...publishBody('skill', archive, ALICE), signature: { ...signArtifact(archive, ALICE), key_id: 'alice' } });
  assert.equal(claimed.statusCode, 400);
  assert.match(claimed.body, /not this public key's id/);
  assert.deepEqual((await app.inject({ url: `${P}/review`, headers: auth })).json<SubmissionList>().submissions, [], 'nothing was stored');
});

void test('hostile archives and manifests are refused at publish, signed or not', async (t) => {
  const app = await rig(t);
  const js = new TextEncoder().encode('x');
  for (const entries of [[{ path: 'manifest.json', type: 'File' as const, body: js }, { path: '../x', type: 'File' as const, body: js }], [{ path: 'evil', type: 'SymbolicLink' as const, linkpath: '/etc/passwd' }], [{ path: '/abs', type: 'File' as const, body: js }]]) {
    const res = await publish(app, publishBody('daemon', hostileTar(entries), ALICE));
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(reasonOf(res.body), 'archive');
  }
  const python = daemonFiles('pump', '1.0.0').map((f) => (f.path === 'manifest.json' ? { ...f, bytes: new TextEncoder().encode(JSON.stringify({ node_id: 'pump', version: '1.0.0', entry: 'impl.py' })) } : f));
  const py = await publish(app, publishBody('daemon', packArchive([...python, { path: 'impl.py', bytes: js }]), ALICE));
  assert.equal(py.statusCode, 400);
  assert.ok(py.json<{ error: { message: string } }>().error.message.includes(PYTHON_REFUSED));
  const unlisted = await publish(app, publishBody('skill', packArchive([...skillFiles(ALICE, 'weather', '1.0.0'), { path: 'extra.js', bytes: js }]), ALICE));
  assert.equal(unlisted.statusCode, 400);
  assert.match(unlisted.body, /extra\.js is in the archive but not in the manifest's files/);
});

void test('a bound name refuses another publisher; unknown ids are 404; a withdrawal must be signed by the publisher', async (t) => {
  const app = await rig(t);
  const first = (await publish(app, daemonBody(ALICE, 'pump', '1.0.0'))).json<PublishResult>();
  assert.equal((await app.inject({ method: 'POST', url: `${P}/review/pump`, headers: auth, payload: { decision: 'approve' } })).statusCode, 200);
  assert.equal((await publish(app, daemonBody(MALLORY, 'pump', '2.0.0'))).statusCode, 403);
  assert.equal((await publish(app, skillBody(ALICE, 'pump', '2.0.0'))).statusCode, 409, 'a name is one kind');
  for (const url of [`${P}/items/nope`, `${P}/items/00000000-0000-4000-8000-000000000000`, `${P}/items/nope/download`, `${P}/items/pump/download?version=9.0.0`]) assert.equal((await app.inject({ url })).statusCode, 404, url);
  assert.equal((await app.inject({ method: 'POST', url: `${P}/review/nope`, headers: auth, payload: { decision: 'approve' } })).statusCode, 404);

  const withdraw = (key: typeof ALICE) => app.inject({ method: 'POST', url: `${P}/items/pump/withdraw`, payload: { version: '1.0.0', key_id: key.keyId, signature: signMessage(key.privateKey, withdrawMessage(first.id, '1.0.0')) } });
  assert.equal((await withdraw(MALLORY)).statusCode, 403);
  const done = await withdraw(ALICE);
  assert.equal(done.statusCode, 200, done.body);
  assert.equal(done.json<VersionView>().state, 'withdrawn');
  assert.deepEqual((await app.inject({ url: `${P}/items` })).json<ItemList>().items, []);
  assert.equal((await app.inject({ url: `${P}/items/pump/download` })).statusCode, 409);
});
