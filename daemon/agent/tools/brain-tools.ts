// The agent's own tools, about the brain itself and the home: status, list_devices, set_device.
import { Type } from '@sinclair/typebox';
import type { DashboardStatus } from '../../../protocol/dashboard';
import type { DeviceDirectory, DeviceSummary } from '../../kernel/ports';
import { defineTool, ToolFailure, type Tool } from '../../kernel/tool';

export interface BrainToolDeps {
  devices: DeviceDirectory;
  status: () => DashboardStatus;
}

export function brainTools(deps: BrainToolDeps): Tool[] {
  return [statusTool(deps.status), listDevicesTool(deps.devices), setDeviceTool(deps.devices)];
}

function statusTool(status: () => DashboardStatus): Tool {
  return defineTool({
    spec: { name: 'status', description: 'Brain status: version, uptime, sessions, model provider, devices.', parameters: Type.Object({}) },
    safety: 'passive',
    run: async () => {
      const s = status();
      const summary =
        `svc ${s.version} is ${s.status === 'ok' ? 'running' : 'stopping'}, up ${formatDuration(s.uptime_s)}; ` +
        `${s.sessions.open} open session${s.sessions.open === 1 ? '' : 's'}, ${answeringWith(s.provider)}, ${s.devices.connected} device${s.devices.connected === 1 ? '' : 's'} connected`;
      return {
        summary,
        data: s,
        ui: { id: 'brain-status', template: 'card', title: 'Brain status', data: { version: s.version, uptime_s: s.uptime_s, sessions: s.sessions.open, provider: s.provider.id, devices: s.devices.connected } },
      };
    },
  });
}

/** "answering with openai", "answering with claude (anthropic)", or that no provider can answer. */
export function answeringWith(p: DashboardStatus['provider']): string {
  if (p.id === 'none') return 'no model provider can answer (svc models list)';
  return `answering with ${p.id}${p.kind !== p.id ? ` (${p.kind})` : ''}`;
}

function listDevicesTool(devices: DeviceDirectory): Tool {
  return defineTool({
    spec: { name: 'list_devices', description: 'Devices known to the brain, with their state.', parameters: Type.Object({}) },
    safety: 'passive',
    run: async () => {
      const list = devices.list();
      if (list.length === 0) return { summary: 'No devices are connected (a board joins with node-agent run, a phone bridge with svc bridge pair; docs/hardware.md).', data: { devices: [] } };
      return {
        summary: `Devices: ${list.map(describeDevice).join('; ')}.`,
        data: { devices: list },
        sources: list.map((d) => `device:${d.id}`),
        ui: { id: 'devices', template: 'list', title: 'Devices', data: { items: list } },
      };
    },
  });
}

function setDeviceTool(devices: DeviceDirectory): Tool {
  return defineTool({
    spec: {
      name: 'set_device',
      description: 'Change a device: switch it on or off, or set a property (e.g. brightness) to a value.',
      parameters: Type.Object({
        device: Type.String({ minLength: 1, maxLength: 200, description: 'Device name or id' }),
        state: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off')])),
        property: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        value: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Number(), Type.Boolean()])),
      }),
    },
    safety: 'active',
    run: async ({ device, state, property, value }, ctx) => {
      const target = findDevice(devices.list(), device);
      if (!target) throw new ToolFailure(`there is no device called ${device}`);
      const changes: Record<string, string | number | boolean> = {};
      if (state !== undefined) changes.power = state;
      if (value !== undefined) changes[property ?? 'value'] = value;
      if (Object.keys(changes).length === 0) throw new ToolFailure('say what to change: state on/off, or a property and value');
      const after = await devices.set(target.id, changes, { tool: 'set_device', turnId: ctx.turnId });
      // What was asked, not every reading the device has: "Lamp is now on.", "Thermostat is now set to 21.5.", "Lamp is now brightness 40."
      const asked = Object.entries(changes).map(([k, v]) => (k === 'power' ? String(v) : k === 'value' ? `set to ${String(v)}` : `${k} ${String(v)}`));
      return { summary: `${after.name} is now ${asked.join(', ')}.`, data: after, sources: [`device:${after.id}`] };
    },
  });
}

export function findDevice(list: readonly DeviceSummary[], nameOrId: string): DeviceSummary | undefined {
  const wanted = nameOrId.trim().toLowerCase().replace(/^the\s+/, '');
  return list.find((d) => d.id.toLowerCase() === wanted || d.name.toLowerCase() === wanted) ?? list.find((d) => d.name.toLowerCase().includes(wanted));
}

const describeState = (d: DeviceSummary): string =>
  Object.entries(d.state)
    .map(([k, v]) => (k === 'power' ? String(v) : `${k} ${String(v)}`))
    .join(', ') || 'updated';

const describeDevice = (d: DeviceSummary): string => `${d.name} (${d.online ? describeState(d) : 'offline'})`;

export function formatDuration(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}
