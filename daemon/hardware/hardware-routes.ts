// Devices, nodes and commands over HTTP (spec 4.6, 3.4; protocol/hardware.ts; docs/hardware.md "API"):
// GET /api/devices/connected, GET /api/nodes/health, GET /api/commands/recent and
// GET /api/commands/{command_id}. The query and path are checked by the route schemas (docs/api.md
// "Input rules": a limit outside 1–500 or not plain decimal digits is a 400, never clamped).
import { Type } from '@sinclair/typebox';
import type { TypedRoutes } from '../http/route-kit';
import { notFound } from '../kernel/errors';
import { ErrorEnvelope } from '../../protocol/errors';
import { Id } from '../../protocol/text';
import { COMMAND_LIST_LIMIT, CommandList, CommandListQuery, CommandRecord, ConnectedDeviceList, NodeHealthList } from '../../protocol/hardware';
import type { CommandListQuery as Query, CommandRecord as Command, ConnectedDevice, NodeHealthEntry } from '../../protocol/hardware';

export interface HardwareViews {
  devices(): ConnectedDevice[];
  nodes(): NodeHealthEntry[];
  recent(filter: { limit: number; device?: string; status?: Query['status'] }): Command[];
  command(commandId: string): Command | undefined;
}

const CommandParams = Type.Object({ command_id: Id({ maxLength: 64 }) }, { additionalProperties: false });
const errors = { 400: ErrorEnvelope, 404: ErrorEnvelope };

export const hardwareRoutes =
  (views: HardwareViews): TypedRoutes =>
  async (app) => {
    app.get('/api/devices/connected', { schema: { response: { 200: ConnectedDeviceList } } }, async () => ({ devices: views.devices() }));
    app.get('/api/nodes/health', { schema: { response: { 200: NodeHealthList } } }, async () => ({ nodes: views.nodes() }));
    app.get('/api/commands/recent', { schema: { querystring: CommandListQuery, response: { 200: CommandList, ...errors } } }, async (request) => {
      const { limit, device, status } = request.query;
      return { commands: views.recent({ limit: limit ?? COMMAND_LIST_LIMIT.default, ...(device === undefined ? {} : { device }), ...(status === undefined ? {} : { status }) }) };
    });
    app.get('/api/commands/:command_id', { schema: { params: CommandParams, response: { 200: CommandRecord, ...errors } } }, async (request) => {
      const command = views.command(request.params.command_id);
      if (!command) throw notFound('command', request.params.command_id);
      return command;
    });
  };
