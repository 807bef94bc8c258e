// How the hand-written device skills (docs/hardware.md "Hand-written skills") find their devices and
// the action to run, from what a device declares: capabilities, device type and the shape of its
// actions. Nothing here runs anything; device-skills.ts does, through Hardware.runAction.
//
// Rules (first match wins where an order is given):
// - power action (device_switch, device_signal on/off): an action that is not a sensor, with a param
//   `on` (boolean), else `power` or `state` (boolean; an enum holding "on"/"off" or true/false; a free
//   string gets "on"/"off"; 0/1 numbers), whose other required params all have defaults. Preferred:
//   the action's own capability is a switch capability, then the fewest params, then declared order.
// - level action (brightness): the power action when it also takes a numeric `brightness` or `level`,
//   else another such action. 0–100 % is scaled onto the param's minimum..maximum (default 0..100).
// - setpoint action (device_thermostat): a numeric param target_celsius, target_temperature, setpoint,
//   then (on a thermostat by capability or type only) target, temperature, celsius.
// - blink / beep actions (device_signal): named blink|flash, resp. beep|buzz|tone|chime|sound, or a
//   buzzer-capability actuator taking `duration_ms`.
// Which skill a device belongs to: switch = a switch capability or type with a power action; signal =
// capability or type led/buzzer with a power, blink or beep action; thermostat = a setpoint action;
// climate = capability or type temperature/humidity/thermostat, or a temperature or humidity reading
// (climate-skill.ts).
//
// A device is named by its id or name, case-insensitively; when neither matches exactly, by the
// devices of the skill's kind whose id or name contains the words given. More than one match lists
// the candidates; none lists the devices of that kind.
import type { ActionParam, NormalizedAction } from '../../../protocol/node';
import { SAFETY_ORDER, ToolDenied, ToolFailure, type SafetyLevel } from '../../kernel/tool';
import type { DeviceSpec } from '../devices/device-manifest';
import { safetyOf } from '../devices/device-tools';

export type Scalar = string | number | boolean | null;

/** A device as a skill sees it: its spec, whether it can be reached, and its last readings (epoch ms). */
export interface SkillDevice {
  spec: DeviceSpec;
  online: boolean;
  readings: Readonly<Record<string, { value: Scalar; at: number }>>;
}

export const SWITCH_CAPABILITIES: readonly string[] = ['relay', 'led', 'light', 'switch'];
export const SWITCH_TYPES: readonly string[] = ['switch', 'relay', 'light', 'lamp', 'plug'];
export const SIGNAL_CAPABILITIES: readonly string[] = ['led', 'buzzer'];
const SETPOINT_PARAMS = ['target_celsius', 'target_temperature', 'setpoint'];
const THERMOSTAT_ONLY_SETPOINT_PARAMS = ['target', 'temperature', 'celsius'];
const LEVEL_PARAMS = ['brightness', 'level'];
const BLINK_NAMES = ['blink', 'flash'];
const BEEP_NAMES = ['beep', 'buzz', 'tone', 'chime', 'sound'];

const lower = (s: string): string => s.toLowerCase();
const hasAny = (values: readonly string[], wanted: readonly string[]): boolean => values.some((v) => wanted.includes(lower(v)));
const isNumeric = (p: ActionParam): boolean => p.type === 'number' || p.type === 'integer';

/** Whether `spec` declares one of `capabilities` or is one of `types`. */
export const declares = (spec: DeviceSpec, capabilities: readonly string[], types: readonly string[] = capabilities): boolean =>
  hasAny(spec.capabilities, capabilities) || types.includes(lower(spec.type));

/** Every required param other than `given` has a default: the action can be run with just those. */
const runnableWith = (action: NormalizedAction, given: readonly string[]): boolean =>
  action.params.every((p) => given.includes(p.name) || p.required !== true || p.default !== undefined);

const actuators = (spec: DeviceSpec): NormalizedAction[] => spec.actions.filter((a) => a.category !== 'sensor');

/** An action and the param through which a skill drives it. */
export interface Driven {
  action: NormalizedAction;
  param: ActionParam;
}

/** The value `on` takes for a power param, or undefined when the param is not an on/off param. */
export function powerValue(param: ActionParam, on: boolean): unknown {
  if (param.name === 'on') return param.type === 'boolean' ? on : undefined;
  if (param.name !== 'power' && param.name !== 'state') return undefined;
  if (param.enum && param.enum.length > 0) {
    const word = param.enum.find((v) => typeof v === 'string' && lower(v) === (on ? 'on' : 'off'));
    if (word !== undefined) return word;
    if (param.enum.includes(on)) return on;
    return param.enum.includes(on ? 1 : 0) ? (on ? 1 : 0) : undefined;
  }
  if (param.type === 'boolean') return on;
  if (param.type === 'string') return on ? 'on' : 'off';
  if (isNumeric(param) && (param.minimum ?? 0) <= 0 && (param.maximum ?? 1) >= 1) return on ? 1 : 0;
  return undefined;
}

export function powerAction(spec: DeviceSpec): Driven | null {
  let best: (Driven & { rank: number }) | null = null;
  for (const action of actuators(spec)) {
    const param = ['on', 'power', 'state'].map((n) => action.params.find((p) => p.name === n)).find((p) => p !== undefined && powerValue(p, true) !== undefined);
    if (!param || !runnableWith(action, [param.name])) continue;
    const rank = (action.capability !== null && SWITCH_CAPABILITIES.includes(action.capability) ? 0 : 100) + action.params.length;
    if (!best || rank < best.rank) best = { action, param, rank };
  }
  return best && { action: best.action, param: best.param };
}

/** The action and numeric param that set a brightness: the power action's own when it has one. */
export function levelAction(spec: DeviceSpec, power: Driven | null): Driven | null {
  const levelOf = (a: NormalizedAction): ActionParam | undefined => a.params.find((p) => LEVEL_PARAMS.includes(p.name) && isNumeric(p));
  const own = power && levelOf(power.action);
  if (power && own) return { action: power.action, param: own };
  for (const action of actuators(spec)) {
    const param = levelOf(action);
    if (param && runnableWith(action, [param.name])) return { action, param };
  }
  return null;
}

/** A percentage (0–100) on a param's minimum..maximum (default 0..100), rounded for an integer param. */
export function scaleLevel(param: ActionParam, pct: number): number {
  const min = param.minimum ?? 0;
  const max = param.maximum ?? 100;
  const value = min + ((max - min) * pct) / 100;
  return param.type === 'integer' ? Math.round(value) : value;
}

export function setpointAction(spec: DeviceSpec): Driven | null {
  const names = declares(spec, ['thermostat']) ? [...SETPOINT_PARAMS, ...THERMOSTAT_ONLY_SETPOINT_PARAMS] : SETPOINT_PARAMS;
  for (const name of names) {
    for (const action of actuators(spec)) {
      const param = action.params.find((p) => p.name === name && isNumeric(p));
      if (param && runnableWith(action, [name])) return { action, param };
    }
  }
  return null;
}

const named = (spec: DeviceSpec, names: readonly string[]): NormalizedAction | null =>
  actuators(spec).find((a) => names.some((n) => lower(a.name) === n || lower(a.name).startsWith(`${n}_`)) && runnableWith(a, ['duration_ms'])) ?? null;

export const blinkAction = (spec: DeviceSpec): NormalizedAction | null => named(spec, BLINK_NAMES);

export function beepAction(spec: DeviceSpec): NormalizedAction | null {
  const byName = named(spec, BEEP_NAMES);
  if (byName) return byName;
  return actuators(spec).find((a) => a.capability === 'buzzer' && a.params.some((p) => p.name === 'duration_ms') && runnableWith(a, ['duration_ms'])) ?? null;
}

export const isSwitch = (spec: DeviceSpec): boolean => {
  const power = powerAction(spec);
  return power !== null && (declares(spec, SWITCH_CAPABILITIES, SWITCH_TYPES) || (power.action.capability !== null && SWITCH_CAPABILITIES.includes(power.action.capability)));
};

export const isSignal = (spec: DeviceSpec): boolean => declares(spec, SIGNAL_CAPABILITIES) && (powerAction(spec) !== null || blinkAction(spec) !== null || beepAction(spec) !== null);

export const isThermostat = (spec: DeviceSpec): boolean => setpointAction(spec) !== null;

/** What a failure calls a device: `Desk lamp (desk_lamp)`. */
export const label = (spec: DeviceSpec): string => `${spec.name} (${spec.deviceId})`;

const listOf = (devices: readonly SkillDevice[]): string => devices.map((d) => label(d.spec)).join(', ');

/**
 * The device of a skill's kind that `query` names (module comment): a ToolFailure when there is no
 * such device, when the name fits none of them, or when it fits several (the candidates listed).
 */
export function findDevice(all: readonly SkillDevice[], bound: (device: SkillDevice) => boolean, kind: string, query: string): SkillDevice {
  const candidates = all.filter(bound);
  if (candidates.length === 0) throw new ToolFailure(`there is no ${kind} here: no registered device is one`);
  const q = lower(query.trim());
  const exact = all.filter((d) => lower(d.spec.deviceId) === q || lower(d.spec.name) === q);
  const exactOfKind = exact.filter(bound);
  if (exactOfKind.length === 1) return exactOfKind[0]!;
  if (exactOfKind.length > 1) throw ambiguous(query, exactOfKind);
  if (exact.length > 0) throw new ToolFailure(`${listOf(exact)} is not a ${kind} (type ${exact[0]!.spec.type}, capabilities ${exact[0]!.spec.capabilities.join(', ') || 'none'}); the ${kind} devices: ${listOf(candidates)}`);
  const words = q.split(/\s+/).filter((w) => w.length > 0);
  const partial = candidates.filter((d) => words.length > 0 && words.every((w) => lower(d.spec.name).includes(w) || lower(d.spec.deviceId).includes(w)));
  if (partial.length === 1) return partial[0]!;
  if (partial.length > 1) throw ambiguous(query, partial);
  throw new ToolFailure(`no ${kind} is named ${JSON.stringify(query)}; the ${kind} devices: ${listOf(candidates)}`);
}

const ambiguous = (query: string, matches: readonly SkillDevice[]): ToolFailure =>
  new ToolFailure(`${JSON.stringify(query)} could be any of: ${listOf(matches)}; name one by its id`);

// ── Safety classes ────────────────────────────────────────────────────────────────────────────
// A skill's safety is fixed when it is registered, but what it may run depends on the device named.
// So each actuating skill comes in one variant per safety class: `device_switch` (active),
// `device_switch_confirmed` (privileged) and `device_switch_dangerous` (dangerous). A variant runs an
// action only when the action's own safety (device-tools.ts safetyOf, the generated tools' mapping) is
// at most its own; otherwise it refuses (ToolDenied) naming the variant that may, whose every call the
// permission plane holds for the user's approval. Never a bypass: a relay is only ever switched by a
// call the user approved.
export const SKILL_LEVELS: readonly SafetyLevel[] = ['active', 'privileged', 'dangerous'];

export const variantName = (base: string, level: SafetyLevel): string =>
  level === 'privileged' ? `${base}_confirmed` : level === 'dangerous' ? `${base}_dangerous` : base;

/** The safety class of running `actions` of `spec`: the most cautious of theirs, at least active. */
export function classOf(spec: DeviceSpec, actions: readonly NormalizedAction[]): SafetyLevel {
  let level: SafetyLevel = 'active';
  for (const action of actions) {
    const own = safetyOf(action, spec.capabilities);
    if (SAFETY_ORDER[own] > SAFETY_ORDER[level]) level = own;
  }
  return level;
}

/** Refuses when running `actions` needs a more cautious class than the variant `level` of `base`. */
export function guard(base: string, level: SafetyLevel, spec: DeviceSpec, actions: readonly NormalizedAction[]): void {
  const needed = classOf(spec, actions);
  if (SAFETY_ORDER[needed] <= SAFETY_ORDER[level]) return;
  const what = actions.map((a) => a.name).join(' and ');
  throw new ToolDenied(
    `${label(spec)}: ${what} is ${needed === 'dangerous' ? 'a dangerous action' : 'an action that needs the user\'s confirmation'}; ${variantName(base, level)} does not run it. Call ${variantName(base, needed)} with the same arguments: it runs once the user approves the request.`,
  );
}
