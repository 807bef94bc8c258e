// Characteristic bytes ↔ values, by the formats a `ble` device entry names (config.ts BLE_FORMATS).
// Integers and float32 are little-endian as in the GATT specification's own characteristic formats; a
// scale turns raw units into the reading's (int16le centi-degrees × 0.01 = degrees) and back for
// writes; hex is the bytes themselves as a string.

/** The formats this codec reads and writes (config.ts BLE_FORMATS offers these). */
export const BLE_VALUE_FORMATS = ['utf8', 'json', 'hex', 'uint8', 'int8', 'uint16le', 'int16le', 'uint32le', 'int32le', 'float32le'] as const;
export type BleValueFormat = (typeof BLE_VALUE_FORMATS)[number];

/** A value that cannot be written in the format (wrong type, out of range): the action's error. */
export class BleEncodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BleEncodeError';
  }
}

/** A value that cannot be read in the format (too few bytes, bad JSON). */
export class BleDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BleDecodeError';
  }
}

interface IntFormat {
  bytes: number;
  min: number;
  max: number;
  read(b: Buffer): number;
  write(b: Buffer, v: number): void;
}

const INTS: Partial<Record<BleValueFormat, IntFormat>> = {
  uint8: { bytes: 1, min: 0, max: 0xff, read: (b) => b.readUInt8(0), write: (b, v) => b.writeUInt8(v, 0) },
  int8: { bytes: 1, min: -0x80, max: 0x7f, read: (b) => b.readInt8(0), write: (b, v) => b.writeInt8(v, 0) },
  uint16le: { bytes: 2, min: 0, max: 0xffff, read: (b) => b.readUInt16LE(0), write: (b, v) => b.writeUInt16LE(v, 0) },
  int16le: { bytes: 2, min: -0x8000, max: 0x7fff, read: (b) => b.readInt16LE(0), write: (b, v) => b.writeInt16LE(v, 0) },
  uint32le: { bytes: 4, min: 0, max: 0xffffffff, read: (b) => b.readUInt32LE(0), write: (b, v) => b.writeUInt32LE(v, 0) },
  int32le: { bytes: 4, min: -0x80000000, max: 0x7fffffff, read: (b) => b.readInt32LE(0), write: (b, v) => b.writeInt32LE(v, 0) },
};

/** A scaled number without binary noise (2155 × 0.01 is 21.55, not 21.550000000000001). */
const tidy = (v: number): number => Number(v.toPrecision(12));

function need(bytes: Buffer, n: number, format: string): void {
  if (bytes.length < n) throw new BleDecodeError(`${format} needs ${n} byte${n === 1 ? '' : 's'}, got ${bytes.length}`);
}

/** Decodes a characteristic value; bytes past the format's size are ignored (GATT values may carry more). */
export function decodeValue(format: BleValueFormat, bytes: Buffer, scale?: number): unknown {
  const int = INTS[format];
  if (int) {
    need(bytes, int.bytes, format);
    const raw = int.read(bytes);
    return scale === undefined ? raw : tidy(raw * scale);
  }
  switch (format) {
    case 'float32le': {
      need(bytes, 4, format);
      // float32 holds ~7 significant digits; more would be noise from widening to a double.
      const raw = Number(bytes.readFloatLE(0).toPrecision(7));
      return scale === undefined ? raw : tidy(raw * scale);
    }
    case 'utf8':
      return bytes.toString('utf8');
    case 'hex':
      return bytes.toString('hex');
    case 'json':
      try {
        return JSON.parse(bytes.toString('utf8')) as unknown;
      } catch (err) {
        if (err instanceof SyntaxError) throw new BleDecodeError(`not JSON: ${err.message}`);
        throw err;
      }
    default:
      throw new BleDecodeError(`unknown format ${format}`);
  }
}

function numberOf(value: unknown, format: string): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw new BleEncodeError(`${format} needs a number, got ${value === null ? 'null' : typeof value}`);
}

/** Encodes a value for WriteValue; integers are rounded after scaling and must fit the format. */
export function encodeValue(format: BleValueFormat, value: unknown, scale?: number): Buffer {
  const int = INTS[format];
  if (int) {
    const n = Math.round(numberOf(value, format) / (scale ?? 1));
    if (n < int.min || n > int.max) throw new BleEncodeError(`${String(value)} does not fit ${format} (${int.min}..${int.max}${scale === undefined ? '' : ` after dividing by ${scale}`})`);
    const b = Buffer.alloc(int.bytes);
    int.write(b, n);
    return b;
  }
  switch (format) {
    case 'float32le': {
      const n = numberOf(value, format) / (scale ?? 1);
      if (Math.abs(n) > 3.4028234663852886e38) throw new BleEncodeError(`${String(value)} does not fit float32le`);
      const b = Buffer.alloc(4);
      b.writeFloatLE(n, 0);
      return b;
    }
    case 'utf8':
      if (typeof value !== 'string') throw new BleEncodeError(`utf8 needs a string, got ${value === null ? 'null' : typeof value}`);
      return Buffer.from(value, 'utf8');
    case 'hex':
      if (typeof value !== 'string' || !/^([0-9A-Fa-f]{2})*$/.test(value)) throw new BleEncodeError('hex needs a string of hex digit pairs');
      return Buffer.from(value, 'hex');
    case 'json':
      return Buffer.from(JSON.stringify(value ?? null), 'utf8');
    default:
      throw new BleEncodeError(`unknown format ${format}`);
  }
}
