// The BLE peripherals this reference phone bridge relays, simulated (docs/phone-bridge.md
// "Peripherals"): each one is what a phone app would hold for a real GATT device — a manifest it
// registers with peripheral_bridge_register, a state it reads and writes, and readings it notifies.
// An action's `effect` says what it does to the state (set fields from its parameters or constants,
// or only read), so the brain's verify loop reads back what a command changed. State lives as long as
// the process: a reconnect to the brain keeps it, as a phone keeps its peripherals while the link drops.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ACTION_NAME_PATTERN, DeviceAction, type BridgedPeripheral, type DeviceManifest } from '../protocol/node';

const Scalar = Type.Union([Type.String({ maxLength: 200 }), Type.Number(), Type.Boolean(), Type.Null()]);
type Scalar = Static<typeof Scalar>;

/** What an action does: `set` writes fields (a value, or "$<param>" for that parameter); the answer is the state after it. */
export const ActionEffect = Type.Object(
  { set: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Scalar)) },
  { additionalProperties: false },
);

export const SimulatedAction = Type.Intersect([DeviceAction, Type.Object({ effect: Type.Optional(ActionEffect) })]);
export type SimulatedAction = Static<typeof SimulatedAction>;

/** A reading the peripheral notifies: a device_event `event_type {field}` every `every_ms`, a bounded random walk. */
export const SimulatedReading = Type.Object(
  {
    event_type: Type.String({ minLength: 1, maxLength: 64 }),
    field: Type.String({ minLength: 1, maxLength: 64 }),
    every_ms: Type.Integer({ minimum: 10, maximum: 3_600_000 }),
    min: Type.Number(),
    max: Type.Number(),
    step: Type.Number({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type SimulatedReading = Static<typeof SimulatedReading>;

export const SimulatedPeripheral = Type.Object(
  {
    device_id: Type.String({ minLength: 1, maxLength: 64, pattern: ACTION_NAME_PATTERN }),
    kind: Type.String({ minLength: 1, maxLength: 64 }),
    name: Type.String({ minLength: 1, maxLength: 128 }),
    protocol: Type.Optional(Type.String({ maxLength: 64 })),
    capabilities: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 64 }),
    state: Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Scalar),
    actions: Type.Array(SimulatedAction, { maxItems: 64 }),
    readings: Type.Optional(Type.Array(SimulatedReading, { maxItems: 16 })),
  },
  { additionalProperties: false },
);
export type SimulatedPeripheral = Static<typeof SimulatedPeripheral>;

/** The --peripherals file: `{"peripherals": [...]}`. */
export const PeripheralsFile = Type.Object({ peripherals: Type.Array(SimulatedPeripheral, { minItems: 1, maxItems: 64 }) }, { additionalProperties: false });
export type PeripheralsFile = Static<typeof PeripheralsFile>;

/** The built-in demo: a bulb (set_power {on}, get_state; verified by reading the state back) and a heart-rate strap. */
export const DEMO_PERIPHERALS: PeripheralsFile = {
  peripherals: [
    {
      device_id: 'bulb',
      kind: 'light',
      name: 'Bedside bulb',
      protocol: 'ble',
      capabilities: ['led'],
      state: { on: false, brightness: 80 },
      actions: [
        {
          name: 'set_power',
          category: 'actuator',
          permission_tier: 'active',
          capability: 'led',
          description: 'Switch the bulb on or off',
          params: [{ name: 'on', type: 'boolean', required: true, description: 'true: on, false: off' }],
          verify: { via: 'get_state', field: 'on', expect: '$on', delay_ms: 0, retries: 1 },
          effect: { set: { on: '$on' } },
        },
        { name: 'get_state', category: 'sensor', permission_tier: 'passive', description: 'Read whether the bulb is on, and its brightness', params: [] },
      ],
    },
    {
      device_id: 'hr_strap',
      kind: 'heart_rate_monitor',
      name: 'Chest strap',
      protocol: 'ble',
      capabilities: ['heart_rate', 'battery'],
      state: { bpm: 62, battery_pct: 87 },
      actions: [{ name: 'read_heart_rate', category: 'sensor', permission_tier: 'passive', capability: 'heart_rate', description: 'Read the heart rate now', params: [] }],
      readings: [{ event_type: 'heart_rate', field: 'bpm', every_ms: 1000, min: 55, max: 95, step: 3 }],
    },
  ],
};

/** Why an action could not run on a peripheral: the text of hup_action_response.error. */
export class PeripheralError extends Error {
  override name = 'PeripheralError';
}

/** Reads and checks a peripherals file's JSON; throws PeripheralError naming the first problems. */
export function parsePeripheralsFile(text: string): PeripheralsFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) throw new PeripheralError(`not JSON: ${err.message}`);
    throw err;
  }
  const problems = [...Value.Errors(PeripheralsFile, value)].slice(0, 5).map((e) => `${e.path || '/'} ${e.message}`);
  if (problems.length > 0) throw new PeripheralError(problems.join('; '));
  const file = value as PeripheralsFile;
  const ids = file.peripherals.map((p) => p.device_id);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated !== undefined) throw new PeripheralError(`device_id ${repeated} appears twice`);
  for (const p of file.peripherals) for (const r of p.readings ?? []) if (r.min > r.max) throw new PeripheralError(`${p.device_id}: reading ${r.event_type} has min above max`);
  return file;
}

const actionName = (a: SimulatedAction): string => a.name ?? a.id ?? '';

/** One simulated peripheral: its manifest for the brain, its state, its actions and readings. */
export class Peripheral {
  private readonly state: Record<string, Scalar>;

  constructor(readonly spec: SimulatedPeripheral) {
    this.state = { ...spec.state };
  }

  get deviceId(): string {
    return this.spec.device_id;
  }

  /** The device manifest (actions without their simulation `effect`), transport phone_ble. */
  manifest(): DeviceManifest {
    const actions = this.spec.actions.map(({ effect: _effect, ...declared }) => declared);
    return { device_id: this.spec.device_id, device_type: this.spec.kind, name: this.spec.name, capabilities: [...this.spec.capabilities], transport: { kind: 'phone_ble' }, actions };
  }

  /** The entry of peripheral_bridge_register.devices. */
  registration(): BridgedPeripheral {
    return { device_id: this.spec.device_id, kind: this.spec.kind, protocol: this.spec.protocol ?? 'ble', capabilities: [...this.spec.capabilities], status: 'connected', manifest: this.manifest() };
  }

  snapshot(): Record<string, Scalar> {
    return { ...this.state };
  }

  /** Runs an action: checks its parameters against the manifest, applies its effect, answers the state after it. */
  run(name: string, params: Readonly<Record<string, unknown>>): Record<string, Scalar> {
    const action = this.spec.actions.find((a) => actionName(a) === name);
    if (!action) throw new PeripheralError(`${this.deviceId} has no action ${name}`);
    const declared = action.params ?? action.parameters ?? [];
    for (const p of declared) {
      const value = params[p.name];
      if (value === undefined) {
        if (p.required === true && p.default === undefined) throw new PeripheralError(`${name}: parameter ${p.name} is required`);
        continue;
      }
      if (p.type !== undefined && !fitsType(value, p.type)) throw new PeripheralError(`${name}: parameter ${p.name} must be ${p.type}`);
      if (p.enum !== undefined && !p.enum.includes(value as Scalar)) throw new PeripheralError(`${name}: parameter ${p.name} must be one of ${p.enum.map((e) => JSON.stringify(e)).join(', ')}`);
    }
    for (const [field, source] of Object.entries(action.effect?.set ?? {})) this.state[field] = resolve(source, params, declared);
    return this.snapshot();
  }

  /** The next value of a reading (a whole step of at most `step` either way, within min..max); it is kept in the state too. */
  nextReading(reading: SimulatedReading, random: () => number): number {
    const last = this.state[reading.field];
    const from = typeof last === 'number' ? last : (reading.min + reading.max) / 2;
    const value = Math.min(reading.max, Math.max(reading.min, Math.round(from + (random() * 2 - 1) * reading.step)));
    this.state[reading.field] = value;
    return value;
  }
}

function fitsType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return typeof value === type;
  }
}

/** "$on" is the parameter `on` (or its declared default); anything else is the value itself. */
function resolve(source: Scalar, params: Readonly<Record<string, unknown>>, declared: readonly { name: string; default?: unknown }[]): Scalar {
  if (typeof source !== 'string' || !source.startsWith('$')) return source;
  const name = source.slice(1);
  const value = params[name] ?? declared.find((p) => p.name === name)?.default ?? null;
  return isScalar(value) ? value : JSON.stringify(value);
}

const isScalar = (v: unknown): v is Scalar => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** The peripherals of one bridge, by device_id. */
export class PeripheralSet {
  private readonly byId: Map<string, Peripheral>;

  constructor(file: PeripheralsFile) {
    this.byId = new Map(file.peripherals.map((spec) => [spec.device_id, new Peripheral(spec)]));
  }

  all(): Peripheral[] {
    return [...this.byId.values()];
  }

  get(deviceId: string): Peripheral | undefined {
    return this.byId.get(deviceId);
  }
}
