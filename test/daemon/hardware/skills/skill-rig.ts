// The device layer of hardware-rig.ts (real SQLite file, real ToolRegistry and bus, scripted nodes
// behind the NodeLinks seam) with the hand-written device skills on top, the manifests of the common
// device kinds and node scripts that remember what was set.
import { pino } from 'pino';
import type { ActionRequest, DeviceManifest, HardwareToolResult } from '../../../../protocol/node';
import type { ToolOutcome } from '../../../../daemon/kernel/tool';
import { DeviceSkills } from '../../../../daemon/hardware/skills/device-skills';
import { hardwareRig, settingsWith, type Answer, type Rig } from '../hardware-rig';

export interface SkillRig {
  rig: Rig;
  skills: DeviceSkills;
  /** Ms the skills waited (blink), in order. */
  waits: number[];
  /** Runs a tool as the agent would (the registry's argument check first), turn `turn-1`. */
  call(tool: string, args: Record<string, unknown>): Promise<ToolOutcome & { data: SkillData }>;
}

export interface SkillData {
  device_id: string;
  verified?: boolean | null;
  commands: { action: string; params: Record<string, unknown>; verified: boolean | null; command_id: string | null }[];
  devices?: unknown[];
}

export async function skillRig(t: { after(fn: () => unknown): void }, genericTools = false): Promise<SkillRig> {
  const rig = await hardwareRig(t, settingsWith({ generic_tools: genericTools }));
  const waits: number[] = [];
  const skills = new DeviceSkills({
    hardware: rig.hw,
    tools: rig.tools,
    owner: 'hardware',
    bus: rig.bus,
    clock: rig.clock,
    logger: pino({ level: 'silent' }),
    genericTools,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  });
  skills.start();
  t.after(() => skills.stop());
  return { rig, skills, waits, call: async (tool, args) => (await rig.call(tool, args)) as ToolOutcome & { data: SkillData & HardwareToolResult } };
}

export const relayManifest = (over: Partial<DeviceManifest> = {}): DeviceManifest => ({
  device_id: 'garage_relay',
  device_type: 'relay',
  name: 'Garage door relay',
  capabilities: ['relay'],
  actions: [
    { name: 'set_relay', category: 'actuator', permission_tier: 'active', capability: 'relay', params: [{ name: 'on', type: 'boolean', required: true }] },
    { name: 'read_relay', category: 'sensor', params: [] },
  ],
  ...over,
});

/** A dimmable light: one action takes power as "on"/"off" and brightness 0..255. */
export const dimmerManifest = (): DeviceManifest => ({
  device_id: 'ceiling',
  device_type: 'light',
  name: 'Ceiling light',
  capabilities: ['light'],
  actions: [
    {
      name: 'set_light',
      category: 'actuator',
      permission_tier: 'active',
      params: [
        { name: 'power', enum: ['ON', 'OFF'], required: true },
        { name: 'brightness', type: 'integer', minimum: 0, maximum: 255 },
      ],
    },
  ],
});

export const thermostatManifest = (over: Partial<DeviceManifest> = {}): DeviceManifest => ({
  device_id: 'hall_thermostat',
  device_type: 'thermostat',
  name: 'Hall thermostat',
  capabilities: ['thermostat', 'temperature'],
  actions: [
    {
      name: 'set_target',
      category: 'actuator',
      permission_tier: 'active',
      params: [{ name: 'target_celsius', type: 'number', minimum: 5, maximum: 30, required: true }],
      verify: { via: 'read_state', field: 'target', expect: '$target_celsius', tolerance: 0.1, retries: 1, delay_ms: 0 },
    },
    { name: 'read_state', category: 'sensor', params: [] },
  ],
  ...over,
});

export const sensorManifest = (id: string, name: string): DeviceManifest => ({
  device_id: id,
  device_type: 'sensor',
  name,
  capabilities: ['temperature', 'humidity'],
  actions: [{ name: 'read_temperature', category: 'sensor', params: [] }],
});

/** A thermostat node: set_target stores the target (the first `drop` sets do not stick), read_state reports it. */
export function thermostatScript(state = { target: 18, drop: 0 }): Answer {
  return (request: ActionRequest) => {
    if (request.name === 'set_target') {
      if (state.drop > 0) state.drop--;
      else state.target = request.params.target_celsius as number;
      return { action_id: request.action_id, success: true, result: { accepted: true } };
    }
    if (request.name === 'read_state') return { action_id: request.action_id, success: true, result: { target: state.target, celsius: 19.5 } };
    return { action_id: request.action_id, success: false, error: `unknown action ${request.name}` };
  };
}

/** A node that accepts every action and remembers nothing. */
export const acceptAll: Answer = (request) => ({ action_id: request.action_id, success: true, result: {} });
