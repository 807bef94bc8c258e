// svc devices (spec 4.14; docs/pairing.md): the paired devices and which are connected now (their open
// /v1/session sockets).
//   svc devices [--json]
import type { Sade } from 'sade';
import type { PairedList } from '../../protocol/pairing';
import { callBrain, type Connection } from '../connection';
import { reportError, table, type CliIo, type CommandContext } from './key';

export function describeDevices(list: PairedList): string {
  if (list.devices.length === 0) return 'no paired devices; `svc pair` pairs a phone, browser, board or brain\n';
  const connected = list.devices.filter((d) => d.connections > 0).length;
  const rows = list.devices.map((d) => [d.device_id, d.kind, d.name, d.connections > 0 ? `connected (${d.connections})` : 'not connected']);
  return `${table([['ID', 'KIND', 'NAME', 'STATE'], ...rows])}${list.devices.length} paired, ${connected} connected\n`;
}

export async function devices(conn: Connection, io: CliIo, json: boolean): Promise<number> {
  const r = await callBrain<PairedList>(conn, 'GET', '/api/devices/paired');
  if (r.status !== 200) return reportError(io, r.status, r.body);
  io.out.write(json ? `${JSON.stringify(r.body.devices)}\n` : describeDevices(r.body));
  return 0;
}

export function registerDeviceCommands(prog: Sade, ctx: CommandContext): void {
  prog
    .command('devices', 'Paired devices and which are connected now')
    .option('--json', 'Machine-readable output')
    .action(async (o: Record<string, unknown>) => ctx.exit(await devices(ctx.conn(o), ctx, o.json === true)));
}
