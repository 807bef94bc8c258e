// A device action as an LLM tool (node-protocol.md "Device self-description"; docs/hardware.md
// "Tools"): its name `hwdev_<device>__<action>`, its argument schema built from `params`, and the
// safety level the permission plane decides on.
//
// Safety, from the action's declared facts (the most cautious rule wins):
//   category sensor with tier passive            → passive
//   any other category (it changes the world)    → at least active, even when its tier says passive
//   permission_tier active / privileged / dangerous → that level
//   requires_confirmation, or a capability of CONFIRMATION_CAPABILITIES (relay, motor, valve, …)
//                                                → at least privileged (the approvals capability holds it)
// An action's capability is its own `capability`; an action without one takes the device's capabilities
// (for a sensor action only the non-actuating ones count: reading a relay's state needs no confirmation).
import { createHash } from 'node:crypto';
import { Type, type TSchema } from '@sinclair/typebox';
import { CONFIRMATION_CAPABILITIES, OPT_IN_CAPABILITIES, type ActionParam, type NormalizedAction } from '../../../protocol/node';
import { SAFETY_ORDER, type SafetyLevel } from '../../kernel/tool';

export const TOOL_PREFIX = 'hwdev_';
const MAX_TOOL_NAME = 64;

/**
 * `hwdev_<device>__<action>` in lower case (the registry's names are lower_snake_case). A name longer
 * than 64 characters is cut to 55 and given `_` and the first 8 hex digits of sha256("<device>/<action>"),
 * so it stays unique and exactly 64 long; the tool's description names the device and action in full.
 */
export function toolName(deviceId: string, action: string): string {
  const full = `${TOOL_PREFIX}${deviceId}__${action}`.toLowerCase();
  if (full.length <= MAX_TOOL_NAME) return full;
  const hash = createHash('sha256').update(`${deviceId}/${action}`).digest('hex').slice(0, 8);
  return `${full.slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}

/** The capabilities an action stands for: its own, or the device's. */
export function capabilitiesOf(action: NormalizedAction, deviceCapabilities: readonly string[]): readonly string[] {
  return action.capability === null ? deviceCapabilities : [action.capability];
}

/** Whether every command of this action needs the user's confirmation. */
export function needsConfirmation(action: NormalizedAction, deviceCapabilities: readonly string[]): boolean {
  if (action.requires_confirmation) return true;
  if (action.category === 'sensor' && action.capability === null) return false;
  return capabilitiesOf(action, deviceCapabilities).some((c) => CONFIRMATION_CAPABILITIES.includes(c));
}

/** The opt-in capability (camera, microphone) an action needs, or null. */
export function optInOf(action: NormalizedAction, deviceCapabilities: readonly string[]): string | null {
  return capabilitiesOf(action, deviceCapabilities).find((c) => OPT_IN_CAPABILITIES.includes(c)) ?? null;
}

/** Whether the per-device actuator rate limit applies: every action that is not a read. */
export const isActuator = (action: NormalizedAction): boolean => action.category !== 'sensor';

const atLeast = (a: SafetyLevel, b: SafetyLevel): SafetyLevel => (SAFETY_ORDER[a] >= SAFETY_ORDER[b] ? a : b);

export function safetyOf(action: NormalizedAction, deviceCapabilities: readonly string[]): SafetyLevel {
  let level: SafetyLevel = action.permission_tier;
  if (isActuator(action)) level = atLeast(level, 'active');
  if (needsConfirmation(action, deviceCapabilities)) level = atLeast(level, 'privileged');
  return level;
}

/** The JSON schema of one parameter (type, enum, bounds, default, description). */
function paramSchema(p: ActionParam): TSchema {
  const meta = {
    ...(p.description === undefined ? {} : { description: p.description }),
    ...(p.default === undefined ? {} : { default: p.default }),
  };
  const bounds = { ...(p.minimum === undefined ? {} : { minimum: p.minimum }), ...(p.maximum === undefined ? {} : { maximum: p.maximum }) };
  if (p.enum && p.enum.length > 0) return Type.Union(p.enum.map((v) => (v === null ? Type.Null() : Type.Literal(v))), meta);
  switch (p.type) {
    case 'number':
      return Type.Number({ ...bounds, ...meta });
    case 'integer':
      return Type.Integer({ ...bounds, ...meta });
    case 'boolean':
      return Type.Boolean(meta);
    case 'object':
      return Type.Record(Type.String(), Type.Unknown(), meta);
    case 'array':
      return Type.Array(Type.Unknown(), meta);
    case 'string':
      return Type.String(meta);
    default:
      // No type declared: any JSON scalar.
      return Type.Union([Type.String(), Type.Number(), Type.Boolean()], meta);
  }
}

/** The tool's argument schema: one property per param, `required` ones required, nothing else accepted. */
export function argumentSchema(params: readonly ActionParam[]): TSchema {
  const props: Record<string, TSchema> = {};
  for (const p of params) props[p.name] = p.required === true ? paramSchema(p) : Type.Optional(paramSchema(p));
  return Type.Object(props, { additionalProperties: false });
}

/** The arguments with each absent param's declared default filled in (what the node receives). */
export function withDefaults(params: readonly ActionParam[], args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...args };
  for (const p of params) if (out[p.name] === undefined && p.default !== undefined) out[p.name] = p.default;
  return out;
}

/** The tool's description: the device, what the action does, its safety notes, and that it waits for confirmation. */
export function toolDescription(deviceName: string, deviceId: string, action: NormalizedAction, confirm: boolean): string {
  const what = action.description || action.name.replace(/_/g, ' ');
  const parts = [`${deviceName} (device ${deviceId}, action ${action.name}): ${what}.`];
  if (action.category === 'sensor') parts.push('Read-only.');
  if (action.safety_notes) parts.push(`Safety: ${action.safety_notes}`);
  if (confirm) parts.push('Each call waits for the user\'s confirmation.');
  return parts.join(' ').slice(0, 1000);
}
