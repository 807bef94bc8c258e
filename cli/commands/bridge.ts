// svc bridge (spec 4.14; docs/phone-bridge.md): phone-bridged BLE. A phone that relays BLE
// peripherals pairs as a node (its key opens /v1/node), then registers them with
// peripheral_bridge_register; they are devices with transport phone_ble.
//   svc bridge pair [--name NAME] [--pin] [--ttl S] [--no-wait] [--json]
//       mint a node pairing token for node_id phone-<slug of name>, show its QR code and pair URL, wait for the claim
//   svc bridge list [--json]     the bridged peripherals by bridge, online or not, with their last readings
//   svc bridge                   usage, then the list
import type { Sade } from 'sade';
import type { ConnectedDevice, ConnectedDeviceList } from '../../protocol/hardware';
import { callBrain, type Connection } from '../connection';
import { reportError, str, table, type CliIo, type CommandContext } from './key';
import { pair, type PairDeps } from './pair';

type Opts = Record<string, unknown>;

export const BRIDGE_TRANSPORT = 'phone_ble';
/** The name a bridge gets when `--name` is not given; its node_id is then phone-bridge. */
export const DEFAULT_BRIDGE_NAME = 'bridge';

export const BRIDGE_USAGE = `svc bridge — phone-bridged BLE: a phone relays the BLE peripherals near it to the brain
  svc bridge pair [--name NAME] [--pin] [--ttl S] [--no-wait] [--json]   pair a phone as a bridge (QR code and URL)
  svc bridge list [--json]                                               the bridged peripherals
`;

/**
 * The node_id of a bridge named `name`: `phone-` and the name in lower case, every run of characters
 * outside [a-z0-9] one `-`, accents dropped, at most 64 characters (node-protocol.md allows 128).
 */
export function bridgeNodeId(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return `phone-${slug === '' ? DEFAULT_BRIDGE_NAME : slug}`;
}

export interface BridgePairArgs {
  name?: string | undefined;
  pin: boolean;
  ttl?: string | undefined;
  wait: boolean;
  json: boolean;
}

export async function bridgePair(conn: Connection, io: CliIo, args: BridgePairArgs, deps?: PairDeps): Promise<number> {
  const name = args.name ?? DEFAULT_BRIDGE_NAME;
  const nodeId = bridgeNodeId(name);
  if (!args.json) {
    io.out.write(`pairing a phone bridge "${name}" as node ${nodeId}\n`);
    io.out.write('scan the code with the svc app on the phone (phone bridge), or give the URL to the reference client:\n');
    io.out.write("  node dist/phone-bridge.mjs pair '<the URL below>'\n\n");
  }
  const code = await pair(conn, io, { kind: 'node', nodeId, name, pin: args.pin, ttl: args.ttl, wait: args.wait, json: args.json }, deps);
  if (code === 0 && args.wait && !args.json) io.out.write('its peripherals show in `svc bridge list` once the bridge runs\n');
  return code;
}

export interface Bridge {
  node_id: string;
  /** Whether any of its peripherals is reachable now (the bridge's link is up). */
  online: boolean;
  devices: ConnectedDevice[];
}

/** The phone_ble devices grouped by the node (bridge) relaying them, bridges and devices sorted by id. */
export function bridgesOf(list: ConnectedDeviceList): Bridge[] {
  const byNode = new Map<string, ConnectedDevice[]>();
  for (const d of list.devices) {
    if (d.transport !== BRIDGE_TRANSPORT) continue;
    byNode.set(d.node_id, [...(byNode.get(d.node_id) ?? []), d]);
  }
  return [...byNode.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([node_id, devices]) => ({ node_id, online: devices.some((d) => d.online), devices: devices.sort((a, b) => a.device_id.localeCompare(b.device_id)) }));
}

/** "12 s ago", "3 min ago", "2 h ago", "4 d ago". */
export function age(at: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(at)) / 1000));
  if (!Number.isFinite(s)) return '?';
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  if (s < 172_800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

function readings(d: ConnectedDevice, now: number): string {
  const entries = Object.entries(d.readings).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return '-';
  return entries.map(([key, r]) => `${key}=${String(r.value)} (${age(r.at, now)})`).join(', ');
}

export function describeBridges(bridges: readonly Bridge[], now: number): string {
  if (bridges.length === 0) return 'no bridged peripherals; `svc bridge pair` pairs a phone as a bridge\n';
  return bridges
    .map((b) => {
      const head = `bridge ${b.node_id}: ${b.online ? 'online' : 'offline'}, ${b.devices.length} peripheral${b.devices.length === 1 ? '' : 's'}\n`;
      const rows = b.devices.map((d) => [d.device_id, d.name, d.type, d.online ? 'online' : 'offline', d.battery_pct === null ? '-' : `${d.battery_pct}%`, readings(d, now)]);
      return head + table([['DEVICE', 'NAME', 'TYPE', 'STATE', 'BATTERY', 'LAST READINGS'], ...rows]);
    })
    .join('\n');
}

export async function bridgeList(conn: Connection, io: CliIo, args: { json: boolean; now?: () => number }): Promise<number> {
  const r = await callBrain<ConnectedDeviceList>(conn, 'GET', '/api/devices/connected');
  if (r.status !== 200) return reportError(io, r.status, r.body);
  const bridges = bridgesOf(r.body);
  io.out.write(args.json ? `${JSON.stringify({ bridges })}\n` : describeBridges(bridges, (args.now ?? Date.now)()));
  return 0;
}

export function registerBridgeCommands(prog: Sade, ctx: CommandContext): void {
  prog
    .command('bridge', 'Phone-bridged BLE: usage and the bridged peripherals (pair, list)')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => {
      if (o.json !== true) ctx.out.write(`${BRIDGE_USAGE}\n`);
      ctx.exit(await bridgeList(ctx.conn(o), ctx, { json: o.json === true }));
    });
  prog
    .command('bridge pair', 'Pair a phone as a BLE bridge: prints a QR code and a one-time URL for node phone-<name>, waits for the phone')
    .option('--name', `A name for the bridge (default "${DEFAULT_BRIDGE_NAME}"); its node_id is phone-<name>`)
    .option('--pin', 'Also ask for a PIN the brain chooses and prints here')
    .option('--ttl', 'Seconds the code stays valid (60-86400, default 600)')
    .option('--no-wait', 'Print the code and URL and exit without waiting for the phone')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await bridgePair(ctx.conn(o), ctx, { name: str(o.name), pin: o.pin === true, ttl: str(o.ttl), wait: o.wait !== false, json: o.json === true })));
  prog
    .command('bridge list', 'The peripherals phone bridges relay, by bridge: online or not, battery, last readings')
    .option('--json', 'Machine-readable output')
    .action(async (o: Opts) => ctx.exit(await bridgeList(ctx.conn(o), ctx, { json: o.json === true })));
}
