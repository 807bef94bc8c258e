import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PAIR_TIMEOUT_S, type PairOptions } from '../../node-agent/command-line';
import { EXIT_NOT_PAIRED, EXIT_PAIRED, EXIT_USAGE, pairCommand, type PairContext } from '../../node-agent/pair-command';
import { newDeviceKey } from '../../mesh/pair-token';
import { writeNodeKey } from '../../mesh/node-key-store';
import type { PairCode } from '../../mesh/pair-code';

interface Captured {
  out: string;
  err: string;
  requests: string[];
}

/** A context whose brain is an in-memory answer function; a virtual clock. */
function context(t: { after(fn: () => void): void }, status: () => object, over: Partial<PairContext> = {}): { ctx: PairContext; seen: Captured; keyDir: string } {
  const keyDir = join(mkdtempSync(join(tmpdir(), 'svc-node-pair-')), 'keys');
  t.after(() => rmSync(join(keyDir, '..'), { recursive: true, force: true }));
  const seen: Captured = { out: '', err: '', requests: [] };
  let now = 0;
  const ctx: PairContext = {
    io: { out: { write: (s: string) => (seen.out += s) }, err: { write: (s: string) => (seen.err += s) } },
    envBrain: undefined,
    defaultKeyDir: keyDir,
    hostname: 'rpi-garden',
    discover: async () => null,
    fetch: async (url) => {
      seen.requests.push(url);
      return Response.json(url.includes('/announce') ? { status: 'pending', expires_at: 600 } : status());
    },
    sleep: async (ms) => void (now += ms),
    now: () => now,
    newCode: () => '042917' as PairCode,
    ...over,
  };
  return { ctx, seen, keyDir };
}

const opts = (o: Partial<PairOptions> = {}): PairOptions => ({ timeoutSeconds: DEFAULT_PAIR_TIMEOUT_S, brain: 'http://brain:9090', ...o });

void test('paired: the code and the claim command on stdout, the key kept 0600 under the default key dir, exit 0', async (t) => {
  const key = newDeviceKey();
  const { ctx, seen, keyDir } = context(t, () => ({ status: 'paired', token: key, device_id: 'dev_9', expires_at: 600 }));
  assert.equal(await pairCommand(opts(), ctx), EXIT_PAIRED);
  assert.match(seen.out, /^Pairing code: 042 917\nClaim it on the brain: svc pair code 042917\nPaired as dev_9; node key saved to .*rpi-garden\.key\n$/);
  assert.equal(readFileSync(join(keyDir, 'rpi-garden.key'), 'utf8'), `${key}\n`);
  assert.equal(statSync(join(keyDir, 'rpi-garden.key')).mode & 0o777, 0o600);
  assert.equal(seen.requests[0], 'http://brain:9090/api/devices/pair/announce');
  assert.match(seen.err, /pairing node "rpi-garden" with the brain at http:\/\/brain:9090 \(--brain\)/);
});

void test('--node-id and --key-dir win; a key already there is replaced and the person is told', async (t) => {
  const key = newDeviceKey();
  const { ctx, seen } = context(t, () => ({ status: 'paired', token: key, expires_at: 600 }));
  const dir = join(ctx.defaultKeyDir, '..', 'other');
  await writeNodeKey(dir, 'esp-1', newDeviceKey());
  assert.equal(await pairCommand(opts({ nodeId: 'esp-1', keyDir: dir }), ctx), EXIT_PAIRED);
  assert.match(seen.err, /already has a key .* replaces it/);
  assert.equal(readFileSync(join(dir, 'esp-1.key'), 'utf8'), `${key}\n`);
});

void test('expired and timed out: exit 1 with a message, no key file', async (t) => {
  const expired = context(t, () => ({ status: 'expired', expires_at: 600 }));
  assert.equal(await pairCommand(opts(), expired.ctx), EXIT_NOT_PAIRED);
  assert.match(expired.seen.err, /the code 042 917 expired before it was claimed; run `node-agent pair` for a new one/);
  assert.throws(() => statSync(join(expired.keyDir, 'rpi-garden.key')), /ENOENT/);

  const slow = context(t, () => ({ status: 'pending', expires_at: 600 }));
  assert.equal(await pairCommand(opts({ timeoutSeconds: 5 }), slow.ctx), EXIT_NOT_PAIRED);
  assert.match(slow.seen.err, /not paired within 5 s \(nobody claimed 042 917\)/);
});

void test('no brain: SVC_BRAIN_URL is used when given, else mDNS; nothing found is exit 1 naming --brain', async (t) => {
  const none = context(t, () => ({}));
  assert.equal(await pairCommand(opts({ brain: undefined }), none.ctx), EXIT_NOT_PAIRED);
  assert.match(none.seen.err, /no brain found on this network; give --brain http:\/\//);
  assert.equal(none.seen.out, '');

  const fromEnv = context(t, () => ({ status: 'expired', expires_at: 600 }), { envBrain: 'http://pi.local:9090' });
  await pairCommand(opts({ brain: undefined }), fromEnv.ctx);
  assert.equal(fromEnv.seen.requests[0], 'http://pi.local:9090/api/devices/pair/announce');
});

void test('a host name that is not a node id is a usage error asking for --node-id', async (t) => {
  const { ctx, seen } = context(t, () => ({}), { hostname: 'my pi' });
  assert.equal(await pairCommand(opts(), ctx), EXIT_USAGE);
  assert.match(seen.err, /host name cannot be the node id.*give --node-id/);
  assert.deepEqual(seen.requests, []);
});
