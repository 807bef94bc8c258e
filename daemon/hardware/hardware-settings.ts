// The `hardware` section of settings.json (docs/hardware.md "Settings"). SVC_GENERIC_HARDWARE_SKILLS
// overlays `generic_tools` (daemon/config/environment.ts).
import { Type, type Static } from '@sinclair/typebox';

const Threshold = Type.Object(
  {
    reading: Type.String({ minLength: 1, maxLength: 64, description: 'The reading name, e.g. celsius' }),
    device: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'One device id; absent: every device with this reading' })),
    above: Type.Optional(Type.Number()),
    below: Type.Optional(Type.Number()),
  },
  { additionalProperties: false },
);

export const HardwareSettings = Type.Object(
  {
    heartbeat_ms: Type.Integer({ minimum: 1000, maximum: 300_000, default: 10_000, description: 'node_ack heartbeat_ms: a node silent for 3 of these is closed (4004)' }),
    generic_tools: Type.Boolean({ default: true, description: 'Generate an LLM tool per device action (hwdev_<device>__<action>); false uses the hand-written device skills instead (SVC_GENERIC_HARDWARE_SKILLS=0)' }),
    opt_in: Type.Object(
      {
        camera: Type.Boolean({ default: false, description: 'Accept camera events and actions' }),
        microphone: Type.Boolean({ default: false, description: 'Accept microphone events and actions' }),
      },
      { additionalProperties: false, default: {} },
    ),
    actuator_rate_per_minute: Type.Integer({ minimum: 1, maximum: 6000, default: 10, description: 'Commands per minute per device for active actuators, unless the action declares its own rate_limit_per_minute' }),
    flood: Type.Object(
      {
        frames: Type.Integer({ minimum: 10, maximum: 1_000_000, default: 200, description: 'Frames one node may send per window before 1004 rate_limited' }),
        per_ms: Type.Integer({ minimum: 100, maximum: 60_000, default: 1000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    telemetry: Type.Object(
      {
        history_points: Type.Integer({ minimum: 10, maximum: 10_000, default: 240, description: 'Points kept per reading (downsampled as they age)' }),
        history_window_s: Type.Integer({ minimum: 60, maximum: 7 * 86_400, default: 86_400, description: 'How far back the history reaches' }),
        stream_to_sessions: Type.Boolean({ default: true, description: 'Relay readings to /v1/session clients as telemetry frames' }),
      },
      { additionalProperties: false, default: {} },
    ),
    commands: Type.Object(
      {
        keep: Type.Integer({ minimum: 100, maximum: 1_000_000, default: 10_000, description: 'Commands kept in the store; older ones are pruned' }),
      },
      { additionalProperties: false, default: {} },
    ),
    alerts: Type.Object(
      {
        thresholds: Type.Array(Threshold, { default: [], maxItems: 256 }),
        battery_low_pct: Type.Number({ minimum: 0, maximum: 100, default: 15 }),
        node_offline_after_s: Type.Integer({ minimum: 10, maximum: 86_400, default: 120, description: 'A node gone this long raises a node_offline alert' }),
      },
      { additionalProperties: false, default: {} },
    ),
    local_agent: Type.Object(
      {
        enabled: Type.Boolean({ default: false, description: 'Supervise a node-agent child for this board\'s own serial/BLE devices' }),
        config: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'Its config file (default $SVC_HOME/node-agent.json)' })),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false, default: {}, description: 'Hardware: /v1/node, devices, commands, telemetry (docs/hardware.md)' },
);
export type HardwareSettings = Static<typeof HardwareSettings>;
