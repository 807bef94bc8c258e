// Two built brains on one bridge network (test/helpers/bridge-netns.ts, with a multicast route in each
// namespace so mDNS can be sent), paired the way a user pairs them: `svc pair --kind brain` on A
// prints the pair URL (with A's sync key fingerprint), `svc sync pair '<url>'` on B completes it —
// each command run inside its brain's namespace against its own brain. B is given a /sync address of
// A where nothing listens (`--sync-url`), so B can only learn where A is from the `_svc-sync._tcp`
// service A announces: B's row for A must name that mDNS address (it wins over the one pairing
// recorded), the link must come up, and `svc sync now` must sync a note each way. Needs root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBridgeNet } from '../helpers/bridge-netns';
import { SVC } from '../helpers/brain-process';
import { isRoot, runTool, runToolOk } from '../helpers/external-tools';
import { MESH_PORT, meshBrain } from '../helpers/mesh-brain';
import { until } from '../helpers/poll';
import { allNotes, brainId, expectStatus, post } from '../helpers/sync-brains';
import type { SyncPeerList } from '../../protocol/sync-api';

const MEMBERS = [
  { tag: 'east', block: 247 },
  { tag: 'west', block: 248 },
];
const MESH_BLOCK = 249;

void test('a brain paired with the CLI finds its peer over mDNS (_svc-sync._tcp) when the address it was given is wrong, and they sync', { skip: isRoot() ? false : 'needs root to create network namespaces', timeout: 120_000 }, async (t) => {
  const net = await createBridgeNet(MEMBERS, MESH_BLOCK);
  t.after(() => net.destroy());
  // A namespace has no default route; without one for multicast, mDNS cannot be sent.
  for (const m of net.members) await runToolOk('ip', ['-n', m.plan.ns, 'route', 'add', '224.0.0.0/4', 'dev', m.meshIf]);
  const [ma, mb] = net.members as [(typeof net.members)[0], (typeof net.members)[0]];
  const a = meshBrain('alpha', ma);
  const b = meshBrain('bravo', mb);
  t.after(() => a.dispose());
  t.after(() => b.dispose());
  await a.start();
  await b.start();
  const cli = (brain: typeof a, ...args: string[]) =>
    runTool('ip', ['netns', 'exec', brain.member.plan.ns, process.execPath, SVC, '--url', `http://127.0.0.1:${MESH_PORT}`, ...args], { env: { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: '' } });
  for (const brain of [a, b]) {
    const lan = await cli(brain, 'access', 'lan');
    assert.equal(lan.code, 0, lan.stderr);
  }
  // A announces itself, _svc-sync._tcp included, once it is reachable on the LAN.
  await until(() => `alpha advertising over mDNS\n${a.log().slice(-2000)}`, async () => (/mDNS: advertising/.test(a.log()) ? true : undefined), 20_000);

  const minted = await cli(a, 'pair', '--kind', 'brain', '--name', 'cabin', '--no-wait', '--json');
  assert.equal(minted.code, 0, minted.stderr);
  const url = (JSON.parse(minted.stdout.trim().split('\n')[0]!) as { url: string }).url;
  assert.match(url, /^svc:\/\/pair\?.*kind=brain.*&key=[A-Za-z0-9_-]{43}/, 'the pair URL names the minting brain and its sync key');
  const nowhere = `ws://10.${MESH_BLOCK}.250.250:${MESH_PORT}/sync`;
  const paired = await cli(b, 'sync', 'pair', url, '--sync-url', nowhere);
  assert.equal(paired.code, 0, paired.stderr + paired.stdout);
  assert.match(paired.stdout, /^paired with /);
  const aId = await brainId(a);

  // B learns A's real address from mDNS, which wins over the one pairing recorded.
  const found = await until(
    () => `bravo's row for alpha names its mDNS address\n${b.log().slice(-3000)}`,
    async () => {
      const row = (await expectStatus<SyncPeerList>(b, 200, '/api/sync/peers')).peers.find((p) => p.brain_id === aId);
      return row?.source === 'mdns' ? row : undefined;
    },
    30_000,
  );
  assert.equal(found.url, `ws://${ma.meshV4}:${MESH_PORT}/sync`);
  await until(() => 'bravo connected to alpha', async () => ((await expectStatus<SyncPeerList>(b, 200, '/api/sync/peers')).peers.find((p) => p.brain_id === aId)?.state === 'connected' ? true : undefined), 30_000);

  await expectStatus(a, 201, '/api/memory/note', post({ text: 'the cabin water is off until May' }));
  await expectStatus(b, 201, '/api/memory/note', post({ text: 'the house alarm code changed on Monday' }));
  const now = await cli(b, 'sync', 'now', '--timeout', '20');
  assert.equal(now.code, 0, now.stdout + now.stderr);
  assert.match(now.stdout, /: synced, /);
  for (const brain of [a, b]) {
    await until(() => `${brain.label} holds both notes`, async () => ((await allNotes(brain)).length === 2 ? true : undefined), 20_000);
  }
  const status = await cli(b, 'sync', 'status');
  assert.match(status.stdout, /peers: 1 active of 1/);
});
