// /v1/node: the hardware node protocol (HUP 1.4 wire compatible; ../shared/spec/node-protocol.md is
// the contract, docs/node-protocol.md the developers' page). Defined once here for the brain's
// validation, the node-agent, the reference phone bridge and the tests alike.
//
// Minor versions are additive, so every payload schema lets unknown fields through (they are ignored,
// never refused); the bounds the contract names are enforced and a violation is error 1003.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const HUP_VERSION = '1.4.0';
/** The subprotocol a node may offer; the brain answers with it. */
export const HUP_SUBPROTOCOL = 'feral.hup.v1';
/** A node key presented as a subprotocol entry: `feral-token-<key>`. */
export const HUP_TOKEN_PROTOCOL_PREFIX = 'feral-token-';
/** Largest frame in either direction (a bigger one closes the socket with 1009). */
export const MAX_NODE_FRAME_BYTES = 1024 * 1024;
/** Decoded media limits: over them error 4020, frame dropped, socket stays open. */
export const MEDIA_LIMITS: Readonly<Record<string, number>> = { audio_frame: 64 * 1024, video_frame: 512 * 1024, camera_frame: 512 * 1024 };
export const DEFAULT_HEARTBEAT_MS = 10_000;
/** The brain answers node_register within this, or the node gives up. */
export const ACK_DEADLINE_MS = 5000;
export const NODE_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
export const ACTION_NAME_PATTERN = '^[A-Za-z0-9_]+$';

/** Error codes of the `error` frame (node-protocol.md "Error codes"). */
export const NodeErrorCode = {
  unauthorized: 1001,
  bad_schema: 1002,
  bad_payload: 1003,
  rate_limited: 1004,
  node_id_conflict: 1005,
  payload_too_large: 1006,
  timeout: 1007,
  internal: 1099,
  frame_too_large: 4020,
} as const;
export type NodeErrorName = keyof typeof NodeErrorCode;

/** Close codes the brain uses on /v1/node. */
export const NodeCloseCode = {
  normal: 1000,
  too_big: 1009,
  unauthorized: 4001,
  bad_schema: 4002,
  capability_denied: 4003,
  stale_heartbeat: 4004,
} as const;

export const NODE_TYPES = ['desktop', 'server', 'rpi', 'robot', 'glasses', 'phone', 'actuator', 'sensor', 'wearable', 'camera', 'vehicle', 'appliance'] as const;
export const NodeType = Type.Union(NODE_TYPES.map((t) => Type.Literal(t)));
export type NodeType = (typeof NODE_TYPES)[number];

/** The capability vocabulary; unknown strings are allowed too. */
export const CAPABILITY_VOCABULARY = [
  'heart_rate', 'spo2', 'temperature', 'uv', 'accelerometer', 'gyroscope', 'ambient_light', 'steps', 'battery', 'gps',
  'microphone', 'camera', 'display', 'speaker', 'haptic', 'buzzer', 'led', 'motor', 'relay', 'valve', 'keyboard',
  'applescript', 'filesystem', 'gpio', 'shell', 'telemetry', 'passive_sensor', 'active_actuator',
] as const;
/** Capabilities whose every command needs the user's confirmation (the permission plane's approval). */
export const CONFIRMATION_CAPABILITIES: readonly string[] = ['motor', 'relay', 'valve', 'gpio', 'shell', 'filesystem', 'keyboard', 'applescript'];
/** Opt-in tiers: off until the user turns them on (settings hardware.opt_in). */
export const OPT_IN_CAPABILITIES: readonly string[] = ['camera', 'microphone'];

const Open = <P extends Record<string, TSchema>>(props: P, description?: string) => Type.Object(props, { additionalProperties: true, ...(description ? { description } : {}) });
const Short = (max: number) => Type.String({ maxLength: max });
const NodeId = () => Type.String({ pattern: NODE_ID_PATTERN, maxLength: 128 });
const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

// ── The envelope ────────────────────────────────────────────────────────────────────────────────
/** Every frame, both directions. Extra top-level keys (node_id, seq, msg_id, message_id) are ignored. */
export const NodeEnvelope = Open({
  hup_version: Type.String({ minLength: 1, maxLength: 32 }),
  type: Type.String({ minLength: 1, maxLength: 64 }),
  ts: Type.Number(),
  payload: Type.Record(Type.String(), Type.Unknown()),
});
export type NodeEnvelope = Static<typeof NodeEnvelope>;

/** Whether a `hup_version` is one this brain speaks: any 1.x. */
export const supportedVersion = (version: string): boolean => /^1(\.\d+){0,2}([-+].*)?$/.test(version);

// ── Device self-description (actions[] envelope) ────────────────────────────────────────────────
export const ACTION_CATEGORIES = ['sensor', 'actuator', 'display', 'audio', 'network', 'compute'] as const;
export const PERMISSION_TIERS = ['passive', 'active', 'privileged', 'dangerous'] as const;
export type PermissionTier = (typeof PERMISSION_TIERS)[number];
export const PARAM_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;
export const TRANSPORT_KINDS = ['serial', 'ble', 'phone_ble', 'mesh', 'local'] as const;
export type TransportKind = (typeof TRANSPORT_KINDS)[number];

export const ActionParam = Open({
  name: Type.String({ minLength: 1, maxLength: 64, pattern: ACTION_NAME_PATTERN }),
  type: Type.Optional(Type.Union(PARAM_TYPES.map((t) => Type.Literal(t)))),
  required: Type.Optional(Type.Boolean()),
  description: Type.Optional(Short(500)),
  default: Type.Optional(Type.Unknown()),
  enum: Type.Optional(Type.Array(Scalar, { maxItems: 64 })),
  minimum: Type.Optional(Type.Number()),
  maximum: Type.Optional(Type.Number()),
});
export type ActionParam = Static<typeof ActionParam>;

export const VerifyContract = Open({
  via: Type.String({ minLength: 1, maxLength: 64, pattern: ACTION_NAME_PATTERN, description: 'A sensor action of the same device to read back' }),
  field: Type.String({ minLength: 1, maxLength: 128, description: 'Dotted path into the read-back result' }),
  expect: Type.Optional(Type.Union([Scalar, Type.Array(Scalar, { maxItems: 64 })], { description: 'A value, a list of accepted values, or "$param" to compare with that parameter' })),
  delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
  retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
  transient: Type.Optional(Type.Boolean({ description: 'The state does not persist: verified means "readable"' })),
  tolerance: Type.Optional(Type.Number({ minimum: 0, description: 'svc: numeric comparisons pass within ±tolerance' })),
});
export type VerifyContract = Static<typeof VerifyContract>;

/** One action as a node declares it. `id` and `parameters` are accepted aliases of `name` and `params` (normalised by normalizeAction). */
export const DeviceAction = Open({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: ACTION_NAME_PATTERN })),
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: ACTION_NAME_PATTERN })),
  category: Type.Optional(Type.Union(ACTION_CATEGORIES.map((c) => Type.Literal(c)))),
  permission_tier: Type.Optional(Type.Union(PERMISSION_TIERS.map((t) => Type.Literal(t)))),
  requires_confirmation: Type.Optional(Type.Boolean()),
  reversible: Type.Optional(Type.Boolean()),
  description: Type.Optional(Short(1000)),
  params: Type.Optional(Type.Array(ActionParam, { maxItems: 32 })),
  parameters: Type.Optional(Type.Array(ActionParam, { maxItems: 32 })),
  returns: Type.Optional(Type.Unknown()),
  rate_limit_per_minute: Type.Optional(Type.Integer({ minimum: 1, maximum: 6000 })),
  verify: Type.Optional(VerifyContract),
  safety_notes: Type.Optional(Short(1000)),
  capability: Type.Optional(Short(64)),
});
export type DeviceAction = Static<typeof DeviceAction>;

export const DeviceTransport = Open({ kind: Type.Union(TRANSPORT_KINDS.map((k) => Type.Literal(k))) });

export const DeviceManifest = Open({
  device_id: Type.String({ minLength: 1, maxLength: 64, pattern: ACTION_NAME_PATTERN }),
  device_type: Type.String({ minLength: 1, maxLength: 64 }),
  name: Type.String({ minLength: 1, maxLength: 128 }),
  manufacturer: Type.Optional(Short(128)),
  model: Type.Optional(Short(128)),
  firmware_version: Type.Optional(Short(64)),
  transport: Type.Optional(DeviceTransport),
  capabilities: Type.Optional(Type.Array(Short(64), { maxItems: 64 })),
  sensors: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 64 })),
  actuators: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 64 })),
  actions: Type.Array(DeviceAction, { maxItems: 64 }),
});
export type DeviceManifest = Static<typeof DeviceManifest>;

/** An action with its aliases resolved and its defaults applied. */
export interface NormalizedAction {
  name: string;
  category: (typeof ACTION_CATEGORIES)[number];
  permission_tier: PermissionTier;
  requires_confirmation: boolean;
  reversible: boolean;
  description: string;
  params: ActionParam[];
  rate_limit_per_minute: number | null;
  verify: VerifyContract | null;
  safety_notes: string | null;
  capability: string | null;
}

/** Resolves `id`/`parameters` and applies the contract's defaults; null when the action has no name at all. */
export function normalizeAction(a: DeviceAction): NormalizedAction | null {
  const name = a.name ?? a.id;
  if (name === undefined) return null;
  return {
    name,
    category: a.category ?? 'actuator',
    permission_tier: a.permission_tier ?? 'passive',
    requires_confirmation: a.requires_confirmation ?? false,
    reversible: a.reversible ?? true,
    description: a.description ?? '',
    params: a.params ?? a.parameters ?? [],
    rate_limit_per_minute: a.rate_limit_per_minute ?? null,
    verify: a.verify ?? null,
    safety_notes: a.safety_notes ?? null,
    capability: a.capability ?? null,
  };
}

// ── Node → brain ───────────────────────────────────────────────────────────────────────────────
export const NodeRegister = Open({
  node_id: NodeId(),
  node_type: NodeType,
  capabilities: Type.Array(Short(64), { maxItems: 128 }),
  name: Type.Optional(Short(128)),
  manufacturer: Type.Optional(Short(128)),
  model: Type.Optional(Short(128)),
  firmware_version: Type.Optional(Short(64)),
  platform: Type.Optional(Short(64)),
  os: Type.Optional(Short(64)),
  sensors: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 128 })),
  actuators: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 128 })),
  location: Type.Optional(Type.Unknown()),
  tags: Type.Optional(Type.Array(Short(64), { maxItems: 64 })),
  /** svc: one manifest, or (node-agent boards with several devices) a list of them. */
  device_manifest: Type.Optional(Type.Union([DeviceManifest, Type.Array(DeviceManifest, { maxItems: 64 })])),
  /** svc node-agent: its version (the node-agent's package version). */
  agent_version: Type.Optional(Short(64)),
  uptime_s: Type.Optional(Type.Number({ minimum: 0 })),
});
export type NodeRegister = Static<typeof NodeRegister>;

export const NodeHeartbeat = Open({
  ts: Type.Optional(Type.Number()),
  battery_pct: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  rssi: Type.Optional(Type.Number({ minimum: -200, maximum: 50 })),
  uptime_s: Type.Optional(Type.Number({ minimum: 0 })),
});
export type NodeHeartbeat = Static<typeof NodeHeartbeat>;

export const DeviceEvent = Open({
  node_id: Type.Optional(NodeId()),
  /** svc: which of the node's devices; absent ⇒ the node itself. */
  device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  event_type: Type.String({ minLength: 1, maxLength: 64 }),
  data: Type.Record(Type.String(), Type.Unknown()),
  ts: Type.Optional(Type.Number()),
});
export type DeviceEvent = Static<typeof DeviceEvent>;

export const ActionResponse = Open({
  action_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  request_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  success: Type.Boolean(),
  result: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  error: Type.Optional(Type.Union([Type.String({ maxLength: 4000 }), Type.Null()])),
  duration_ms: Type.Optional(Type.Number({ minimum: 0 })),
});
export type ActionResponse = Static<typeof ActionResponse>;

export const BridgedPeripheral = Open({
  device_id: Type.String({ minLength: 1, maxLength: 64, pattern: ACTION_NAME_PATTERN }),
  kind: Type.String({ minLength: 1, maxLength: 64 }),
  protocol: Type.Optional(Short(64)),
  capabilities: Type.Optional(Type.Array(Short(64), { maxItems: 64 })),
  status: Type.Optional(Short(32)),
  manifest: Type.Optional(DeviceManifest),
});
export type BridgedPeripheral = Static<typeof BridgedPeripheral>;

export const PeripheralBridgeRegister = Open({
  bridge_id: Type.String({ minLength: 1, maxLength: 128, pattern: NODE_ID_PATTERN }),
  platform: Type.Union([Type.Literal('ios'), Type.Literal('android')]),
  devices: Type.Array(BridgedPeripheral, { maxItems: 64 }),
  expires_at: Type.Optional(Type.Number()),
});
export type PeripheralBridgeRegister = Static<typeof PeripheralBridgeRegister>;

export const ChatRequest = Open({
  session_id: Type.String({ minLength: 1, maxLength: 200 }),
  text: Type.String({ minLength: 1, maxLength: 16_000 }),
  reply_mode: Type.Optional(Type.Union([Type.Literal('stream'), Type.Literal('final')])),
});
export type ChatRequest = Static<typeof ChatRequest>;

/** Legacy telemetry shapes (deprecated, accepted): telemetry {sensors}, sensor_telemetry {sensor, data}, sensor_batch {readings}. */
export const LegacyTelemetry = Open({ sensors: Type.Record(Type.String(), Type.Unknown()) });
export const LegacySensorTelemetry = Open({ sensor: Type.String({ minLength: 1, maxLength: 64 }), data: Type.Unknown() });
export const LegacySensorBatch = Open({ readings: Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 1000 }) });

/** Deprecated message names and what they mean now (logged once per node). */
export const TYPE_ALIASES: Readonly<Record<string, string>> = {
  register: 'node_register',
  heartbeat: 'node_heartbeat',
  command: 'hup_action_request',
  execute: 'hup_action_request',
  hup_execute: 'hup_action_request',
  execute_result: 'hup_action_response',
};

// ── Brain → node ───────────────────────────────────────────────────────────────────────────────
export const NodeAck = Open({
  node_id: NodeId(),
  session_token: Type.String(),
  heartbeat_ms: Type.Integer({ minimum: 100 }),
  server_time: Type.Number(),
  granted_capabilities: Type.Array(Type.String()),
  denied_capabilities: Type.Array(Type.String()),
  primary_session_id: Type.Optional(Type.String()),
});
export type NodeAck = Static<typeof NodeAck>;

export const ActionRequest = Open({
  action_id: Type.String({ minLength: 1, maxLength: 64 }),
  name: Type.String({ minLength: 1, maxLength: 64 }),
  params: Type.Record(Type.String(), Type.Unknown()),
  timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 120_000 })),
  requires_confirmation: Type.Optional(Type.Boolean()),
  /** svc: the device of a multi-device node the action is for. */
  device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});
export type ActionRequest = Static<typeof ActionRequest>;

export const NodeErrorPayload = Open({
  code: Type.Integer(),
  name: Type.String(),
  message: Type.String(),
  recoverable: Type.Boolean(),
  ref_action_id: Type.Union([Type.String(), Type.Null()]),
});
export type NodeErrorPayload = Static<typeof NodeErrorPayload>;

export const ChatResponse = Open({
  session_id: Type.String(),
  text: Type.String(),
  final: Type.Boolean(),
});
export type ChatResponse = Static<typeof ChatResponse>;

/** The payload schema of each message type the brain reads from a node (after alias resolution). */
export const NODE_INBOUND = {
  node_register: NodeRegister,
  node_heartbeat: NodeHeartbeat,
  device_event: DeviceEvent,
  hup_action_response: ActionResponse,
  peripheral_bridge_register: PeripheralBridgeRegister,
  chat_request: ChatRequest,
  node_bye: Open({ reason: Type.Optional(Short(200)) }),
  telemetry: LegacyTelemetry,
  sensor_telemetry: LegacySensorTelemetry,
  sensor_batch: LegacySensorBatch,
} as const;
export type NodeInboundType = keyof typeof NODE_INBOUND;

/** The payload schema of each message type a node reads from the brain. */
export const NODE_OUTBOUND = {
  node_ack: NodeAck,
  hup_action_request: ActionRequest,
  error: NodeErrorPayload,
  node_bye: Open({ reason: Type.Optional(Type.String()) }),
  chat_response: ChatResponse,
} as const;

/** A frame as either side writes it. */
export const nodeFrame = (type: string, payload: Record<string, unknown>, now = Date.now()): string =>
  JSON.stringify({ hup_version: HUP_VERSION, type, ts: Math.round(now) / 1000, payload });

// ── What the hardware tools answer (node-protocol.md "Device self-description") ──────────────────
export const TOOL_RESULT_STATUSES = ['success', 'failure', 'denied', 'timeout', 'pending_confirmation'] as const;
export const HardwareToolResult = Type.Object({
  success: Type.Boolean(),
  status: Type.Union(TOOL_RESULT_STATUSES.map((s) => Type.Literal(s))),
  data: Type.Intersect([Type.Record(Type.String(), Type.Unknown()), Type.Object({ verified: Type.Union([Type.Boolean(), Type.Null()]) })]),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type HardwareToolResult = Static<typeof HardwareToolResult>;
