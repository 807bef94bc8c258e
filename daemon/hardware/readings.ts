// A device_event's `data` as readings (docs/hardware.md "Telemetry"): every scalar is a reading named
// by its key, nested objects are flattened with dots (`accel.x`), arrays and other values are not
// readings. Bounded: at most MAX_READINGS per event and MAX_DEPTH levels.
export type ReadingValue = string | number | boolean | null;

const MAX_READINGS = 64;
const MAX_DEPTH = 4;

export function flattenReadings(data: Readonly<Record<string, unknown>>): Record<string, ReadingValue> {
  const out: Record<string, ReadingValue> = {};
  let count = 0;
  const walk = (value: Readonly<Record<string, unknown>>, prefix: string, depth: number): void => {
    for (const [key, v] of Object.entries(value)) {
      if (count >= MAX_READINGS) return;
      const name = prefix === '' ? key : `${prefix}.${key}`;
      if (v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) {
        out[name] = v;
        count++;
      } else if (typeof v === 'object' && !Array.isArray(v) && depth < MAX_DEPTH) {
        walk(v as Record<string, unknown>, name, depth + 1);
      }
    }
  };
  walk(data, '', 1);
  return out;
}
