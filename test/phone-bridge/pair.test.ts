// phone-bridge pair against an assembled brain on loopback (real HTTP): a PIN is verified first, an
// address that does not answer is skipped for the next, the node key lands 0600 under the node id;
// a URL for another kind, a missing PIN, a wrong PIN and a used token are refused, and nothing is kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { encodePairUrl, parsePairUrl } from '../../mesh/pair-payload';
import type { PairUrlResponse } from '../../protocol/pairing';
import { pairFromUrl, type PairInput } from '../../phone-bridge/pair';
import { inProcessBrain } from '../helpers/assembled-brain';
import { io } from '../helpers/cli-rig';

/** A loopback port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

void test('pair from the URL: PIN first, a dead address skipped, key kept 0600; wrong kind, missing or wrong PIN and a used token refused', async (t) => {
  const b = await inProcessBrain(t);
  const url = `http://127.0.0.1:${(b.brain.app.server.address() as AddressInfo).port}`;
  b.brain.bus.emit({ type: 'access_mode', mode: 'lan', urls: [url], at: 0 });
  const keyDir = join(mkdtempSync(join(tmpdir(), 'svc-phone-pair-')), 'keys');
  t.after(() => rmSync(join(keyDir, '..'), { recursive: true, force: true }));
  const mint = async (query: string): Promise<PairUrlResponse> => (await (await fetch(`${url}/api/devices/pair/url?${query}`, { headers: { authorization: `Bearer ${b.token}` } })).json()) as PairUrlResponse;
  const run = async (input: Partial<PairInput> & { url: string }) => {
    const { text, io: out } = io();
    const code = await pairFromUrl({ keyDir, name: undefined, pin: undefined, platform: 'android', ...input }, { fetch: (u, init) => fetch(u, init), out: out.out, err: out.err });
    return { code, ...text };
  };

  const phone = await mint('kind=phone');
  const wrongKind = await run({ url: phone.url });
  assert.deepEqual([wrongKind.code, wrongKind.err], [2, 'phone-bridge: this pair URL is for a phone; a phone bridge needs a node pairing (on the brain: svc bridge pair)\n']);
  assert.equal((await run({ url: 'svc://pair?v=2' })).code, 2);

  const pinned = await mint('kind=node&node_id=phone-ada&name=Ada&pin=true');
  assert.match((await run({ url: pinned.url })).err, /needs the PIN/);
  const wrongPin = await run({ url: pinned.url, pin: pinned.pin === '000000' ? '000001' : '000000' });
  assert.equal(wrongPin.code, 1);
  assert.match(wrongPin.err, /the PIN was refused/);
  assert.deepEqual(readdirSync(join(keyDir, '..')), [], 'nothing kept');

  const payload = parsePairUrl(pinned.url);
  const dead = `http://127.0.0.1:${await deadPort()}`;
  const paired = await run({ url: encodePairUrl({ ...payload, urls: [dead, ...payload.urls] }), pin: pinned.pin!, name: 'Ada phone', platform: 'ios' });
  assert.equal(paired.code, 0, paired.err);
  assert.equal(paired.err, `phone-bridge: ${dead} did not answer; trying the next address\n`);
  assert.match(paired.out, /^paired bridge phone-ada \("Ada phone"\) as dev_[\w-]+\nnode key: .*phone-ada\.key\nrun it: phone-bridge run --brain http:\/\/127\.0\.0\.1:\d+ --node-id phone-ada\n$/);
  assert.equal(statSync(join(keyDir, 'phone-ada.key')).mode & 0o777, 0o600);
  assert.equal(statSync(keyDir).mode & 0o777, 0o700);
  const key = readFileSync(join(keyDir, 'phone-ada.key'), 'utf8').trim();
  assert.match(key, /^svcdk_/);
  assert.equal((await fetch(`${url}/api/approvals`, { headers: { authorization: `Bearer ${key}` } })).status, 403, 'a node key, not a phone session key');

  const reused = await run({ url: pinned.url, pin: pinned.pin! });
  assert.equal(reused.code, 1);
  assert.match(reused.err, /refused/);
  const nowhere = await run({ url: encodePairUrl({ ...payload, urls: [dead] }), pin: pinned.pin! });
  assert.deepEqual([nowhere.code, nowhere.err.split('\n').at(-2)], [1, 'phone-bridge: none of the addresses in the pair URL answered (is the brain in `svc access lan` mode, and this device on its network?)']);
});
