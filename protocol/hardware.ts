// Devices, nodes, commands and proactive alerts over HTTP (spec 4.6, 3.4; docs/hardware.md). The spec
// names the paths and leaves the shapes "not shown"; everything here is that design.
import { Type, type Static } from '@sinclair/typebox';
import { Id, Line } from './text';

/** Bounds of GET /api/commands/recent?limit=: outside them, or not an integer, is a 400. */
export const COMMAND_LIST_LIMIT = { min: 1, max: 500, default: 50 } as const;

/**
 * The command lifecycle (spec 3.4; docs/hardware.md "Commands"):
 *   queued → sent → succeeded | failed | timeout
 *   queued → pending_confirmation → queued (approved) | denied (rejected) | cancelled (expired)
 *   queued → denied (permission plane, opt-in tier off, rate limit) | failed (device offline) | cancelled
 *   sent → cancelled (the brain stops)
 */
export const COMMAND_STATUSES = ['queued', 'sent', 'succeeded', 'failed', 'timeout', 'denied', 'pending_confirmation', 'cancelled'] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];
export const CommandStatusSchema = Type.Union(COMMAND_STATUSES.map((s) => Type.Literal(s)));
export const TERMINAL_COMMAND_STATUSES: readonly CommandStatus[] = ['succeeded', 'failed', 'timeout', 'denied', 'cancelled'];

export const CommandTransition = Type.Object({
  status: CommandStatusSchema,
  at: Type.String({ description: 'ISO 8601' }),
  detail: Type.Union([Type.String(), Type.Null()]),
});
export type CommandTransition = Static<typeof CommandTransition>;

export const CommandRecord = Type.Object({
  command_id: Type.String(),
  device_id: Type.String(),
  node_id: Type.String(),
  action: Type.String(),
  tool: Type.Union([Type.String(), Type.Null()]),
  params: Type.Record(Type.String(), Type.Unknown()),
  status: CommandStatusSchema,
  verified: Type.Union([Type.Boolean(), Type.Null()]),
  attempts: Type.Integer(),
  result: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  turn_id: Type.Union([Type.String(), Type.Null()]),
  approval_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
  history: Type.Array(CommandTransition),
});
export type CommandRecord = Static<typeof CommandRecord>;

export const CommandListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: COMMAND_LIST_LIMIT.min, maximum: COMMAND_LIST_LIMIT.max })),
    device: Type.Optional(Id({ maxLength: 64 })),
    status: Type.Optional(CommandStatusSchema),
  },
  { additionalProperties: false },
);
export type CommandListQuery = Static<typeof CommandListQuery>;
export const CommandList = Type.Object({ commands: Type.Array(CommandRecord) });
export type CommandList = Static<typeof CommandList>;

export const Reading = Type.Object({
  value: Type.Union([Type.Number(), Type.String(), Type.Boolean(), Type.Null()]),
  at: Type.String(),
});
export type Reading = Static<typeof Reading>;

export const FRESHNESS = ['fresh', 'stale', 'offline'] as const;
export type Freshness = (typeof FRESHNESS)[number];

export const ConnectedDevice = Type.Object({
  device_id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  transport: Type.String({ description: 'How the brain reaches it: local (the brain-local node-agent), mesh (another board\'s node-agent or node) or phone_ble (a phone bridge)' }),
  bus: Type.Union([Type.String(), Type.Null()], { description: 'The device\'s own link to its node as its manifest names it: serial, ble, …' }),
  node_id: Type.String(),
  online: Type.Boolean(),
  last_seen: Type.Union([Type.String(), Type.Null()]),
  readings: Type.Record(Type.String(), Reading),
  battery_pct: Type.Union([Type.Number(), Type.Null()]),
  rssi: Type.Union([Type.Number(), Type.Null()]),
  capabilities: Type.Array(Type.String()),
  actions: Type.Array(Type.Object({ name: Type.String(), tool: Type.Union([Type.String(), Type.Null()]), category: Type.String(), permission_tier: Type.String(), requires_confirmation: Type.Boolean() })),
});
export type ConnectedDevice = Static<typeof ConnectedDevice>;
export const ConnectedDeviceList = Type.Object({ devices: Type.Array(ConnectedDevice) });
export type ConnectedDeviceList = Static<typeof ConnectedDeviceList>;

export const NodeHealthEntry = Type.Object({
  node_id: Type.String(),
  name: Type.String(),
  node_type: Type.String(),
  online: Type.Boolean(),
  freshness: Type.Union(FRESHNESS.map((f) => Type.Literal(f))),
  heartbeat_age_s: Type.Union([Type.Number(), Type.Null()]),
  last_heartbeat_at: Type.Union([Type.String(), Type.Null()]),
  heartbeat_ms: Type.Integer(),
  version: Type.Union([Type.String(), Type.Null()]),
  uptime_s: Type.Union([Type.Number(), Type.Null()]),
  battery_pct: Type.Union([Type.Number(), Type.Null()]),
  rssi: Type.Union([Type.Number(), Type.Null()]),
  devices: Type.Integer(),
  connected_at: Type.Union([Type.String(), Type.Null()]),
});
export type NodeHealthEntry = Static<typeof NodeHealthEntry>;
export const NodeHealthList = Type.Object({ nodes: Type.Array(NodeHealthEntry) });
export type NodeHealthList = Static<typeof NodeHealthList>;

export const ALERT_KINDS = ['threshold', 'battery_low', 'node_offline'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export const ProactiveAlert = Type.Object({
  alert_id: Type.String(),
  kind: Type.Union(ALERT_KINDS.map((k) => Type.Literal(k))),
  category: Type.Literal('proactive'),
  device_id: Type.Union([Type.String(), Type.Null()]),
  node_id: Type.Union([Type.String(), Type.Null()]),
  reading: Type.Union([Type.String(), Type.Null()]),
  value: Type.Union([Type.Number(), Type.String(), Type.Boolean(), Type.Null()]),
  threshold: Type.Union([Type.Number(), Type.Null()]),
  message: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('dismissed'), Type.Literal('cleared')]),
  created_at: Type.String(),
  dismissed_at: Type.Union([Type.String(), Type.Null()]),
});
export type ProactiveAlert = Static<typeof ProactiveAlert>;
export const ProactiveAlertList = Type.Object({ alerts: Type.Array(ProactiveAlert) });

export const DismissBody = Type.Object(
  {
    alert_id: Id({ maxLength: 64 }),
    reason: Type.Optional(Line({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
export type DismissBody = Static<typeof DismissBody>;
export const DismissResult = Type.Object({
  alert: ProactiveAlert,
  learned: Type.Object({
    suppressed_until: Type.Union([Type.String(), Type.Null()]),
    threshold: Type.Union([Type.Number(), Type.Null()]),
    dismissals: Type.Integer(),
  }),
});
export type DismissResult = Static<typeof DismissResult>;
