// Daemon delivery on the node-agent's side against a fake brain (a fetch that answers from memory) and
// a store that records installs: nothing offered, nothing fetched; an offer is downloaded with the node
// key, checked and reported installed once; a digest mismatch or a bundle past its size is reported
// failed and not fetched again until RETRY_FAILED_MS has passed; a brain without the routes, a brain
// that is down and an offer for another node are logged, never thrown; checks asked for meanwhile run
// once more; the driver's outcome is what is reported; a report that failed is sent at the next check;
// a daemon already held runs while another version is offered, and goes on when that one is refused;
// a file system failure is reported; stop() aborts a download.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DaemonSync, RETRY_FAILED_MS, type DaemonOutcome } from '../../node-agent/daemon-sync';
import type { HeldDaemon } from '../../node-agent/daemon-store';
import { BrainUnreachable, ResponseTooLarge, type BrainHttp, type BrainResponse } from '../../node-agent/daemon-http';
import type { DaemonOffer, DaemonStatusBody } from '../../protocol/daemons';

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

interface FakeBrain {
  offer: DaemonOffer | null;
  bundle: Uint8Array;
  mineStatus: number;
  statusStatus: number;
  down: boolean;
  reports: DaemonStatusBody[];
  paths: string[];
}

function rig(opts: { activate?: (held: HeldDaemon) => Promise<DaemonOutcome>; maxBundleBytes?: number; held?: HeldDaemon; installError?: Error; hangBundle?: boolean } = {}) {
  const bundle = new Uint8Array([1, 2, 3, 4]);
  const brain: FakeBrain = { offer: null, bundle, mineStatus: 200, statusStatus: 200, down: false, reports: [], paths: [] };
  let clock = 1_000_000;
  const installs: DaemonOffer[] = [];
  let held: HeldDaemon | null = opts.held ?? null;
  const logs: { level: string; msg: string }[] = [];
  const at = (level: string) => (obj: { err?: unknown }, msg: string) => void logs.push({ level, msg: `${msg} ${typeof obj.err === 'string' ? obj.err : ''}` });
  const answer = (status: number, body: Uint8Array | object, max: number): Promise<BrainResponse> => {
    const bytes = body instanceof Uint8Array ? body : new TextEncoder().encode(JSON.stringify(body));
    return bytes.length > max ? Promise.reject(new ResponseTooLarge(`larger than ${max}`)) : Promise.resolve({ status, headers: {}, body: bytes });
  };
  const http: BrainHttp = (req) => {
    brain.paths.push(`${req.method} ${req.path}`);
    if (brain.down) return Promise.reject(new BrainUnreachable('connect ECONNREFUSED 127.0.0.1:9'));
    if (req.path === '/api/daemons/mine') return answer(brain.mineStatus, { daemon: brain.offer }, req.maxBytes);
    if (req.path === '/api/daemons/mine/bundle' && opts.hangBundle) {
      return new Promise((_resolve, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason as Error), { once: true }));
    }
    if (req.path === '/api/daemons/mine/bundle') return answer(200, brain.bundle, req.maxBytes);
    if (req.path === '/api/daemons/mine/status') {
      if (brain.statusStatus === 200) brain.reports.push(JSON.parse(req.body ?? '') as DaemonStatusBody);
      return answer(brain.statusStatus, {}, req.maxBytes);
    }
    return answer(404, {}, req.maxBytes);
  };
  const store = {
    held: () => Promise.resolve(held),
    install: (offer: DaemonOffer) => {
      if (opts.installError) return Promise.reject(opts.installError);
      installs.push(offer);
      held = { offer, path: `/state/daemons/rpi-garden/${offer.version}` };
      return Promise.resolve(held);
    },
  };
  const sync = new DaemonSync({
    nodeId: 'rpi-garden',
    store,
    http,
    log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    linked: () => true,
    now: () => clock,
    ...(opts.activate ? { activate: opts.activate } : {}),
    ...(opts.maxBundleBytes !== undefined ? { maxBundleBytes: opts.maxBundleBytes } : {}),
  });
  const offerOf = (version: string, bytes = brain.bundle): DaemonOffer => ({ node_id: 'rpi-garden', version, entry: 'main.js', display_name: 'Garden pump', sha256: sha(bytes), size: bytes.length });
  return { sync, brain, installs, logs, offerOf, tick: (ms: number) => (clock += ms) };
}

void test('nothing offered: nothing fetched or reported', async () => {
  const { sync, brain, installs } = rig();
  await sync.check();
  assert.deepEqual(brain.paths, ['GET /api/daemons/mine']);
  assert.deepEqual([installs.length, brain.reports.length], [0, 0]);
});

void test('an offer is downloaded, checked, installed and reported once', async () => {
  const { sync, brain, installs, offerOf } = rig();
  brain.offer = offerOf('1.0.0');
  await sync.check();
  assert.deepEqual(brain.paths, ['GET /api/daemons/mine', 'GET /api/daemons/mine/bundle', 'POST /api/daemons/mine/status']);
  assert.deepEqual(installs, [brain.offer]);
  assert.deepEqual(brain.reports, [{ version: '1.0.0', state: 'installed' }]);
  await sync.check();
  assert.equal(installs.length, 1, 'held: not fetched again');
  assert.equal(brain.reports.length, 1, 'the same report is not sent twice');
  brain.bundle = new Uint8Array([5, 6]);
  brain.offer = offerOf('1.1.0');
  await sync.check();
  assert.deepEqual(installs.map((o) => o.version), ['1.0.0', '1.1.0']);
  assert.deepEqual(brain.reports.at(-1), { version: '1.1.0', state: 'installed' });
});

void test('a digest mismatch is reported failed and not fetched again until the retry time has passed', async () => {
  const { sync, brain, installs, offerOf, tick, logs } = rig();
  brain.offer = { ...offerOf('1.0.0'), sha256: 'a'.repeat(64) };
  await sync.check();
  assert.equal(installs.length, 0);
  assert.equal(brain.reports.length, 1);
  assert.equal(brain.reports[0]!.state, 'failed');
  assert.match(brain.reports[0]!.error ?? '', /^sha256 mismatch: the bundle is [0-9a-f]{64}, the brain's offer names a{64}$/);
  assert.ok(logs.some((l) => l.level === 'error' && /refused/.test(l.msg)));
  const bundles = () => brain.paths.filter((p) => p.endsWith('/bundle')).length;
  await sync.check();
  assert.equal(bundles(), 1, 'not fetched again at once');
  tick(RETRY_FAILED_MS);
  brain.offer = offerOf('1.0.0');
  await sync.check();
  assert.equal(bundles(), 2);
  assert.deepEqual(brain.reports.at(-1), { version: '1.0.0', state: 'installed' });
});

void test('a bundle larger than the offer says, or than the agent takes, is refused', async () => {
  const { sync, brain, installs, offerOf } = rig({ maxBundleBytes: 100 });
  brain.offer = { ...offerOf('1.0.0'), size: 2 };
  await sync.check();
  assert.match(brain.reports[0]!.error ?? '', /^size mismatch: the bundle is larger than the 2 bytes the brain's offer names$/);
  brain.offer = { ...offerOf('1.0.1'), size: 101 };
  await sync.check();
  assert.match(brain.reports[1]!.error ?? '', /101 bytes; this node-agent takes at most 100/);
  assert.equal(brain.paths.filter((p) => p.endsWith('/bundle')).length, 1, 'too large: not even downloaded');
  assert.equal(installs.length, 0);
});

void test('no routes, a brain that is down, an offer for another node: logged, never thrown', async () => {
  const { sync, brain, installs, logs, offerOf } = rig();
  brain.mineStatus = 404;
  await sync.check();
  await sync.check();
  assert.equal(logs.filter((l) => /does not deliver daemons/.test(l.msg)).length, 1, 'noted once');
  brain.mineStatus = 200;
  brain.down = true;
  await sync.check();
  assert.ok(logs.some((l) => l.level === 'warn' && /cannot ask the brain/.test(l.msg)));
  brain.down = false;
  brain.offer = { ...offerOf('1.0.0'), node_id: 'rpi-hall' };
  await sync.check();
  assert.equal(installs.length, 0);
  assert.ok(logs.some((l) => l.level === 'warn' && /offered the daemon of node rpi-hall, not rpi-garden/.test(l.msg)));
});

void test('checks asked for meanwhile run once more, not once each', async () => {
  const { sync, brain } = rig();
  await Promise.all([sync.check(), sync.check(), sync.check(), sync.check()]);
  assert.equal(brain.paths.length, 2);
});

void test('the driver\'s outcome is reported, once per version; a report that failed is sent at the next check', async () => {
  const activated: string[] = [];
  const { sync, brain, offerOf } = rig({
    activate: (held) => {
      activated.push(held.offer.version);
      return Promise.resolve(held.offer.version === '1.0.0' ? { state: 'running' } : { state: 'failed', error: 'describe() threw' });
    },
  });
  brain.offer = offerOf('1.0.0');
  brain.statusStatus = 500;
  await sync.check();
  assert.equal(brain.reports.length, 0);
  brain.statusStatus = 200;
  await sync.check();
  assert.deepEqual(brain.reports, [{ version: '1.0.0', state: 'running' }]);
  brain.bundle = new Uint8Array([9]);
  brain.offer = offerOf('2.0.0');
  await sync.check();
  await sync.check();
  assert.deepEqual(brain.reports.slice(1), [
    { version: '2.0.0', state: 'installed' },
    { version: '2.0.0', state: 'failed', error: 'describe() threw' },
  ]);
  assert.deepEqual(activated, ['1.0.0', '2.0.0']);
});

void test('a process that holds a daemon runs it while another version is offered, and goes on when that one is refused', async () => {
  const activated: string[] = [];
  const old: HeldDaemon = { offer: { node_id: 'rpi-garden', version: '1.0.0', entry: 'main.js', display_name: 'Garden pump', sha256: 'b'.repeat(64), size: 9 }, path: '/state/daemons/rpi-garden/1.0.0' };
  const { sync, brain, offerOf } = rig({ held: old, activate: (held) => Promise.resolve(void activated.push(held.offer.version)).then(() => ({ state: 'running' as const })) });
  brain.offer = { ...offerOf('1.1.0'), sha256: 'c'.repeat(64) };
  await sync.check();
  assert.deepEqual(activated, ['1.0.0']);
  assert.deepEqual(brain.reports.map((r) => [r.version, r.state]), [['1.1.0', 'failed']]);
  await sync.check();
  assert.deepEqual(activated, ['1.0.0'], 'once');
});

void test('a full disk is reported failed; stop() aborts a download under way and asks no more', async () => {
  const full = rig({ installError: Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' }) });
  full.brain.offer = full.offerOf('1.0.0');
  await full.sync.check();
  assert.deepEqual(full.brain.reports.map((r) => [r.state, r.error]), [['failed', 'ENOSPC: no space left on device, write']]);

  const hanging = rig({ hangBundle: true });
  hanging.brain.offer = hanging.offerOf('1.0.0');
  const checking = hanging.sync.check();
  for (let i = 0; i < 50 && !hanging.brain.paths.some((p) => p.endsWith('/bundle')); i++) await new Promise((resolve) => setImmediate(resolve));
  await hanging.sync.stop();
  await checking;
  assert.deepEqual(hanging.brain.reports, [], 'nothing reported for an aborted download');
  const asked = hanging.brain.paths.length;
  await hanging.sync.check();
  assert.equal(hanging.brain.paths.length, asked, 'a stopped sync asks no more');
});
