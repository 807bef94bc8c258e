// The bounds a device_event must keep beyond its schema (node-protocol.md "device_event"), and the
// legacy telemetry shapes turned into device_events for the device layer.
//
// Media size: the decoded size of the event's base64 payload, taken as the largest of the string
// fields `data.data`, `data.frame` and `data.audio` (SDKs name it differently; a `data:` URL prefix
// is skipped), computed from the base64 length without decoding (3 bytes per 4 characters, padding
// subtracted). Over MEDIA_LIMITS[event_type]: error 4020 frame_too_large, the event dropped.
//
// Legacy telemetry (deprecated, accepted), one device_event per reading group:
//   telemetry {sensors: {name: reading, …}}   → one event per entry: event_type = name
//   sensor_telemetry {sensor, data}           → one event: event_type = sensor
//   sensor_batch {readings: [{sensor, data, ts?}, …]} → one event per reading: event_type = its
//     `sensor` (or `type`, or `event_type`), data = its `data` object, else the reading itself less
//     those name and ts keys; a reading without a name is event_type `telemetry`.
// A reading that is an object becomes `data` as is; a scalar becomes `{value: reading}`. A payload's
// string `device_id` is carried over. A name that is not 1–64 characters drops that reading (1003).
import { MEDIA_LIMITS, type DeviceEvent } from '../../../protocol/node';
import { frameError, type FrameError } from './node-frames';

/** rmssd_ms outside this is not a measurement (node-protocol.md: rejected, not clamped). */
export const HRV_RMSSD_MS = { min: 5, max: 300 } as const;
const MEDIA_FIELDS = ['data', 'frame', 'audio'] as const;

/** Bytes a base64 string decodes to (a `data:…;base64,` prefix skipped). */
export function base64DecodedBytes(value: string): number {
  const comma = value.startsWith('data:') ? value.indexOf(',') : -1;
  const body = comma >= 0 ? value.slice(comma + 1) : value;
  const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  return Math.floor(((body.length - padding) * 3) / 4);
}

/** The decoded size of a media event's payload: the largest of its base64 fields. */
export function mediaBytes(event: DeviceEvent): number {
  let largest = 0;
  for (const field of MEDIA_FIELDS) {
    const value = event.data[field];
    if (typeof value === 'string') largest = Math.max(largest, base64DecodedBytes(value));
  }
  return largest;
}

/** Why an event must be refused (media over its limit, hrv out of range), or null. */
export function checkDeviceEvent(event: DeviceEvent): FrameError | null {
  const limit = Object.hasOwn(MEDIA_LIMITS, event.event_type) ? MEDIA_LIMITS[event.event_type] : undefined;
  if (limit !== undefined) {
    const bytes = mediaBytes(event);
    if (bytes > limit) return frameError('frame_too_large', `${event.event_type} of ${bytes} decoded bytes is over its limit of ${limit}; frame dropped`, event.event_type);
  }
  if (event.event_type === 'hrv') {
    const rmssd = event.data.rmssd_ms;
    if (typeof rmssd !== 'number' || !Number.isFinite(rmssd) || rmssd < HRV_RMSSD_MS.min || rmssd > HRV_RMSSD_MS.max) {
      return frameError('bad_payload', `hrv needs data.rmssd_ms between ${HRV_RMSSD_MS.min} and ${HRV_RMSSD_MS.max} ms; got ${JSON.stringify(rmssd) ?? 'nothing'}`, 'hrv');
    }
  }
  return null;
}

export interface LegacyTelemetry {
  readonly events: DeviceEvent[];
  /** Readings dropped, each with why. */
  readonly dropped: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const asData = (reading: unknown): Record<string, unknown> => (isRecord(reading) ? reading : { value: reading });
const NAME_KEYS = ['sensor', 'type', 'event_type'] as const;

function eventOf(name: string, data: Record<string, unknown>, ts: number, deviceId: unknown, dropped: string[]): DeviceEvent | null {
  if (name.length < 1 || name.length > 64) {
    dropped.push(`reading name ${JSON.stringify(name.slice(0, 64))} is not 1–64 characters`);
    return null;
  }
  return { event_type: name, data, ts, ...(typeof deviceId === 'string' && deviceId.length >= 1 && deviceId.length <= 64 ? { device_id: deviceId } : {}) };
}

function batchReading(reading: Record<string, unknown>, ts: number, deviceId: unknown, dropped: string[]): DeviceEvent | null {
  const key = NAME_KEYS.find((k) => typeof reading[k] === 'string');
  const name = key === undefined ? 'telemetry' : (reading[key] as string);
  const at = typeof reading.ts === 'number' && Number.isFinite(reading.ts) ? reading.ts : ts;
  let data: Record<string, unknown>;
  if (isRecord(reading.data)) data = reading.data;
  else {
    data = { ...reading };
    for (const k of [...NAME_KEYS, 'ts']) delete data[k];
  }
  return eventOf(name, data, at, reading.device_id ?? deviceId, dropped);
}

/** The device_events a legacy telemetry frame stands for; `ts` is the envelope's (epoch seconds). */
export function legacyEvents(
  message: { type: 'telemetry'; payload: { sensors: Record<string, unknown>; device_id?: unknown } } | { type: 'sensor_telemetry'; payload: { sensor: string; data: unknown; device_id?: unknown } } | { type: 'sensor_batch'; payload: { readings: Record<string, unknown>[]; device_id?: unknown } },
  ts: number,
): LegacyTelemetry {
  const events: DeviceEvent[] = [];
  const dropped: string[] = [];
  const push = (e: DeviceEvent | null): void => {
    if (e) events.push(e);
  };
  const deviceId = message.payload.device_id;
  switch (message.type) {
    case 'telemetry':
      for (const [name, reading] of Object.entries(message.payload.sensors)) push(eventOf(name, asData(reading), ts, deviceId, dropped));
      break;
    case 'sensor_telemetry':
      push(eventOf(message.payload.sensor, asData(message.payload.data), ts, deviceId, dropped));
      break;
    case 'sensor_batch':
      for (const reading of message.payload.readings) push(batchReading(reading, ts, deviceId, dropped));
      break;
  }
  return { events, dropped };
}
