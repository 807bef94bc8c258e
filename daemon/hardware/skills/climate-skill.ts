// device_climate (docs/hardware.md "Hand-written skills"): the last temperature and humidity of one
// or every climate device, each with its age and a short trend from the reading's history. Passive: it
// reads what telemetry already holds and sends nothing to a device.
//
// Readings (a name matches the reading's full name or its last dotted segment, first name wins):
// temperature celsius, temperature_c, temp_c, temperature, temp; else fahrenheit, temperature_f,
// temp_f (converted to °C); humidity humidity, humidity_pct, relative_humidity, rh.
// Trend: the change between the first and the last history point of the last TREND_WINDOW_MS (at
// least two points); under 0.2 °C or 1 % it is `steady`.
import { Type } from '@sinclair/typebox';
import type { Clock } from '../../kernel/capability';
import { defineTool, ToolFailure, type Tool, type ToolOutcome } from '../../kernel/tool';
import type { HistoryPoint } from '../devices/telemetry-store';
import { declares, findDevice, type SkillDevice } from './skill-binding';

export const CLIMATE_SKILL = 'device_climate';
export const TREND_WINDOW_MS = 60 * 60_000;
const KIND = 'temperature or humidity sensor';

const CELSIUS = ['celsius', 'temperature_c', 'temp_c', 'temperature', 'temp'];
const FAHRENHEIT = ['fahrenheit', 'temperature_f', 'temp_f'];
const HUMIDITY = ['humidity', 'humidity_pct', 'relative_humidity', 'rh'];
const CLIMATE_CAPABILITIES = ['temperature', 'humidity', 'thermostat', 'climate'];
const CLIMATE_TYPES = [...CLIMATE_CAPABILITIES, 'thermometer', 'hygrometer', 'temperature_sensor', 'humidity_sensor', 'weather_station'];

export interface Trend {
  /** Last minus first, in the reading's unit (°C or %). */
  change: number;
  over_s: number;
  direction: 'rising' | 'falling' | 'steady';
}

export interface Measured {
  value: number;
  /** The reading it came from (e.g. `celsius`, `env.temp_f`). */
  reading: string;
  at: string;
  age_s: number;
  trend: Trend | null;
}

export interface ClimateEntry {
  device_id: string;
  name: string;
  online: boolean;
  celsius: Measured | null;
  humidity: Measured | null;
}

interface Found {
  name: string;
  value: number;
  at: number;
}

/** The first numeric reading whose name (or last dotted segment) is one of `names`, in their order. */
export function findReading(readings: SkillDevice['readings'], names: readonly string[]): Found | null {
  for (const wanted of names) {
    for (const [name, r] of Object.entries(readings)) {
      if ((name === wanted || name.endsWith(`.${wanted}`)) && typeof r.value === 'number') return { name, value: r.value, at: r.at };
    }
  }
  return null;
}

export const isClimate = (d: SkillDevice): boolean =>
  declares(d.spec, CLIMATE_CAPABILITIES, CLIMATE_TYPES) || findReading(d.readings, [...CELSIUS, ...FAHRENHEIT, ...HUMIDITY]) !== null;

/** The trend of the points of the last `windowMs` before `now`, scaled by `factor` (°F → °C: 5/9). */
export function trendOf(points: readonly HistoryPoint[], now: number, steadyBelow: number, factor = 1, windowMs = TREND_WINDOW_MS): Trend | null {
  const recent = points.filter((p) => p.t >= now - windowMs);
  if (recent.length < 2) return null;
  const first = recent[0]!;
  const last = recent[recent.length - 1]!;
  const change = Math.round((last.v - first.v) * factor * 100) / 100;
  const direction = Math.abs(change) < steadyBelow ? 'steady' : change > 0 ? 'rising' : 'falling';
  return { change, over_s: Math.round((last.t - first.t) / 1000), direction };
}

export interface ClimateDeps {
  devices: () => SkillDevice[];
  history: (deviceId: string, reading: string) => readonly HistoryPoint[];
  clock: Clock;
}

export function climateEntry(deps: ClimateDeps, d: SkillDevice): ClimateEntry {
  const now = deps.clock.now();
  const measured = (found: Found, value: number, steadyBelow: number, factor: number): Measured => ({
    value,
    reading: found.name,
    at: new Date(found.at).toISOString(),
    age_s: Math.max(0, Math.round((now - found.at) / 1000)),
    trend: trendOf(deps.history(d.spec.deviceId, found.name), now, steadyBelow, factor),
  });
  const c = findReading(d.readings, CELSIUS);
  const f = c ? null : findReading(d.readings, FAHRENHEIT);
  const h = findReading(d.readings, HUMIDITY);
  const celsius = c ? measured(c, c.value, 0.2, 1) : f ? measured(f, Math.round((((f.value - 32) * 5) / 9) * 100) / 100, 0.2, 5 / 9) : null;
  return { device_id: d.spec.deviceId, name: d.spec.name, online: d.online, celsius, humidity: h ? measured(h, h.value, 1, 1) : null };
}

/** `3 min ago`, `just now`, `2 h ago`. */
export function ago(seconds: number): string {
  if (seconds < 10) return 'just now';
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}

const round1 = (n: number): number => Math.round(n * 10) / 10;

function describeMeasure(m: Measured, unit: string): string {
  const t = m.trend;
  const trend = t === null ? '' : t.direction === 'steady' ? `, steady over ${ago(t.over_s).replace(' ago', '')}` : `, ${t.direction} ${round1(Math.abs(t.change))} ${unit} over ${ago(t.over_s).replace(' ago', '')}`;
  return `${round1(m.value)} ${unit} (${ago(m.age_s)}${trend})`;
}

export function describeClimate(e: ClimateEntry): string {
  const parts = [e.celsius && describeMeasure(e.celsius, '°C'), e.humidity && `humidity ${describeMeasure(e.humidity, '%')}`].filter((p): p is string => Boolean(p));
  const what = parts.length > 0 ? parts.join(', ') : 'no temperature or humidity reading yet';
  return `${e.name}: ${what}${e.online ? '' : ' (offline: last known values)'}`;
}

export const ClimateArgs = Type.Object(
  { device: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'A device id or name; absent: every temperature/humidity device' })) },
  { additionalProperties: false },
);

export function climateSkill(deps: ClimateDeps): Tool {
  return defineTool({
    spec: {
      name: CLIMATE_SKILL,
      description:
        'The last temperature (°C) and humidity (%) of one temperature/humidity device (by id or name) or of all of them, with how old each reading is and its trend over the last hour. Reads stored telemetry only.',
      parameters: ClimateArgs,
    },
    safety: 'passive',
    run: async (args): Promise<ToolOutcome> => {
      const all = deps.devices();
      let chosen: SkillDevice[];
      if (args.device === undefined) {
        chosen = all.filter(isClimate);
        if (chosen.length === 0) throw new ToolFailure(`there is no ${KIND} here: no registered device is one`);
      } else {
        chosen = [findDevice(all, isClimate, KIND, args.device)];
      }
      const entries = chosen.map((d) => climateEntry(deps, d));
      return { summary: entries.map(describeClimate).join('; '), data: { devices: entries }, sources: entries.map((e) => `device:${e.device_id}`) };
    },
  });
}
