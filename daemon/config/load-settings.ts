// Reads and validates $SVC_HOME/settings.json. An invalid file is a SettingsError listing every
// problem with its JSON path; the caller prints it and exits, never a stack trace.
import { readFileSync } from 'node:fs';
import { Value } from '@sinclair/typebox/value';
import { SettingsSchema, type Settings } from './settings-schema';
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

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Validates a parsed settings object and fills in defaults. A section of a feature this version does
 * not have is reported as such rather than as an unknown key (unsupported-settings.ts). */
export function parseSettings(raw: unknown, file = 'settings.json'): Settings {
  const unsupported = isRecord(raw) ? unsupportedSectionProblems(raw) : [];
  const rest = isRecord(raw) ? Object.fromEntries(Object.entries(raw).filter(([key]) => !Object.hasOwn(UNSUPPORTED_SECTIONS, key))) : raw;
  const withDefaults = Value.Default(SettingsSchema, Value.Clone(rest ?? {}));
  const problems = [...unsupported, ...[...Value.Errors(SettingsSchema, withDefaults)].map((e) => `${e.path || '/'}: ${e.message}`)];
  if (problems.length > 0) throw new SettingsError(file, problems);
  return Object.freeze(withDefaults as Settings);
}

/** Loads settings.json; a missing file means all defaults. */
export function loadSettings(file: string): Settings {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return parseSettings({}, file);
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new SettingsError(file, [`/: not valid JSON (${(err as Error).message})`]);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new SettingsError(file, ['/: must be a JSON object']);
  return parseSettings(raw, file);
}
