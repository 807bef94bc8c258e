// Reads and validates $SVC_HOME/settings.json. An invalid file is a SettingsError listing every
// problem with its JSON path; the caller prints it and exits, never a stack trace.
//
// The schema is the core's sections plus one section per capability (kernel/capability.ts), composed
// by `settingsSchema(capabilities)`. A file carries a `version`: numbered settings migrations (the
// core's and the capabilities') raise an older file before validation, in memory — settings.json is
// the user's file and is never rewritten. The result is deep-frozen.
import { readFileSync } from 'node:fs';
import { Type, type TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { CapabilityDefinition, SettingsMigration } from '../kernel/capability';
import { SETTINGS_VERSION, SettingsSchema, type Settings } from './settings-schema';
import { UNSUPPORTED_SECTIONS, unsupportedSectionProblems } from './unsupported-settings';

export class SettingsError extends Error {
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
  ) {
    super(`${file} is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

/** The core's settings migrations (version 2 onwards; version 1 is the first format). */
export const CORE_SETTINGS_MIGRATIONS: readonly SettingsMigration[] = [];

export interface SettingsFormat {
  schema: TObject;
  migrations: readonly SettingsMigration[];
  /** The version this build reads and writes: the highest migration's, at least SETTINGS_VERSION. */
  version: number;
}

/** The one settings schema: core sections plus each capability's section under its name. */
export function settingsFormat(capabilities: readonly CapabilityDefinition[] = [], coreMigrations: readonly SettingsMigration[] = CORE_SETTINGS_MIGRATIONS): SettingsFormat {
  const sections: Record<string, TObject> = {};
  for (const c of capabilities) {
    if (!c.settings) continue;
    if (Object.hasOwn(SettingsSchema.properties, c.name) || Object.hasOwn(sections, c.name)) throw new Error(`settings section ${c.name} is declared twice`);
    sections[c.name] = Type.Object(c.settings.properties, { ...c.settings, additionalProperties: false, default: {} });
  }
  const migrations = [...coreMigrations, ...capabilities.flatMap((c) => c.settingsMigrations ?? [])].sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 2) throw new Error(`settings migrations must be numbered 2, 3, … without gaps or repeats (found ${migrations.map((x) => x.version).join(', ')})`);
  });
  const version = Math.max(SETTINGS_VERSION, ...migrations.map((m) => m.version));
  const properties = { ...SettingsSchema.properties, ...sections, version: Type.Integer({ ...SettingsSchema.properties.version, maximum: version, default: version }) };
  return { schema: Type.Object(properties, { additionalProperties: false }), migrations, version };
}

const CORE_FORMAT = settingsFormat();

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Raises a file of an older version with the migrations above it; a newer version is left for validation to refuse. */
function migrate(raw: Record<string, unknown>, format: SettingsFormat): Record<string, unknown> {
  const from = typeof raw.version === 'number' && Number.isInteger(raw.version) ? raw.version : 1;
  let out = raw;
  for (const m of format.migrations) if (m.version > from) out = { ...m.up(out), version: m.version };
  return out;
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Validates a parsed settings object and fills in defaults. A section of a feature this version does
 * not have is reported as such rather than as an unknown key (unsupported-settings.ts). */
export function parseSettings(raw: unknown, file = 'settings.json', format: SettingsFormat = CORE_FORMAT): Settings {
  const unsupported = isRecord(raw) ? unsupportedSectionProblems(raw) : [];
  const rest = isRecord(raw) ? migrate(Object.fromEntries(Object.entries(raw).filter(([key]) => !Object.hasOwn(UNSUPPORTED_SECTIONS, key))), format) : raw;
  const withDefaults = Value.Default(format.schema, Value.Clone(rest ?? {}));
  const problems = [...unsupported, ...[...Value.Errors(format.schema, withDefaults)].map((e) => `${e.path || '/'}: ${e.message}`)];
  if (isRecord(raw) && typeof raw.version === 'number' && raw.version > format.version) problems.push(`/version: ${raw.version} was written by a newer svc (this one reads up to ${format.version})`);
  if (problems.length > 0) throw new SettingsError(file, problems);
  return deepFreeze(withDefaults as Settings);
}

/** Loads settings.json; a missing file means all defaults. */
export function loadSettings(file: string, format: SettingsFormat = CORE_FORMAT): Settings {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return parseSettings({}, file, format);
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new SettingsError(file, [`/: not valid JSON (${(err as Error).message})`]);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new SettingsError(file, ['/: must be a JSON object']);
  return parseSettings(raw, file, format);
}
