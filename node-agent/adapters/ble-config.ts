// What a `ble` device entry of the config file (config.ts BleDevice, the one schema) means to the BLE
// adapter: the peripheral to look for, the characteristics to resolve on every connection, which of
// them are readings (notifications → device_event), which actions read and which write. blePlan
// derives it once; bleDeviceProblems lists what the schema cannot say about a BLE entry, each with its
// JSON path, for the config loader to report with the rest. config.ts imports this file, so the entry
// is described here by the fields read (BleDeviceEntry), not imported: config.ts's BleDevice must stay
// assignable to it, which ble.ts's use of both checks at compile time.
import { normalizeAction, type DeviceAction } from '../../protocol/node';
import type { BleValueFormat } from './ble-codec';
import type { BleTarget, BleWriteMode } from './ble-transport';

export type { BleValueFormat } from './ble-codec';

/** The fields of a `ble` device entry (config.ts BleDevice) this file reads. */
export interface BleDeviceEntry {
  readonly id: string;
  readonly address?: string | undefined;
  readonly local_name?: string | undefined;
  readonly actions: readonly DeviceAction[];
  readonly characteristics: ReadonlyArray<{
    readonly service: string;
    readonly characteristic: string;
    readonly format?: BleValueFormat | undefined;
    readonly scale?: number | undefined;
    readonly reading?: string | undefined;
    readonly field?: string | undefined;
    readonly read_action?: string | undefined;
    readonly write_action?: string | undefined;
    readonly param?: string | undefined;
    readonly write_without_response?: boolean | undefined;
  }>;
}
/** Without a format, bytes are shown (and written) as hex: every value has one. */
export const DEFAULT_BLE_FORMAT: BleValueFormat = 'hex';
/** The data field of a reading and of a read action's result when the entry names none. */
export const DEFAULT_BLE_FIELD = 'value';

const NUMERIC: readonly BleValueFormat[] = ['uint8', 'int8', 'uint16le', 'int16le', 'uint32le', 'int32le', 'float32le'];
export const isNumericFormat = (f: BleValueFormat): boolean => NUMERIC.includes(f);

const BASE_UUID_TAIL = '-0000-1000-8000-00805f9b34fb';

/** BlueZ's form of a UUID: 128-bit, lower case ("2A6E" → "00002a6e-0000-1000-8000-00805f9b34fb"). */
export function bleUuid(uuid: string): string {
  const u = uuid.toLowerCase();
  if (u.length === 4) return `0000${u}${BASE_UUID_TAIL}`;
  if (u.length === 8) return `${u}${BASE_UUID_TAIL}`;
  return u;
}

/** One characteristic the adapter resolves on each connection; `key` names it in the plan. */
export interface CharacteristicRef {
  readonly service: string;
  readonly characteristic: string;
  readonly key: string;
}
interface Decoding {
  readonly format: BleValueFormat;
  readonly scale: number | undefined;
  readonly field: string;
}
export interface BleReadingPlan extends CharacteristicRef, Decoding {
  readonly eventType: string;
}
export type BleReadPlan = CharacteristicRef & Decoding;
export interface BleWritePlan extends CharacteristicRef {
  readonly format: BleValueFormat;
  readonly scale: number | undefined;
  readonly param: string;
  /** The param's declared default, used when a request leaves it out. */
  readonly fallback: unknown;
  readonly mode: BleWriteMode;
}

export interface BlePlan {
  readonly target: BleTarget;
  readonly characteristics: readonly CharacteristicRef[];
  readonly readings: readonly BleReadingPlan[];
  /** Action name → the characteristic it reads. */
  readonly reads: ReadonlyMap<string, BleReadPlan>;
  /** Action name → the characteristic it writes. */
  readonly writes: ReadonlyMap<string, BleWritePlan>;
}

/** Problems of a BLE entry beyond the schema and config.ts's own checks (paths under `path`). */
export function bleDeviceProblems(device: BleDeviceEntry, path = ''): string[] {
  const problems: string[] = [];
  const actions = new Map(device.actions.flatMap((a) => {
    const n = normalizeAction(a);
    return n ? [[n.name, n] as const] : [];
  }));
  const used = new Map<string, string>();
  device.characteristics.forEach((c, i) => {
    const at = `${path}/characteristics/${i}`;
    const format = c.format ?? DEFAULT_BLE_FORMAT;
    if (c.scale !== undefined && !isNumericFormat(format)) problems.push(`${at}/scale: only a numeric format scales (this one is ${format})`);
    if (c.param !== undefined && c.write_action === undefined) problems.push(`${at}/param: only a write_action takes a param`);
    for (const key of ['read_action', 'write_action'] as const) {
      const name = c[key];
      if (name === undefined) continue;
      const other = used.get(name);
      if (other !== undefined) problems.push(`${at}/${key}: "${name}" is already mapped by ${other}`);
      used.set(name, `${at}/${key}`);
    }
    const write = c.write_action === undefined ? undefined : actions.get(c.write_action);
    if (write && c.param !== undefined && !write.params.some((p) => p.name === c.param)) problems.push(`${at}/param: "${c.param}" is not a param of ${write.name}`);
    const read = c.read_action === undefined ? undefined : actions.get(c.read_action);
    if (read && read.category !== 'sensor') problems.push(`${at}/read_action: ${read.name} reads, so its category must be sensor (it is ${read.category})`);
  });
  for (const name of actions.keys()) if (!used.has(name)) problems.push(`${path}/actions: "${name}" is mapped to no characteristic (read_action or write_action)`);
  return problems;
}

/** The plan of a valid entry; throws an Error listing bleDeviceProblems otherwise (a programming error: the loader checks first). */
export function blePlan(device: BleDeviceEntry): BlePlan {
  const problems = bleDeviceProblems(device, `/devices/${device.id}`);
  if (problems.length > 0) throw new Error(`ble device ${device.id} is invalid:\n  ${problems.join('\n  ')}`);
  const characteristics = new Map<string, CharacteristicRef>();
  const readings: BleReadingPlan[] = [];
  const reads = new Map<string, BleReadPlan>();
  const writes = new Map<string, BleWritePlan>();
  for (const c of device.characteristics) {
    const service = bleUuid(c.service);
    const characteristic = bleUuid(c.characteristic);
    const ref: CharacteristicRef = { service, characteristic, key: `${service}/${characteristic}` };
    characteristics.set(ref.key, ref);
    const decoding = { format: c.format ?? DEFAULT_BLE_FORMAT, scale: c.scale, field: c.field ?? DEFAULT_BLE_FIELD };
    if (c.reading !== undefined) readings.push({ ...ref, ...decoding, eventType: c.reading });
    if (c.read_action !== undefined) reads.set(c.read_action, { ...ref, ...decoding });
    if (c.write_action !== undefined && c.param !== undefined) {
      const action = device.actions.map(normalizeAction).find((a) => a?.name === c.write_action);
      const fallback: unknown = action?.params.find((p) => p.name === c.param)?.default;
      writes.set(c.write_action, { ...ref, format: decoding.format, scale: c.scale, param: c.param, fallback, mode: c.write_without_response ? 'command' : 'request' });
    }
  }
  const target: BleTarget = { ...(device.address !== undefined ? { address: device.address } : {}), ...(device.local_name !== undefined ? { localName: device.local_name } : {}) };
  return { target, characteristics: [...characteristics.values()], readings, reads, writes };
}
