// svc devices (spec 4.14; docs/hardware.md, docs/pairing.md): the connected devices — hardware devices
// with their node, transport and last readings, the nodes with their heartbeat freshness — and the
// paired phones, browsers, boards and brains with their open connections.
//   svc devices [--json]
import type { Sade } from 'sade';
import type { PairedList } from '../../protocol/pairing';
import type { ConnectedDevice, ConnectedDeviceList, NodeHealthList } from '../../protocol/hardware';
import { callBrain, type Connection } from '../connection';
import { reportError, table, type CliIo, type CommandContext } from './key';

export interface DevicesView {
  devices: ConnectedDevice[];
  nodes: NodeHealthList['nodes'];
  paired: PairedList['devices'];
}

const MAX_READINGS_SHOWN = 4;

function readings(d: ConnectedDevice): string {
  const entries = Object.entries(d.readings);
  if (entries.length === 0) return '-';
  const shown = entries.slice(0, MAX_READINGS_SHOWN).map(([name, r]) => `${name}=${String(r.value)}`);
  return entries.length > MAX_READINGS_SHOWN ? `${shown.join(' ')} …` : shown.join(' ');
}

const age = (seconds: number | null): string => (seconds === null ? '-' : seconds < 60 ? `${Math.round(seconds)} s ago` : `${Math.round(seconds / 60)} min ago`);

export function describeDevices(view: DevicesView): string {
  let text = '';
  if (view.devices.length === 0) {
    text += 'no hardware devices; a board joins with `node-agent run` (docs/hardware.md), a phone bridge with `svc bridge pair`\n';
  } else {
    const rows = view.devices.map((d) => [d.device_id, d.name, d.type, d.transport, d.node_id, d.online ? 'online' : 'offline', readings(d)]);
    text += table([['DEVICE', 'NAME', 'TYPE', 'TRANSPORT', 'NODE', 'STATE', 'LAST READINGS'], ...rows]);
  }
  if (view.nodes.length > 0) {
    const rows = view.nodes.map((n) => [n.node_id, n.node_type, n.freshness, age(n.heartbeat_age_s), n.version ?? '-', String(n.devices)]);
    text += `\n${table([['NODE', 'TYPE', 'FRESHNESS', 'HEARTBEAT', 'VERSION', 'DEVICES'], ...rows])}`;
  }
  const connected = view.paired.filter((d) => d.connections > 0).length;
  text += view.paired.length === 0 ? '\nno paired devices; `svc pair` pairs a phone, browser, board or brain\n' : `\n${view.paired.length} paired, ${connected} with an open session (svc pair list)\n`;
  return text;
}

export async function devices(conn: Connection, io: CliIo, json: boolean): Promise<number> {
  const connected = await callBrain<ConnectedDeviceList>(conn, 'GET', '/api/devices/connected');
  if (connected.status !== 200) return reportError(io, connected.status, connected.body);
  const nodes = await callBrain<NodeHealthList>(conn, 'GET', '/api/nodes/health');
  if (nodes.status !== 200) return reportError(io, nodes.status, nodes.body);
  const paired = await callBrain<PairedList>(conn, 'GET', '/api/devices/paired');
  if (paired.status !== 200) return reportError(io, paired.status, paired.body);
  const view: DevicesView = { devices: connected.body.devices, nodes: nodes.body.nodes, paired: paired.body.devices };
  io.out.write(json ? `${JSON.stringify(view)}\n` : describeDevices(view));
  return 0;
}

export function registerDeviceCommands(prog: Sade, ctx: CommandContext): void {
  prog
    .command('devices', 'Connected hardware devices and nodes, and the paired devices')
    .option('--json', 'Machine-readable output: {devices, nodes, paired}')
    .action(async (o: Record<string, unknown>) => ctx.exit(await devices(ctx.conn(o), ctx, o.json === true)));
}
