// Several network namespaces on one Linux bridge, for brains that talk to each other: a "switch"
// namespace this process creates holds the bridge (br0), and each member namespace has a veth port on
// it with an IPv4 address on a private test subnet (10.<mesh block>.N.0/24, .2 upward). Nothing is
// bridged or forwarded on the machine itself, and no namespace has a route off these subnets.
//
// The test process reaches each member on a second link, its own veth pair from test/helpers/netns.ts
// (IPv6 only, fd<block-200>:<block>:N::/64): so taking a member's bridge port down partitions it from
// the other members and never from the test, which keeps writing to it and scraping it. That link
// carries no IPv4 on purpose: a brain offers its IPv4 addresses first when it tells a peer where to
// dial it back (daemon/access/base-urls.ts), so the only one it offers is its bridge address.
// Needs root.
import { createVethNamespace, deleteNamespace, vethPlan, type VethPlan } from './netns';
import { runTool, runToolOk } from './external-tools';

export interface BridgeMember {
  /** The veth link to this process (the test's way in). */
  readonly plan: VethPlan;
  /** Its port on the bridge, inside its namespace, and the other end inside the switch namespace. */
  readonly meshIf: string;
  readonly switchIf: string;
  /** Its address on the bridge: where the other members reach it. */
  readonly meshV4: string;
}

export interface BridgeNet {
  readonly switchNs: string;
  readonly members: readonly BridgeMember[];
  destroy(): Promise<void>;
}

/** `members`: a tag (its first letter unique) and a subnet block each for the links to this process; `meshBlock` numbers the bridge's subnet. */
export async function createBridgeNet(members: readonly { tag: string; block: number }[], meshBlock: number): Promise<BridgeNet> {
  const n = (process.pid % 200) + 20;
  const switchNs = `svc-switch-${process.pid}`;
  const planned: BridgeMember[] = members.map((m, i) => {
    const letter = m.tag[0]!;
    return { plan: vethPlan(m.tag, m.block), meshIf: `svm${process.pid}${letter}`, switchIf: `svm${process.pid}${letter}s`, meshV4: `10.${meshBlock}.${n}.${i + 2}` };
  });
  const net: BridgeNet = {
    switchNs,
    members: planned,
    destroy: async () => {
      for (const m of planned) await deleteNamespace(m.plan);
      await runTool('ip', ['netns', 'del', switchNs]);
    },
  };
  await net.destroy(); // left by a killed run with the same pid
  try {
    for (const m of planned) await createTestLink(m.plan);
    await createSwitch(switchNs);
    for (const m of planned) await plugIn(switchNs, m);
  } catch (err) {
    await net.destroy();
    throw err;
  }
  return net;
}

/** The member's veth pair to this process, left with its IPv6 addresses only. */
async function createTestLink(plan: VethPlan): Promise<void> {
  await createVethNamespace(plan);
  await runToolOk('ip', ['addr', 'del', `${plan.hostV4}/30`, 'dev', plan.hostIf]);
  await runToolOk('ip', ['-n', plan.ns, 'addr', 'del', `${plan.nsV4}/30`, 'dev', plan.nsIf]);
}

async function createSwitch(ns: string): Promise<void> {
  const steps = [
    ['netns', 'add', ns],
    ['-n', ns, 'link', 'set', 'lo', 'up'],
    // No STP: a port forwards as soon as it is up, so a healed link carries traffic at once.
    ['-n', ns, 'link', 'add', 'br0', 'type', 'bridge', 'stp_state', '0'],
    ['-n', ns, 'link', 'set', 'br0', 'up'],
  ];
  for (const args of steps) await runToolOk('ip', args);
}

async function plugIn(switchNs: string, m: BridgeMember): Promise<void> {
  const steps = [
    ['link', 'add', m.meshIf, 'netns', m.plan.ns, 'type', 'veth', 'peer', 'name', m.switchIf, 'netns', switchNs],
    ['-n', switchNs, 'link', 'set', m.switchIf, 'master', 'br0'],
    ['-n', switchNs, 'link', 'set', m.switchIf, 'up'],
    ['-n', m.plan.ns, 'addr', 'add', `${m.meshV4}/24`, 'dev', m.meshIf],
    ['-n', m.plan.ns, 'link', 'set', m.meshIf, 'up'],
  ];
  for (const args of steps) await runToolOk('ip', args);
}

/**
 * Gives the member a second IPv4 network that no other member is on (a veth pair inside its namespace,
 * both ends up, `cidr` on one), listed before its bridge port: its bridge port is plugged in again, so
 * the port comes after the new network in the interface order. A brain on two networks, the one its
 * peers share listed second. Resolves with a function that takes the second network away.
 */
export async function addSecondNetwork(net: BridgeNet, m: BridgeMember, cidr: string): Promise<() => Promise<void>> {
  const dev = `svo${process.pid}${m.meshIf.slice(-1)}`;
  const steps = [
    ['-n', m.plan.ns, 'link', 'add', dev, 'type', 'veth', 'peer', 'name', `${dev}p`],
    ['-n', m.plan.ns, 'addr', 'add', cidr, 'dev', dev],
    ['-n', m.plan.ns, 'link', 'set', dev, 'up'],
    ['-n', m.plan.ns, 'link', 'set', `${dev}p`, 'up'],
    ['-n', m.plan.ns, 'link', 'del', m.meshIf],
  ];
  for (const args of steps) await runToolOk('ip', args);
  await plugIn(net.switchNs, m);
  return async () => {
    await runToolOk('ip', ['-n', m.plan.ns, 'link', 'del', dev]);
  };
}

/** Cuts the member off the bridge (its port down, inside its namespace), or puts it back. */
export async function setBridgePort(m: BridgeMember, state: 'up' | 'down'): Promise<void> {
  await runToolOk('ip', ['-n', m.plan.ns, 'link', 'set', m.meshIf, state]);
}

/**
 * A root qdisc on the member's bridge link: `['netem', 'loss', '30%']`, `['tbf', 'rate', '2mbit', …]`;
 * `null` takes it away (and is a no-op on a link without one). `out`: only what the member sends (its
 * own port, inside its namespace); `both`: also what it receives (the bridge's end, in the switch).
 */
export async function setQdisc(net: BridgeNet, m: BridgeMember, qdisc: readonly string[] | null, direction: 'out' | 'both' = 'both'): Promise<void> {
  const ends = [[m.plan.ns, m.meshIf] as const, ...(direction === 'both' ? [[net.switchNs, m.switchIf] as const] : [])];
  for (const [ns, dev] of ends) {
    if (qdisc === null) await runTool('tc', ['-n', ns, 'qdisc', 'del', 'dev', dev, 'root']);
    else await runToolOk('tc', ['-n', ns, 'qdisc', 'replace', 'dev', dev, 'root', ...qdisc]);
  }
}

/** Puts every member back on the bridge with no qdisc: what a trial leaves for the next. */
export async function resetBridge(net: BridgeNet): Promise<void> {
  for (const m of net.members) {
    await setQdisc(net, m, null);
    await setBridgePort(m, 'up');
  }
}

/**
 * Whether `tc` is installed and this kernel has the qdisc `kind` (netem, tbf): tried on the bridge in
 * the switch namespace and taken away again. A machine may have tc without sch_netem.
 */
export async function hasQdisc(net: BridgeNet, kind: readonly string[]): Promise<boolean> {
  const add = await runTool('tc', ['-n', net.switchNs, 'qdisc', 'add', 'dev', 'br0', 'root', ...kind]).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (add === null || add.code !== 0) return false;
  await runToolOk('tc', ['-n', net.switchNs, 'qdisc', 'del', 'dev', 'br0', 'root']);
  return true;
}
