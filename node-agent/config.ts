// The node-agent's config file (docs/node-agent.md "The config file"): one JSON file that names the
// node and declares its devices by adapter. Validated against the TypeBox schema below; an invalid file
// is an AgentConfigError listing every problem with its JSON path (like the brain's settings,
// daemon/config/load-settings.ts), which `run` prints before exiting with 78 (EX_CONFIG). Regular
// expressions and templates are checked here too, so a device never fails on its config at run time.
import { readFile } from 'node:fs/promises';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ACTION_NAME_PATTERN, DeviceAction, NODE_ID_PATTERN, NodeType, normalizeAction } from '../protocol/node';
import { bleDeviceProblems } from './adapters/ble-config';
import { LineProtocolFraming, lineProtocolProblems } from './adapters/line-protocol';

export type { LineCommand, TelemetryParser } from './adapters/line-protocol';
export { LineProtocolFraming };

export const CONFIG_VERSION = 1;

const Id = Type.String({ minLength: 1, maxLength: 64, pattern: ACTION_NAME_PATTERN, description: 'The device id on the brain: [A-Za-z0-9_]{1,64}' });
const Common = {
  id: Id,
  name: Type.String({ minLength: 1, maxLength: 128 }),
  /** The manifest's device_type (thermostat, relay, temperature_sensor, …). */
  type: Type.String({ minLength: 1, maxLength: 64 }),
  manufacturer: Type.Optional(Type.String({ maxLength: 128 })),
  model: Type.Optional(Type.String({ maxLength: 128 })),
  firmware_version: Type.Optional(Type.String({ maxLength: 64 })),
  /** Capability strings (node-protocol.md vocabulary; unknown strings allowed); the node registers their union. */
  capabilities: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 64 })),
  /** The manifest's actions[] (node-protocol.md "Device self-description"), params and verify included. */
  actions: Type.Array(DeviceAction, { maxItems: 64, default: [] }),
};
const Strict = { additionalProperties: false } as const;

// ── serial ──────────────────────────────────────────────────────────────────────────────────────
export const SerialDevice = Type.Object(
  {
    adapter: Type.Literal('serial'),
    ...Common,
    /** The port: /dev/ttyUSB0, or better a stable /dev/serial/by-id/… link (it survives re-enumeration). */
    path: Type.String({ minLength: 1, maxLength: 4096 }),
    baud: Type.Integer({ minimum: 50, maximum: 4_000_000, default: 115_200 }),
    /** 'json-lines' (the device-side contract in docs/node-agent.md) or a line protocol declared here. */
    framing: Type.Union([Type.Literal('json-lines'), LineProtocolFraming]),
    /** How long an action waits for the device's reply when the brain's timeout is longer. */
    reply_timeout_ms: Type.Integer({ minimum: 10, maximum: 120_000, default: 3000 }),
  },
  Strict,
);
export type SerialDevice = Static<typeof SerialDevice>;

// ── BLE ─────────────────────────────────────────────────────────────────────────────────────────
/** How bytes of a characteristic become a value and back. */
export const BLE_FORMATS = ['utf8', 'json', 'uint8', 'int8', 'uint16le', 'int16le', 'uint32le', 'int32le', 'float32le', 'hex'] as const;
const BleFormat = Type.Union(BLE_FORMATS.map((f) => Type.Literal(f)));
const Uuid = Type.String({ pattern: '^([0-9A-Fa-f]{4}|[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12})$', description: '16-bit ("2a6e") or 128-bit UUID' });

export const BleCharacteristic = Type.Object(
  {
    service: Uuid,
    characteristic: Uuid,
    format: Type.Optional(BleFormat),
    /** A number is multiplied by this after decoding (0.01 for a temperature in hundredths) and divided before encoding. */
    scale: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    /** Subscribe to notifications and report each value as a reading of this event_type … */
    reading: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    /** … under this field of the reading's data (default "value"). */
    field: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    /** An action that reads this characteristic (result {<field>: value}). */
    read_action: Type.Optional(Type.String({ pattern: ACTION_NAME_PATTERN, maxLength: 64 })),
    /** An action that writes the value of one of its params (`param`) to this characteristic. */
    write_action: Type.Optional(Type.String({ pattern: ACTION_NAME_PATTERN, maxLength: 64 })),
    param: Type.Optional(Type.String({ pattern: ACTION_NAME_PATTERN, maxLength: 64 })),
    /** Write with response (default) or without. */
    write_without_response: Type.Optional(Type.Boolean()),
  },
  Strict,
);
export type BleCharacteristic = Static<typeof BleCharacteristic>;

export const BleDevice = Type.Object(
  {
    adapter: Type.Literal('ble'),
    ...Common,
    /** The peripheral's address (AA:BB:CC:DD:EE:FF); else the first one advertising `local_name`. */
    address: Type.Optional(Type.String({ pattern: '^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$' })),
    local_name: Type.Optional(Type.String({ minLength: 1, maxLength: 248 })),
    /** The BlueZ adapter (default hci0). */
    hci: Type.Optional(Type.String({ pattern: '^hci\\d{1,3}$' })),
    characteristics: Type.Array(BleCharacteristic, { maxItems: 64, default: [] }),
  },
  Strict,
);
export type BleDevice = Static<typeof BleDevice>;

export const DeviceConfig = Type.Union([SerialDevice, BleDevice]);
export type DeviceConfig = SerialDevice | BleDevice;

export const AgentConfigSchema = Type.Object(
  {
    version: Type.Integer({ minimum: 1, maximum: CONFIG_VERSION, default: CONFIG_VERSION }),
    /** The node id on the brain (default the host name); --node-id wins. */
    node_id: Type.Optional(Type.String({ pattern: NODE_ID_PATTERN, maxLength: 128 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    node_type: Type.Optional(NodeType),
    /** The brain's http(s) address (default $SVC_BRAIN_URL, else mDNS); --brain wins. */
    brain: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    key_dir: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    location: Type.Optional(Type.String({ maxLength: 128 })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 64 })),
    devices: Type.Array(DeviceConfig, { maxItems: 64, default: [] }),
  },
  Strict,
);
export type AgentConfig = Static<typeof AgentConfigSchema>;

export class AgentConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
  ) {
    super(`${file} is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'AgentConfigError';
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A device entry with its adapter's defaults, or its problems (checked against its own adapter's schema: the union's errors say little). */
function checkDevice(raw: unknown, path: string): { device: DeviceConfig } | { problems: string[] } {
  if (!isRecord(raw)) return { problems: [`${path}: must be an object`] };
  const schema = raw.adapter === 'serial' ? SerialDevice : raw.adapter === 'ble' ? BleDevice : undefined;
  if (schema === undefined) return { problems: [`${path}/adapter: must be "serial" or "ble"`] };
  const withDefaults: unknown = Value.Default(schema, Value.Clone(raw));
  const errors = [...Value.Errors(schema, withDefaults)].map((e) => `${path}${e.path}: ${e.message}`);
  if (errors.length > 0) return { problems: errors };
  const device = withDefaults as DeviceConfig;
  const problems: string[] = [];
  const names = new Set<string>();
  device.actions.forEach((a, i) => {
    const action = normalizeAction(a);
    if (action === null) problems.push(`${path}/actions/${i}: needs a name`);
    else if (names.has(action.name)) problems.push(`${path}/actions/${i}/name: "${action.name}" is declared twice`);
    else names.add(action.name);
  });
  if (device.adapter === 'serial' && device.framing !== 'json-lines') problems.push(...lineProtocolProblems(device.framing, [...names], `${path}/framing`));
  if (device.adapter === 'ble') {
    if (device.address === undefined && device.local_name === undefined) problems.push(`${path}: give address or local_name`);
    device.characteristics.forEach((c, i) => {
      for (const key of ['read_action', 'write_action'] as const) {
        const name = c[key];
        if (name !== undefined && !names.has(name)) problems.push(`${path}/characteristics/${i}/${key}: "${name}" is not one of the device's actions`);
      }
      if (c.write_action !== undefined && c.param === undefined) problems.push(`${path}/characteristics/${i}/param: a write_action needs the param whose value is written`);
    });
    if (problems.length === 0) problems.push(...bleDeviceProblems(device, path));
  }
  return problems.length > 0 ? { problems } : { device };
}

/** Validates a parsed config and fills in defaults; throws AgentConfigError with every problem. */
export function parseAgentConfig(raw: unknown, file = 'config.json'): AgentConfig {
  if (!isRecord(raw)) throw new AgentConfigError(file, ['/: must be a JSON object']);
  const { devices: rawDevices = [], ...rest } = raw;
  const top = Value.Default(AgentConfigSchema, Value.Clone({ ...rest, devices: [] })) as AgentConfig;
  const problems = [...Value.Errors(AgentConfigSchema, top)].map((e) => `${e.path || '/'}: ${e.message}`);
  const devices: DeviceConfig[] = [];
  if (!Array.isArray(rawDevices)) problems.push('/devices: must be an array');
  else if (rawDevices.length > 64) problems.push('/devices: at most 64 devices');
  else {
    const ids = new Set<string>();
    rawDevices.forEach((d: unknown, i) => {
      const checked = checkDevice(d, `/devices/${i}`);
      if ('problems' in checked) problems.push(...checked.problems);
      else devices.push(checked.device);
      const id = isRecord(d) && typeof d.id === 'string' ? d.id : undefined;
      if (id !== undefined && ids.has(id)) problems.push(`/devices/${i}/id: "${id}" is used by another device`);
      if (id !== undefined) ids.add(id);
    });
  }
  if (problems.length > 0) throw new AgentConfigError(file, problems);
  return { ...top, devices };
}

/** Reads and validates the file; null when it does not exist (the caller decides whether that is fine). */
export async function loadAgentConfig(file: string): Promise<AgentConfig | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (typeof (err as NodeJS.ErrnoException).code === 'string') throw new AgentConfigError(file, [`/: cannot read the file (${(err as NodeJS.ErrnoException).code})`]);
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw new AgentConfigError(file, [`/: not valid JSON (${err.message})`]);
  }
  return parseAgentConfig(raw, file);
}
