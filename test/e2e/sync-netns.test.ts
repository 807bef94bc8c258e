// Federated sync between built brains on a real network (issue 15, docs/sync.md "The guarantees"):
// each brain runs in a network namespace of its own, and the namespaces are ports of one Linux bridge
// inside a fifth, "switch" namespace this test creates (test/helpers/bridge-netns.ts; 10.245.N.0/24).
// This process reaches every brain over a veth link of its own (IPv6 only, fd41:241:N::/64 to
// fd44:244:N::/64), so a brain cut off the bridge is still written to and scraped. Traffic goes only
// between namespaces created here; nothing is routed, bridged or forwarded on the machine itself.
//
// Trials, each on fresh brains:
// - partition and heal in a full mesh (a bridge port down, then 30% packet loss), with notes, facts
//   and episodes written on every side and a concurrent edit;
// - a chain A–B–C, where A and C only ever hear of each other through B, with B cut off and back;
// - kill -9 of a brain while it receives thousands of notes, three times;
// - clocks an hour ahead and behind;
// - SVC_SYNC_DISABLED=1;
// - a brain on two networks, dialled back by the brain that minted its pairing at an address it can
//   reach;
// - the episode of a one-turn session (kept out of search, so no memory change event) reaching a
//   connected peer with nothing written after it: every journaled change tells the links.
// The gauges of the partitioned brain, a connected one and a sync-disabled one, scraped during the
// first trial, then drive SyncPeerDown through `promtool test rules`. Needs root; the packet-loss
// phase needs tc and netem, the crash trial tc and tbf (a slow link), the alert check promtool.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { encodePairUrl } from '../../mesh/pair-payload';
import type { SyncStatus } from '../../protocol/sync-api';
import { addSecondNetwork, createBridgeNet, hasQdisc, resetBridge, setBridgePort, setQdisc, type BridgeNet } from '../helpers/bridge-netns';
import { isRoot, repoRoot, runTool } from '../helpers/external-tools';
import { MESH_PORT, meshBrain, type MeshBrain } from '../helpers/mesh-brain';
import { samples } from '../helpers/metric-samples';
import { minuteGrid, peerDownRule, syncGauges, writePeerDownTest, type Phase, type SyncGauges } from '../helpers/peer-down-series';
import { until } from '../helpers/poll';
import { allNotes, brainId, expectStatus, pairBrains, post, revisions, syncNow, type ApiBrain, type NoteItem } from '../helpers/sync-brains';
import { converged, Model } from '../helpers/sync-model';

const MEMBERS = [
  { tag: 'alpha', block: 241 },
  { tag: 'bravo', block: 242 },
  { tag: 'charlie', block: 243 },
  { tag: 'delta', block: 244 },
];
const MESH_BLOCK = 245;
/** The subnet of a second network one brain is on and the others are not. */
const SECOND_NET_BLOCK = 246;
const ROOT_SKIP = isRoot() ? false : 'needs root to create network namespaces (ip netns add); CI runs as root';
/** Failure reasons a partition, a crash or a restart explains; any other is a bug. */
const EXPECTED_FAILURES = new Set(['io', 'timeout']);

async function status(brain: ApiBrain): Promise<SyncStatus> {
  return expectStatus<SyncStatus>(brain, 200, '/api/sync/status');
}

const activePeers = (brain: MeshBrain, n: number, timeoutMs = 30_000): Promise<SyncStatus> =>
  until(
    () => `${brain.label} with ${n} active peers`,
    async () => {
      const st = await status(brain);
      return st.active_peers === n ? st : undefined;
    },
    timeoutMs,
  );

/** Failures other than those a partition or crash explains. */
async function unexpectedFailures(brain: ApiBrain): Promise<Record<string, number>> {
  return Object.fromEntries(Object.entries((await status(brain)).failures).filter(([reason, n]) => n > 0 && !EXPECTED_FAILURES.has(reason)));
}

/** Error and fatal lines of a brain's log (pino levels 50 and 60). */
const errorLines = (brain: MeshBrain): string[] => brain.log().split('\n').filter((l) => /"level":(50|60)/.test(l));

async function startAll(t: TestContext, brains: (MeshBrain & { dispose(): Promise<void> })[]): Promise<void> {
  t.after(() => Promise.all(brains.map((b) => b.dispose())));
  await Promise.all(brains.map((b) => b.start()));
}

/** `sync now` on every brain at once, after a heal: each dials its peers without waiting out its backoff. */
async function syncAll(brains: readonly MeshBrain[]): Promise<void> {
  await Promise.all(brains.map((b) => syncNow(b, 30_000)));
}

/**
 * Scrapes each brain's sync gauges once the phase's state is reached (the callers wait for it: converged,
 * active peers): the minute grid stretches one sample over the phase's minutes.
 */
async function scrape(brains: readonly MeshBrain[], into: Map<string, Record<Phase['name'], SyncGauges[]>>, phase: Phase['name']): Promise<void> {
  for (const b of brains) {
    const series = into.get(b.label) ?? { before: [], during: [], after: [] };
    series[phase].push(syncGauges(await b.metrics()));
    into.set(b.label, series);
  }
}

// ── The trials ─────────────────────────────────────────────────────────────────────────────────────

/** 30% of the packets a brain sends lost: netem on its own port (`tc qdisc add dev <if> root netem loss 30%`). */
const LOSS = ['netem', 'loss', '30%'];
/** 2 Mbit/s (used each way). */
const SLOW = ['tbf', 'rate', '2mbit', 'burst', '32kbit', 'latency', '400ms'];

interface Shared {
  net: BridgeNet;
  /** Whether tc and this kernel can lose packets (netem) and slow a link (tbf). */
  loss: boolean;
  slow: boolean;
  /** The sync gauges of trial 1, by brain label and phase. */
  gauges: Map<string, Record<Phase['name'], SyncGauges[]>>;
}

const member = (s: Shared, tag: string) => s.net.members.find((m) => m.plan.ns.startsWith(`svc-${tag}-`))!;

async function partitionAndHeal(t: TestContext, s: Shared): Promise<void> {
  const a = meshBrain('alpha', member(s, 'alpha'));
  const b = meshBrain('bravo', member(s, 'bravo'));
  const c = meshBrain('charlie', member(s, 'charlie'));
  const solo = meshBrain('delta', member(s, 'delta'), { SVC_SYNC_DISABLED: '1' });
  await startAll(t, [a, b, c, solo]);
  await pairBrains(a, b);
  await pairBrains(b, c);
  await pairBrains(a, c);
  for (const x of [a, b, c]) await activePeers(x, 2);
  const model = new Model();

  // Connected: writes on every brain, then edits and deletes of each other's notes.
  const boiler = await model.note(a, 'the boiler is serviced in March');
  const fuse = await model.note(a, 'the spare fuse is in the kitchen drawer');
  const cabin = await model.note(b, 'the cabin key is under the blue pot');
  const bins = await model.note(c, 'the bins go out on Tuesday night');
  await model.fact(a, 'alpha-notes', 'boiler', 'serviced in', 'March');
  await model.fact(c, 'charlie-notes', 'cabin key', 'is under', 'the blue pot');
  const chat = await model.episode(a, ['remember that the radiator valve is stiff', 'what is stiff?']);
  await converged([a, b, c], model);
  await model.edit(b, boiler, 'the boiler is serviced in April');
  await model.remove(c, fuse);
  await converged([a, b, c], model);
  await scrape([a, b, solo], s.gauges, 'before');

  // B is cut off the bridge. Writes on both sides; the same note edited on both, B later in real time.
  await setBridgePort(b.member, 'down');
  await model.note(a, 'the gutter needs clearing before winter');
  await model.edit(a, bins, 'the bins go out on Wednesday night');
  await model.remove(a, cabin);
  await model.edit(a, boiler, 'the boiler is serviced in May', false);
  await sleep(20);
  await model.edit(b, boiler, 'the boiler is serviced in June');
  await sleep(20);
  await model.edit(b, cabin, 'the cabin key is on the hook by the door'); // after A's delete: it comes back
  await model.note(b, 'the water meter is read in January');
  await model.note(c, 'the chimney was swept in October');
  await model.fact(b, 'bravo-notes', 'Boiler', 'serviced in', 'March'); // the same fact, another source: one record
  await model.fact(c, 'charlie-notes', 'gutter', 'needs', 'clearing');
  await model.episode(b, ['remember that the porch light is on a timer', 'what is on a timer?']);
  await model.removeEpisode(c, chat);
  // Until B's links time out (nothing received for 45 s) it still counts them.
  await activePeers(b, 0, 90_000);
  await activePeers(a, 1);
  await model.note(b, 'the smoke alarm battery was changed');
  await scrape([a, b, solo], s.gauges, 'during');

  await setBridgePort(b.member, 'up');
  await syncAll([a, b, c]);
  await converged([a, b, c], model);
  for (const x of [a, b, c]) await activePeers(x, 2);
  await scrape([a, b, solo], s.gauges, 'after');

  // The concurrent edit: B's (later) is current everywhere, A's is in the history everywhere.
  const aId = await brainId(a);
  for (const x of [a, b, c]) {
    const r = await revisions(x, boiler);
    assert.equal(r.current?.text, 'the boiler is serviced in June', x.label);
    assert.ok(r.history.some((h) => h.text === 'the boiler is serviced in May' && h.brain_id === aId), `${x.label}: A's losing edit is in the history: ${JSON.stringify(r.history)}`);
  }

  await t.test('30% of what B sends lost: writes everywhere still converge', { skip: s.loss ? false : 'no netem: tc (iproute2) is not installed or this kernel lacks sch_netem' }, () =>
    lossyLink(s, [a, b, c], model, bins),
  );
  for (const x of [a, b, c]) {
    assert.deepEqual(await unexpectedFailures(x), {}, `${x.label}: only io and timeout failures`);
    assert.deepEqual(errorLines(x), [], `${x.label}: no error lines`);
  }
}

/** The second phase of the partition: B loses 30% of what it sends while every brain writes. */
async function lossyLink(s: Shared, brains: [MeshBrain, MeshBrain, MeshBrain], model: Model, bins: string): Promise<void> {
  const [a, b, c] = brains;
  await setQdisc(s.net, b.member, LOSS, 'out');
  await model.note(a, 'the garage door code changes in spring');
  await model.note(b, 'the heat pump filter is cleaned monthly');
  await model.edit(b, bins, 'the bins go out on Thursday night');
  await model.note(c, 'the pantry light needs a new bulb');
  await model.fact(b, 'bravo-notes', 'heat pump', 'filter cleaned', 'monthly');
  await syncAll(brains);
  await converged(brains, model, 90_000);
  await setQdisc(s.net, b.member, null);
  await converged(brains, model);
}

async function chainRelay(t: TestContext, s: Shared): Promise<void> {
  const a = meshBrain('alpha', member(s, 'alpha'));
  const b = meshBrain('bravo', member(s, 'bravo'));
  const c = meshBrain('charlie', member(s, 'charlie'));
  await startAll(t, [a, b, c]);
  await pairBrains(a, b);
  await pairBrains(b, c);
  await activePeers(b, 2);
  const model = new Model();
  const door = await model.note(a, 'the back door sticks in wet weather');
  await model.note(c, 'the shed padlock code is on the fridge');
  await model.fact(a, 'alpha-notes', 'back door', 'sticks in', 'wet weather');
  await converged([a, b, c], model);
  const cId = await brainId(c);
  assert.ok((await expectStatus<{ peers: { brain_id: string }[] }>(a, 200, '/api/sync/peers')).peers.every((p) => p.brain_id !== cId), 'A and C never paired: what reached them went through B');

  // B, the relay, is cut off: A and C edit the same note, C later in real time.
  await setBridgePort(b.member, 'down');
  await model.edit(a, door, 'the back door sticks in winter', false);
  await sleep(20);
  await model.edit(c, door, 'the back door sticks in autumn');
  await model.note(a, 'the loft hatch is above the landing');
  await model.fact(c, 'charlie-notes', 'Back door', 'sticks in', 'wet weather');
  await setBridgePort(b.member, 'up');
  await syncAll([a, b, c]);
  await converged([a, b, c], model);
  const aId = await brainId(a);
  for (const x of [a, b, c]) {
    const r = await revisions(x, door);
    assert.equal(r.current?.text, 'the back door sticks in autumn', x.label);
    assert.ok(r.history.some((h) => h.text === 'the back door sticks in winter' && h.brain_id === aId), `${x.label}: A's losing edit is in the history`);
  }
}

const LONG_TEXT = ' The note is long enough that a few thousand of them take several batches to send.'.repeat(5);

async function killMidSync(t: TestContext, s: Shared): Promise<void> {
  const a = meshBrain('alpha', member(s, 'alpha'));
  const b = meshBrain('bravo', member(s, 'bravo'));
  await startAll(t, [a, b]);
  await pairBrains(a, b);
  await activePeers(a, 1);
  const aId = await brainId(a);

  await setBridgePort(b.member, 'down');
  const started = Date.now();
  const total = 3000;
  const ids: string[] = [];
  for (let i = 0; i < total; i += 50) {
    const batch = Array.from({ length: Math.min(50, total - i) }, (_, k) => `note ${i + k} of the bulk write.${LONG_TEXT}`);
    ids.push(...(await Promise.all(batch.map(async (text) => (await expectStatus<NoteItem>(a, 201, '/api/memory/note', post({ text }))).id))));
  }
  t.diagnostic(`A wrote ${total} notes in ${Date.now() - started} ms while B was cut off`);
  // A slow link keeps B receiving long enough to be killed while it does.
  await setQdisc(s.net, b.member, SLOW);
  await setBridgePort(b.member, 'up');
  const applied = async (): Promise<number> => (await status(b)).cursor[aId] ?? 0;
  // Kill k once B holds k quarters of the notes, and a little later each time: at a batch's commit,
  // then while the next one is arriving.
  for (let round = 1; round <= 3; round++) {
    const seen = await until(
      () => `B applying ${(round * total) / 4} of A's notes (kill ${round})`,
      async () => {
        const n = await applied();
        assert.ok(n < total, `B received all ${total} notes before kill ${round}: the link was not slow enough`);
        return n >= (round * total) / 4 ? n : undefined;
      },
      60_000,
    );
    await sleep((round - 1) * 250);
    await b.kill();
    t.diagnostic(`kill ${round}: B had applied ${seen} of ${total} (${Date.now() - started} ms)`);
    await b.start();
  }
  await setQdisc(s.net, b.member, null);
  const now = await syncNow(b, 60_000);
  t.diagnostic(`sync now after the last restart: ${now.peers.map((p) => `${p.outcome}, received ${p.received}`).join('; ')} (${Date.now() - started} ms)`);
  await until(() => `B holding all ${total} notes`, async () => ((await applied()) === total ? true : undefined), 60_000);
  t.diagnostic(`B held all ${total} after ${Date.now() - started} ms`);
  const held = (await allNotes(b)).map((n) => n.id);
  assert.equal(held.length, total, 'no note twice, none missing');
  assert.deepEqual(new Set(held), new Set(ids));
  for (const x of [a, b]) assert.deepEqual(await unexpectedFailures(x), {}, `${x.label}: only the io and timeout failures of the kills`);
  for (const x of [a, b]) assert.deepEqual(errorLines(x), [], `${x.label} logged no errors across B's crashes`);
}

async function clockAnHourOff(t: TestContext, s: Shared): Promise<void> {
  const ahead = meshBrain('alpha', member(s, 'alpha'), { SVC_CLOCK_OFFSET_MS: '3600000' });
  const normal = meshBrain('bravo', member(s, 'bravo'));
  const behind = meshBrain('charlie', member(s, 'charlie'), { SVC_CLOCK_OFFSET_MS: '-3600000' });
  const all = [ahead, normal, behind];
  await startAll(t, all);
  await pairBrains(ahead, normal);
  await pairBrains(normal, behind);
  await pairBrains(ahead, behind);
  const model = new Model();
  const id = await model.note(normal, 'the thermostat is set to 20 degrees');
  await converged(all, model);

  // All three apart; each edits the note, the brain an hour ahead first in real time.
  for (const x of all) await setBridgePort(x.member, 'down');
  await model.edit(ahead, id, 'the thermostat is set to 21 degrees');
  await sleep(20);
  await model.edit(normal, id, 'the thermostat is set to 19 degrees', false);
  await sleep(20);
  await model.edit(behind, id, 'the thermostat is set to 18 degrees', false);
  for (const x of all) await setBridgePort(x.member, 'up');
  await syncAll(all);
  await converged(all, model);

  const aheadId = await brainId(ahead);
  for (const x of all) {
    const r = await revisions(x, id);
    assert.equal(r.current?.brain_id, aheadId, `${x.label}: the greater stamp (the brain an hour ahead) wins`);
    assert.ok(r.current !== null && r.current.at > Date.now() + 30 * 60_000, `${x.label}: the winning stamp is an hour ahead`);
    assert.deepEqual(r.history.map((h) => h.text).sort(), ['the thermostat is set to 18 degrees', 'the thermostat is set to 19 degrees'], `${x.label}: both losing edits are in the history`);
  }
  for (const x of all) assert.deepEqual(await unexpectedFailures(x), {}, `${x.label}: an hour of skew is within the bound: no clock_skew refusals`);
}

async function syncDisabled(t: TestContext, s: Shared): Promise<void> {
  const solo = meshBrain('delta', member(s, 'delta'), { SVC_SYNC_DISABLED: '1' });
  await startAll(t, [solo]);
  const st = await status(solo);
  assert.equal(st.enabled, false);
  assert.match(st.disabled_by ?? '', /SVC_SYNC_DISABLED=1/);

  const upgrade = await new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(`ws://[${solo.member.plan.nsV6}]:${MESH_PORT}/sync`, { perMessageDeflate: false });
    ws.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => reject(new Error('/sync upgraded on a brain with sync off')));
    ws.once('error', reject);
  });
  assert.equal(upgrade, 404, '/sync is not mounted');

  const series = samples(await solo.metrics()).filter((x) => x.name.startsWith('svc_sync_'));
  assert.deepEqual([...new Set(series.map((x) => x.name))].sort(), ['svc_sync_active_peers', 'svc_sync_failures_total', 'svc_sync_was_active_recent']);
  assert.ok(series.every((x) => x.value === 0), `every svc_sync_* series is 0: ${JSON.stringify(series)}`);

  const url = encodePairUrl({ v: 1, kind: 'brain', brain_id: st.brain_id, token: 'a'.repeat(32), expires_at: Math.floor(Date.now() / 1000) + 600, pin_required: false, urls: ['http://10.0.0.1:9090'], mdns: null });
  await expectStatus(solo, 409, '/api/sync/pair', post({ url }));
}

async function peerDownAlert(t: TestContext, s: Shared): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-peer-down-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const rules = join(repoRoot(), 'daemon', 'metrics', 'alerts.yml');
  const { forMinutes } = peerDownRule(rules);
  const phases: Phase[] = [
    { name: 'before', minutes: 10 },
    { name: 'during', minutes: 2 * forMinutes },
    { name: 'after', minutes: 10 },
  ];
  const grid = (label: string, key: keyof SyncGauges): number[] => {
    const g = s.gauges.get(label)!;
    return minuteGrid(phases, { before: g.before.map((x) => x[key]), during: g.during.map((x) => x[key]), after: g.after.map((x) => x[key]) });
  };
  const series = ['alpha', 'bravo', 'delta'].map((label) => ({ instance: label, active: grid(label, 'active'), recent: grid(label, 'recent') }));
  const cut = phases[0]!.minutes;
  const healed = cut + phases[1]!.minutes;
  const file = writePeerDownTest(dir, rules, series, [
    { minute: cut - 1, firing: [] },
    { minute: cut + forMinutes - 1, firing: [] },
    { minute: cut + forMinutes, firing: ['bravo'] },
    { minute: healed - 1, firing: ['bravo'] },
    { minute: healed + 1, firing: [] },
  ]);
  const r = await runTool('promtool', ['test', 'rules', file], { cwd: dir });
  assert.equal(r.code, 0, `${r.stdout}${r.stderr}\nseries: ${JSON.stringify(series)}`);

  // The same expectations notice a rule that waits less, or one without its guard (it would fire for the sync-disabled brain).
  const original = readFileSync(rules, 'utf8');
  const at = original.indexOf('- alert: SyncPeerDown');
  const [head, rule] = [original.slice(0, at), original.slice(at)];
  const mutants: [string, string][] = [[`for: ${forMinutes}m`, `for: ${forMinutes - 5}m`], [' and max_over_time(svc_sync_was_active_recent[1h]) == 1', '']];
  for (const [from, to] of mutants.filter(([from]) => rule.includes(from))) {
    writeFileSync(join(dir, 'alerts.yml'), head + rule.replace(from, to));
    const m = await runTool('promtool', ['test', 'rules', file], { cwd: dir });
    assert.notEqual(m.code, 0, `the expectations do not notice ${from} → ${to}`);
  }
}

/**
 * B is on a second network A is not on, listed first; B cannot dial A (its sync URL for A names an
 * address nobody has), so the pair links up only if A dials B back at an address A can reach.
 */
async function dialBackMultiHomed(t: TestContext, s: Shared): Promise<void> {
  const bMember = member(s, 'bravo');
  const n = (process.pid % 200) + 20;
  const removeSecond = await addSecondNetwork(s.net, bMember, `10.${SECOND_NET_BLOCK}.${n}.2/24`);
  t.after(removeSecond);
  const a = meshBrain('alpha', member(s, 'alpha'));
  const b = meshBrain('bravo', bMember);
  await startAll(t, [a, b]);
  const minted = await expectStatus<{ token: string; expires_at: number }>(a, 201, '/api/devices/pair', post({ kind: 'brain', name: 'peer' }));
  const url = encodePairUrl({ v: 1, kind: 'brain', brain_id: await brainId(a), token: minted.token, expires_at: Math.floor(minted.expires_at), pin_required: false, urls: [a.url], mdns: null });
  const nowhere = `ws://10.${MESH_BLOCK}.${n}.250:${MESH_PORT}/sync`;
  await expectStatus(b, 201, '/api/sync/pair', post({ url, sync_url: nowhere }));
  const bId = await brainId(b);
  const pinned = (await expectStatus<{ peers: { brain_id: string; url: string | null }[] }>(a, 200, '/api/sync/peers')).peers.find((p) => p.brain_id === bId);
  await until(() => `A dialling B back (A dials B at ${pinned?.url ?? 'no URL'}; B is reachable at ${b.url})`, async () => ((await status(a)).active_peers === 1 ? true : undefined), 20_000);
}

/** An episode of a one-turn session (kept out of search) reaches a peer that is connected, with nothing else written after it. */
async function loneEpisode(t: TestContext, s: Shared): Promise<void> {
  const a = meshBrain('alpha', member(s, 'alpha'));
  const b = meshBrain('bravo', member(s, 'bravo'));
  await startAll(t, [a, b]);
  await pairBrains(a, b);
  await activePeers(a, 1);
  const model = new Model();
  await model.episode(a, ['good morning']);
  await converged([a, b], model, 10_000);
}

async function hasPromtool(): Promise<boolean> {
  return runTool('promtool', ['--version']).then(
    (r) => r.code === 0,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
}

void test('sync between brains in network namespaces on one bridge', { skip: ROOT_SKIP, timeout: 300_000 }, async (t) => {
  const net = await createBridgeNet(MEMBERS, MESH_BLOCK);
  t.after(() => net.destroy());
  const s: Shared = { net, loss: await hasQdisc(net, LOSS), slow: await hasQdisc(net, SLOW), gauges: new Map() };
  await t.test('partition and heal: writes on every side, a concurrent edit, link down then packet loss', { timeout: 180_000 }, async (tt) => {
    tt.after(() => resetBridge(net));
    await partitionAndHeal(tt, s);
  });
  await t.test('SyncPeerDown on the gauges the partitioned brain, a connected one and a sync-disabled one reported', async (tt) => {
    if (!(await hasPromtool())) return tt.skip('promtool is not installed');
    const sampled = ['alpha', 'bravo', 'delta'].every((label) => (s.gauges.get(label)?.after.length ?? 0) > 0);
    if (!sampled) return tt.skip('the partition trial stopped before the gauges were scraped after the heal');
    await peerDownAlert(tt, s);
  });
  await t.test('a chain A–B–C: what A and C write reaches each other through B, also after B was cut off', { timeout: 90_000 }, async (tt) => {
    tt.after(() => resetBridge(net));
    await chainRelay(tt, s);
  });
  await t.test('kill -9 while receiving thousands of notes, three times: it ends with exactly every note', { timeout: 180_000 }, async (tt) => {
    if (!s.slow) return tt.skip('no tbf: tc (iproute2) is not installed or this kernel lacks sch_tbf, so no slow link to kill a brain in the middle of');
    tt.after(() => resetBridge(net));
    await killMidSync(tt, s);
  });
  await t.test('clocks an hour ahead and behind: the greater stamp wins, the others are in the history', { timeout: 90_000 }, async (tt) => {
    tt.after(() => resetBridge(net));
    await clockAnHourOff(tt, s);
  });
  await t.test('SVC_SYNC_DISABLED=1: status says so, /sync is 404, the metrics stay 0, pairing is 409', { timeout: 60_000 }, (tt) => syncDisabled(tt, s));
  await t.test(
    'an episode of a one-turn session reaches a connected peer with nothing written after it',
    { timeout: 60_000 },
    (tt) => loneEpisode(tt, s),
  );
  await t.test(
    'a brain on two networks, the shared one listed second, is dialled back at an address the brain that minted the pairing can reach',
    { timeout: 60_000 },
    async (tt) => {
      tt.after(() => resetBridge(net));
      await dialBackMultiHomed(tt, s);
    },
  );
});
