// svc publisher: init makes the publisher key once (0600) and a second init says it is there and keeps
// it; show prints this machine's identity and the keys a loopback stand-in for the brain trusts, and
// still prints the identity when no brain answers; trust and untrust send their calls and print the
// outcome; a damaged key file and the brain's refusals are exit 1 with the reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publisherInit, publisherShow, publisherTrust, publisherUntrust } from '../../../cli/commands/publisher';
import type { Connection } from '../../../cli/connection';
import { PUBLISHER_KEY_FILE, readPublisherKey } from '../../../signing/publisher-key';
import { fakeBrain, io } from '../../helpers/cli-rig';

const ACME = 'ZJ6nrbLPBzcUsp6MXzcnM4OsK2m/8y7B0t3TkJCY0d8=';

const scratch = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-publisher-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** A loopback address nothing listens on (a port that was free a moment ago). */
async function noBrain(home: string): Promise<Connection> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((ok) => server.close(() => ok()));
  return { url: `http://127.0.0.1:${port}`, token: 't', home };
}

void test('publisher init makes the key 0600 once; the second time says it is there and keeps it', (t) => {
  const home = join(scratch(t), 'home');
  const first = io();
  assert.equal(publisherInit(first.io, { home, json: false }), 0, first.text.err);
  const key = readPublisherKey(home)!;
  const file = join(home, PUBLISHER_KEY_FILE);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(
    first.text.out,
    `publisher key made: ${file}\nkey id: ${key.keyId}\npublic key: ${key.publicKey}\nbrains trust it with: svc publisher trust ${key.keyId} ${key.publicKey}\n`,
  );
  const bytes = readFileSync(file, 'utf8');
  const again = io();
  assert.equal(publisherInit(again.io, { home, json: false }), 0);
  assert.match(again.text.out, /^publisher key already there \(it is made once and never replaced\): /);
  assert.ok(again.text.out.includes(`public key: ${key.publicKey}\n`));
  assert.equal(readFileSync(file, 'utf8'), bytes, 'the key file is untouched');
  const asJson = io();
  assert.equal(publisherInit(asJson.io, { home, json: true }), 0);
  assert.deepEqual(JSON.parse(asJson.text.out), { key_id: key.keyId, public_key: key.publicKey, path: file, created: false });
});

void test('publisher init --json on a new home says created; a damaged key file is exit 1 and left as it was', (t) => {
  const dir = scratch(t);
  const made = io();
  assert.equal(publisherInit(made.io, { home: join(dir, 'a'), json: true }), 0);
  assert.equal((JSON.parse(made.text.out) as { created: boolean }).created, true);
  const home = join(dir, 'b');
  publisherInit(io().io, { home, json: false });
  writeFileSync(join(home, PUBLISHER_KEY_FILE), '{"v": 1}');
  const damaged = io();
  assert.equal(publisherInit(damaged.io, { home, json: false }), 1);
  assert.match(damaged.text.err, /^svc publisher: .*publisher\.key does not hold a publisher key/);
  assert.equal(readFileSync(join(home, PUBLISHER_KEY_FILE), 'utf8'), '{"v": 1}');
});

void test('publisher show with no brain reachable still prints the identity and says why the trusted keys are unknown', async (t) => {
  const home = join(scratch(t), 'home');
  publisherInit(io().io, { home, json: false });
  const key = readPublisherKey(home)!;
  const conn = await noBrain(home);
  const r = io();
  assert.equal(await publisherShow(conn, r.io, { json: false }), 0, r.text.err);
  assert.equal(r.text.out, `publisher key: ${key.keyId}\npublic key: ${key.publicKey}\nfile: ${join(home, PUBLISHER_KEY_FILE)}\n\ntrusted publisher keys: unknown (no brain at ${conn.url})\n`);
  const asJson = io();
  assert.equal(await publisherShow(conn, asJson.io, { json: true }), 0);
  assert.deepEqual(JSON.parse(asJson.text.out), {
    identity: { key_id: key.keyId, public_key: key.publicKey, path: join(home, PUBLISHER_KEY_FILE) },
    trusted: null,
    trusted_unavailable: `no brain at ${conn.url}`,
  });
  const noKey = io();
  assert.equal(await publisherShow({ ...conn, home: join(home, 'elsewhere') }, noKey.io, { json: false }), 0);
  assert.match(noKey.text.out, /^no publisher key in .*elsewhere \(svc publisher init makes one\)$/m);
});

void test('publisher show lists the keys the brain trusts, none with a hint, and a refusal by its status; a damaged key is exit 1', async (t) => {
  const home = join(scratch(t), 'home');
  const answers: [number, unknown][] = [
    [200, { keys: [{ key_id: 'acme', public_key: ACME }] }],
    [200, { keys: [] }],
    [401, { error: { code: 'UNAUTHORIZED', message: 'missing or invalid token', details: null } }],
    [200, { keys: [{ key_id: 'acme', public_key: ACME }] }],
  ];
  const { conn: brain, seen } = await fakeBrain(t, () => answers.shift()!);
  const conn = { ...brain, home };
  const listed = io();
  assert.equal(await publisherShow(conn, listed.io, { json: false }), 0);
  assert.ok(listed.text.out.startsWith(`no publisher key in ${home} (svc publisher init makes one)\n\n`));
  assert.match(listed.text.out, /^trusted publisher keys:\nKEY ID\s+PUBLIC KEY\nacme\s+ZJ6nrbLPBzcUsp6MXzcnM4OsK2m\/8y7B0t3TkJCY0d8=\n$/m);
  const none = io();
  assert.equal(await publisherShow(conn, none.io, { json: false }), 0);
  assert.match(none.text.out, /^trusted publisher keys: none \(svc publisher trust <key_id> <public_key>\)$/m);
  const refused = io();
  assert.equal(await publisherShow(conn, refused.io, { json: false }), 0);
  assert.match(refused.text.out, /^trusted publisher keys: unknown \(the brain answered 401\)$/m);
  const asJson = io();
  assert.equal(await publisherShow(conn, asJson.io, { json: true }), 0);
  assert.deepEqual(JSON.parse(asJson.text.out), { identity: null, trusted: [{ key_id: 'acme', public_key: ACME }] });
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), Array<string>(4).fill('GET /api/publishers/keys'));
  publisherInit(io().io, { home, json: false });
  writeFileSync(join(home, PUBLISHER_KEY_FILE), 'garbage');
  const damaged = io();
  assert.equal(await publisherShow(conn, damaged.io, { json: false }), 1);
  assert.match(damaged.text.err, /does not hold a publisher key \(not JSON\)/);
});

void test('publisher trust and untrust: PUT and DELETE /api/publishers/keys/:key_id, the outcome, and the brain\'s refusal', async (t) => {
  const answers: [number, unknown][] = [
    [200, { key_id: 'acme', public_key: ACME, changed: true }],
    [200, { key_id: 'acme', public_key: ACME, changed: false }],
    [400, { error: { code: 'BAD_REQUEST', message: 'body/public_key must match pattern', details: null } }],
    [200, { key_id: 'acme', removed: true }],
    [404, { error: { code: 'NOT_FOUND', message: 'publisher key "acme" not found', details: null } }],
  ];
  const { conn, seen } = await fakeBrain(t, () => answers.shift()!);
  const trusted = io();
  assert.equal(await publisherTrust(conn, trusted.io, { keyId: 'acme', publicKey: ACME, json: false }), 0);
  assert.equal(trusted.text.out, 'trusted acme: skills and apps it signs install here\n');
  assert.deepEqual(seen[0], { method: 'PUT', url: '/api/publishers/keys/acme', body: { public_key: ACME } });
  const same = io();
  assert.equal(await publisherTrust(conn, same.io, { keyId: 'acme', publicKey: ACME, json: false }), 0);
  assert.equal(same.text.out, 'acme was trusted already with this key\n');
  const bad = io();
  assert.equal(await publisherTrust(conn, bad.io, { keyId: 'acme', publicKey: 'short', json: false }), 1);
  assert.equal(bad.text.err, 'svc: body/public_key must match pattern\n');
  const untrusted = io();
  assert.equal(await publisherUntrust(conn, untrusted.io, { keyId: 'acme', json: true }), 0);
  assert.deepEqual(JSON.parse(untrusted.text.out), { key_id: 'acme', removed: true });
  assert.deepEqual(seen[3], { method: 'DELETE', url: '/api/publishers/keys/acme', body: undefined });
  const gone = io();
  assert.equal(await publisherUntrust(conn, gone.io, { keyId: 'acme', json: false }), 1);
  assert.equal(gone.text.err, 'svc: publisher key "acme" not found\n');
});
