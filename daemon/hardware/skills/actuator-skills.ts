// The actuating hand-written device skills (docs/hardware.md "Hand-written skills"): device_switch,
// device_signal and device_thermostat, each in one variant per safety class (skill-binding.ts). They
// pick a device and its action by the rules of skill-binding.ts and run it through Hardware.runAction,
// so a skill's call is the same recorded, rate-limited and verified command as a generated tool's.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { HardwareToolResult, NormalizedAction } from '../../../protocol/node';
import { defineTool, ToolDenied, ToolFailure, type SafetyLevel, type Tool, type ToolContext, type ToolOutcome } from '../../kernel/tool';
import type { DeviceSpec } from '../devices/device-manifest';
import type { Hardware } from '../hardware';
import {
  beepAction,
  blinkAction,
  findDevice,
  guard,
  isSignal,
  isSwitch,
  isThermostat,
  label,
  levelAction,
  powerAction,
  powerValue,
  scaleLevel,
  setpointAction,
  variantName,
  type Driven,
  type SkillDevice,
} from './skill-binding';

export const SWITCH_SKILL = 'device_switch';
export const SIGNAL_SKILL = 'device_signal';
export const THERMOSTAT_SKILL = 'device_thermostat';
/** How long a blink lasts when the device has no blink action of its own (on, wait, off). */
export const BLINK_MS = 500;

export interface ActuatorDeps {
  devices: () => SkillDevice[];
  runAction: Hardware['runAction'];
  /** Waits `ms` (between on and off of a blink); rejects when `signal` aborts. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

interface Step {
  action: NormalizedAction;
  params: Record<string, unknown>;
}

const DeviceArg = Type.String({ minLength: 1, maxLength: 128, description: 'The device id or name (case-insensitive)' });

const verifiedNote = (r: HardwareToolResult): string => (r.data.verified === true ? ' (verified)' : r.data.verified === false ? ' (not verified: the device did not read back the new state)' : '');

/** Runs steps in order as commands; a refused or failed one ends the call, naming what was done before it. */
async function runSteps(deps: ActuatorDeps, device: SkillDevice, steps: readonly (Step | number)[], tool: string, ctx: ToolContext): Promise<HardwareToolResult[]> {
  const results: HardwareToolResult[] = [];
  const done = (): string => (results.length > 0 ? ` (done before it: ${steps.filter((s): s is Step => typeof s !== 'number').slice(0, results.length).map((s) => s.action.name).join(', ')})` : '');
  for (const step of steps) {
    if (typeof step === 'number') {
      // A turn cancelled mid-blink still gets the steps after the wait (the LED switched off again).
      await deps.sleep(step, ctx.signal).catch((err: unknown) => {
        if (!ctx.signal.aborted) throw err;
      });
      continue;
    }
    const r = await deps.runAction(device.spec.deviceId, step.action.name, step.params, { tool, turnId: ctx.turnId });
    if (r.status === 'denied') throw new ToolDenied(`${label(device.spec)} ${step.action.name}: ${r.error ?? 'denied'}${done()}`);
    if (!r.success) throw new ToolFailure(`${label(device.spec)} ${step.action.name}: ${r.error ?? r.status}${done()}`);
    results.push(r);
  }
  return results;
}

const outcome = (device: SkillDevice, summary: string, steps: readonly (Step | number)[], results: readonly HardwareToolResult[], extra: Record<string, unknown> = {}): ToolOutcome => ({
  summary,
  data: {
    device_id: device.spec.deviceId,
    ...extra,
    commands: steps.filter((s): s is Step => typeof s !== 'number').map((s, i) => ({ action: s.action.name, params: s.params, verified: results[i]?.data.verified ?? null, command_id: results[i]?.data.command_id ?? null })),
  },
  sources: [`device:${device.spec.deviceId}`],
});

const powerStep = (power: Driven, on: boolean, extra: Record<string, unknown> = {}): Step => ({ action: power.action, params: { ...extra, [power.param.name]: powerValue(power.param, on) } });

/** One actuating skill: which devices it binds, which actions it may run on one, and its tool per safety class. */
export interface ActuatorFamily {
  base: string;
  bound: (spec: DeviceSpec) => boolean;
  actions: (spec: DeviceSpec) => NormalizedAction[];
  make: (deps: ActuatorDeps, level: SafetyLevel) => Tool;
}

const present = (...actions: (NormalizedAction | null | undefined)[]): NormalizedAction[] => [...new Set(actions.filter((a): a is NormalizedAction => a != null))];

function describeVariant(base: string, level: SafetyLevel, what: string): string {
  if (level === 'active') return `${what} A device whose action needs the user's confirmation is refused with the name of the ${base}_confirmed variant to call instead.`;
  return `${base} for devices whose action ${level === 'dangerous' ? 'is dangerous' : 'needs the user\'s confirmation (relays, valves, …)'}: every call waits for the user's approval before it runs. ${what}`;
}

const define = <S extends TSchema>(base: string, level: SafetyLevel, what: string, parameters: S, run: (args: Static<S>, ctx: ToolContext, name: string) => Promise<ToolOutcome>): Tool => {
  const name = variantName(base, level);
  return defineTool({ spec: { name, description: describeVariant(base, level, what), parameters }, safety: level, run: (args, ctx) => run(args, ctx, name) });
};

// ── device_switch ─────────────────────────────────────────────────────────────────────────────
const SwitchArgs = Type.Object(
  {
    device: DeviceArg,
    on: Type.Boolean({ description: 'true: on, false: off' }),
    brightness: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Percent, for a light with a brightness action; used when switching on' })),
  },
  { additionalProperties: false },
);
const SWITCH_KIND = 'switch, relay or light';

function switchSteps(device: SkillDevice, args: Static<typeof SwitchArgs>): Step[] {
  const power = powerAction(device.spec)!;
  if (args.brightness === undefined || !args.on) return [powerStep(power, args.on)];
  const level = levelAction(device.spec, power);
  if (!level) throw new ToolFailure(`${label(device.spec)} has no brightness action; switch it without brightness`);
  const value = scaleLevel(level.param, args.brightness);
  if (level.action === power.action) return [powerStep(power, true, { [level.param.name]: value })];
  return [powerStep(power, true), { action: level.action, params: { [level.param.name]: value } }];
}

export const switchFamily: ActuatorFamily = {
  base: SWITCH_SKILL,
  bound: isSwitch,
  actions: (spec) => {
    const power = powerAction(spec);
    return present(power?.action, levelAction(spec, power)?.action);
  },
  make: (deps, level) =>
    define(SWITCH_SKILL, level, 'Switch a switch, relay or light (by id or name) on or off; `brightness` 0–100 % sets a light\'s brightness when it has such an action.', SwitchArgs, async (args, ctx, name) => {
      const device = findDevice(deps.devices(), (d) => isSwitch(d.spec), SWITCH_KIND, args.device);
      const steps = switchSteps(device, args);
      guard(SWITCH_SKILL, level, device.spec, steps.map((s) => s.action));
      const results = await runSteps(deps, device, steps, name, ctx);
      const ignored = args.brightness !== undefined && !args.on ? ' (brightness applies only when switching on)' : '';
      const what = args.on && args.brightness !== undefined ? `on at ${args.brightness} %` : args.on ? 'on' : 'off';
      return outcome(device, `${device.spec.name}: ${what}${verifiedNote(results[results.length - 1]!)}${ignored}.`, steps, results, { on: args.on, ...(args.brightness !== undefined && args.on ? { brightness: args.brightness } : {}) });
    }),
};

// ── device_signal ─────────────────────────────────────────────────────────────────────────────
const SignalArgs = Type.Object(
  {
    device: DeviceArg,
    pattern: Type.Union([Type.Literal('blink'), Type.Literal('beep'), Type.Literal('on'), Type.Literal('off')]),
    duration_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'How long to blink or beep, in milliseconds' })),
  },
  { additionalProperties: false },
);
type SignalArgs = Static<typeof SignalArgs>;
const SIGNAL_KIND = 'LED or buzzer';

/** A blink or beep action's params: duration_ms when the action takes it (checked against its bounds). */
function pulseStep(spec: DeviceSpec, action: NormalizedAction, durationMs: number | undefined): Step {
  const param = action.params.find((p) => p.name === 'duration_ms');
  if (!param || durationMs === undefined) return { action, params: {} };
  if ((param.minimum !== undefined && durationMs < param.minimum) || (param.maximum !== undefined && durationMs > param.maximum)) {
    throw new ToolFailure(`${label(spec)} ${action.name} takes duration_ms from ${param.minimum ?? 1} to ${param.maximum ?? 'any'}`);
  }
  return { action, params: { duration_ms: durationMs } };
}

function signalSteps(spec: DeviceSpec, args: SignalArgs): (Step | number)[] {
  const power = powerAction(spec);
  const cannot = (what: string): ToolFailure => {
    const can = [power && 'on, off', blinkAction(spec) && 'blink', beepAction(spec) && 'beep'].filter(Boolean).join(', ');
    return new ToolFailure(`${label(spec)} cannot ${what}; it can: ${can || 'nothing a signal skill drives'}`);
  };
  if (args.pattern === 'on' || args.pattern === 'off') {
    if (!power) throw cannot(`be switched ${args.pattern}`);
    return [powerStep(power, args.pattern === 'on')];
  }
  if (args.pattern === 'beep') {
    const beep = beepAction(spec);
    if (!beep) throw cannot('beep');
    return [pulseStep(spec, beep, args.duration_ms)];
  }
  const blink = blinkAction(spec);
  if (blink) return [pulseStep(spec, blink, args.duration_ms)];
  if (!power) throw cannot('blink');
  return [powerStep(power, true), args.duration_ms ?? BLINK_MS, powerStep(power, false)];
}

export const signalFamily: ActuatorFamily = {
  base: SIGNAL_SKILL,
  bound: isSignal,
  actions: (spec) => present(powerAction(spec)?.action, blinkAction(spec), beepAction(spec)),
  make: (deps, level) =>
    define(
      SIGNAL_SKILL,
      level,
      'Signal with an LED or buzzer (by id or name): blink, beep, on or off. A device without a blink action of its own blinks as on, wait duration_ms (default 500), off.',
      SignalArgs,
      async (args, ctx, name) => {
        const device = findDevice(deps.devices(), (d) => isSignal(d.spec), SIGNAL_KIND, args.device);
        const steps = signalSteps(device.spec, args);
        guard(SIGNAL_SKILL, level, device.spec, steps.filter((s): s is Step => typeof s !== 'number').map((s) => s.action));
        const results = await runSteps(deps, device, steps, name, ctx);
        return outcome(device, `${device.spec.name}: ${args.pattern}${verifiedNote(results[results.length - 1]!)}.`, steps, results, { pattern: args.pattern });
      },
    ),
};

// ── device_thermostat ─────────────────────────────────────────────────────────────────────────
const ThermostatArgs = Type.Object({ device: DeviceArg, target_celsius: Type.Number({ minimum: -50, maximum: 100, description: 'The target temperature in °C' }) }, { additionalProperties: false });

/** What the verify loop's answer means for a set target. */
export function verifyNote(name: string, setpoint: Driven, target: number, r: HardwareToolResult): string {
  const contract = setpoint.action.verify;
  if (r.data.verified === null || !contract) return `target set to ${target} °C; ${name} declares no read-back, so it is not verified`;
  const aboutTarget = contract.expect === `$${setpoint.param.name}`;
  if (r.data.verified) return aboutTarget ? `verified: ${name} now reads target ${target} °C` : `verified: ${name} reads ${contract.field} back as expected`;
  const retries = contract.retries ?? 0;
  return `not verified: ${name} did not read back ${aboutTarget ? `target ${target} °C` : `the expected ${contract.field}`} after ${retries} ${retries === 1 ? 'retry' : 'retries'}`;
}

export const thermostatFamily: ActuatorFamily = {
  base: THERMOSTAT_SKILL,
  bound: isThermostat,
  actions: (spec) => present(setpointAction(spec)?.action),
  make: (deps, level) =>
    define(THERMOSTAT_SKILL, level, 'Set a thermostat\'s (by id or name) target temperature in °C; the answer says whether the thermostat read the new target back.', ThermostatArgs, async (args, ctx, name) => {
      const device = findDevice(deps.devices(), (d) => isThermostat(d.spec), 'thermostat', args.device);
      const setpoint = setpointAction(device.spec)!;
      const { minimum, maximum, type } = setpoint.param;
      if ((minimum !== undefined && args.target_celsius < minimum) || (maximum !== undefined && args.target_celsius > maximum)) {
        throw new ToolFailure(`${label(device.spec)} accepts a target from ${minimum ?? 'any'} to ${maximum ?? 'any'} °C`);
      }
      if (type === 'integer' && !Number.isInteger(args.target_celsius)) throw new ToolFailure(`${label(device.spec)} accepts whole degrees only`);
      const steps: Step[] = [{ action: setpoint.action, params: { [setpoint.param.name]: args.target_celsius } }];
      guard(THERMOSTAT_SKILL, level, device.spec, [setpoint.action]);
      const [result] = await runSteps(deps, device, steps, name, ctx);
      return outcome(device, `${device.spec.name}: ${verifyNote(device.spec.name, setpoint, args.target_celsius, result!)}.`, steps, [result!], { target_celsius: args.target_celsius, verified: result!.data.verified });
    }),
};

export const ACTUATOR_FAMILIES: readonly ActuatorFamily[] = [switchFamily, signalFamily, thermostatFamily];
