// The agent's view of the devices (kernel/ports.ts DeviceDirectory): list_devices, set_device and the
// context builder. A change is run as a command through the same runner as the generated tools, so it
// is rate-limited, verified and recorded alike (docs/hardware.md "set_device").
//
// Which action a change runs: the changes' keys are matched against each actuator action's params
// (every action but sensors). `power: "on"|"off"` goes to a param named `power` or `state`, else to a
// boolean param `on` (true/false); `value` goes to an action's only param. An action qualifies when
// it takes every key and each of its required params is given (or has a default); of those, the one
// with the fewest params left unset wins, then the first declared. Values are converted to the
// param's type where that is unambiguous ("on"/"true" → true, "21.5" → 21.5).
// An action that needs the user's confirmation is refused here (set_device cannot ask for it): the
// command is recorded as denied and the answer names the device's own tool, which goes through approvals.
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import type { ActionParam } from '../../../protocol/node';
import { argumentSchema, withDefaults } from './device-tools';
import type { DeviceChangeOrigin, DeviceDirectory, DeviceSummary } from '../../kernel/ports';
import { AppError } from '../../kernel/errors';
import { ToolDenied, ToolFailure } from '../../kernel/tool';
import type { ActionEntry, Device } from './device-registry';

type Change = string | number | boolean;

export interface Chosen {
  entry: ActionEntry;
  params: Record<string, unknown>;
}

function convert(param: ActionParam, value: Change): unknown {
  if (param.type === 'boolean' && typeof value === 'string') {
    const v = value.toLowerCase();
    if (v === 'on' || v === 'true') return true;
    if (v === 'off' || v === 'false') return false;
  }
  if ((param.type === 'number' || param.type === 'integer') && typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  if (param.type === 'string' && typeof value !== 'string') return String(value);
  return value;
}

/** The params an action would get for `changes`, or null when it does not take them all. */
function fit(entry: ActionEntry, changes: Record<string, Change>): Record<string, unknown> | null {
  const byName = new Map(entry.action.params.map((p) => [p.name, p]));
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    let name: string | undefined = key;
    if (key === 'power') name = byName.has('power') ? 'power' : byName.has('state') ? 'state' : byName.get('on')?.type === 'boolean' ? 'on' : undefined;
    else if (key === 'value' && !byName.has('value') && entry.action.params.length === 1) name = entry.action.params[0]!.name;
    const param = name === undefined ? undefined : byName.get(name);
    if (!param || name === undefined) return null;
    params[name] = convert(param, value);
  }
  for (const p of entry.action.params) if (p.required === true && params[p.name] === undefined && p.default === undefined) return null;
  return params;
}

export function chooseAction(device: Device, changes: Record<string, Change>): Chosen | null {
  let best: (Chosen & { unset: number }) | null = null;
  for (const entry of device.actions.values()) {
    if (entry.action.category === 'sensor') continue;
    const params = fit(entry, changes);
    if (!params) continue;
    const unset = entry.action.params.length - Object.keys(params).length;
    if (!best || unset < best.unset) best = { entry, params, unset };
  }
  return best && { entry: best.entry, params: best.params };
}

export interface DirectoryDeps {
  devices: () => Iterable<Device>;
  find: (deviceId: string) => Device | undefined;
  summary: (device: Device) => DeviceSummary;
  /** Runs the chosen action as a command; `refuse` records it denied with that reason instead. */
  run: (device: Device, chosen: Chosen, refuse: string | undefined, origin: DeviceChangeOrigin | undefined) => Promise<{ success: boolean; status: string; error: string | null; data: Record<string, unknown> }>;
}

export class HardwareDirectory implements DeviceDirectory {
  /** Each action's argument check, compiled on its first set_device (as the tool registry does for tools). */
  private readonly checks = new WeakMap<ActionEntry, TypeCheck<TSchema>>();

  constructor(private readonly deps: DirectoryDeps) {}

  list(): DeviceSummary[] {
    return [...this.deps.devices()].map((d) => this.deps.summary(d));
  }

  async set(deviceId: string, changes: Record<string, Change>, origin?: DeviceChangeOrigin): Promise<DeviceSummary> {
    const device = this.deps.find(deviceId);
    if (!device) throw new AppError('NOT_FOUND', `device ${JSON.stringify(deviceId)} not found`, { device: deviceId });
    const chosen = chooseAction(device, changes);
    if (!chosen) {
      const actuators = [...device.actions.values()].filter((e) => e.action.category !== 'sensor').map((e) => `${e.action.name}(${e.action.params.map((p) => p.name).join(', ')})`);
      throw new ToolFailure(`${device.spec.name} has no action that takes ${Object.keys(changes).join(', ')}; its actions: ${actuators.join('; ') || 'none'}`);
    }
    this.check(device, chosen);
    const refuse = chosen.entry.confirm ? `${chosen.entry.action.name} needs the user's confirmation${chosen.entry.tool ? `: use the tool ${chosen.entry.tool}` : ''}` : undefined;
    const result = await this.deps.run(device, chosen, refuse, origin);
    if (result.status === 'denied') throw new ToolDenied(`${device.spec.name}: ${result.error ?? 'denied'}`);
    if (!result.success) throw new ToolFailure(`${device.spec.name}: ${result.error ?? result.status}`);
    const after = this.deps.summary(device);
    const state = { ...after.state };
    for (const [k, v] of Object.entries(result.data)) if (k !== 'command_id' && k !== 'verified' && (v === null || ['string', 'number', 'boolean'].includes(typeof v))) state[k] = v as Change | null;
    return { ...after, state };
  }

  /** The converted values against the action's schema (bounds, enums): a ToolFailure naming the first problems. */
  private check(device: Device, chosen: Chosen): void {
    let check = this.checks.get(chosen.entry);
    if (!check) this.checks.set(chosen.entry, (check = TypeCompiler.Compile(argumentSchema(chosen.entry.action.params))));
    const params = withDefaults(chosen.entry.action.params, chosen.params);
    if (check.Check(params)) return;
    const problems = [...check.Errors(params)].slice(0, 3).map((e) => `${e.path.slice(1) || 'value'}: ${e.message}`);
    throw new ToolFailure(`${device.spec.name} ${chosen.entry.action.name}: ${problems.join('; ')}`);
  }
}
