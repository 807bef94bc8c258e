// Every environment variable the brain and the svc client use, read in one place (called only from
// composition roots with process.env). docs/configuration.md documents each; a test keeps the two in
// step. Variables the spec names for features this version does not have are refused here
// (unsupported-settings.ts).
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Settings } from './settings-schema';
import { unsupportedVariableProblems } from './unsupported-settings';

export const ENVIRONMENT_VARIABLES = {
  SVC_HOME: 'Data directory (default ~/.svc)',
  SVC_HOST: 'Listen address (default 127.0.0.1)',
  SVC_PORT: 'Listen port (default 9090)',
  SVC_URL: 'Brain address used by the svc client (default http://127.0.0.1:9090)',
  SVC_API_TOKEN: 'API bearer token; else $SVC_HOME/api-token is used (created 0600)',
  SVC_VAULT_KEY: 'Vault key, 32 bytes as 64 hex or base64; else systemd credential vault.key, else $SVC_HOME/vault.key',
  SVC_LOG_LEVEL: 'pino level: fatal error warn info debug trace silent',
  SVC_METRICS_ENDPOINT: '1 (default) serves /metrics; 0, false, off silence the endpoint and all metric emission',
  SVC_METRICS_PUBLIC: '1 serves /metrics to callers off loopback; otherwise they get 404',
  SVC_SYNC_DISABLED: '1 marks a deployment as single-node: no /sync, no sync journal, no sync advertising over mDNS; the svc_sync_* metrics stay 0 (sync.enabled and mesh.advertise_sync false)',
  SVC_CLOCK_OFFSET_MS: "Shifts the brain's clock by this many milliseconds (an integer, may be negative), as a board with a wrong clock would; for tests of sync under clock skew",
  SVC_GENERIC_HARDWARE_SKILLS: '0 turns off the generated hwdev_<device>__<action> tools in favour of the hand-written device skills (hardware.generic_tools; docs/hardware.md)',
  SVC_DEBUG: '1 makes the svc client print the stack of an error after its one-line message',
  SVC_REGISTRY_URL: 'The marketplace registry svc publish, install and marketplace use when --registry is not given (default: the local brain; docs/registry.md)',
  SVC_REGISTRY_TOKEN: 'The bearer token svc marketplace review sends to a registry: the reviewer token of svc registry serve (docs/registry.md)',
  CREDENTIALS_DIRECTORY: 'Set by systemd LoadCredential=; vault.key and api-token are read from it',
  NOTIFY_SOCKET: 'Set by systemd Type=notify; READY=1 / STOPPING=1 / WATCHDOG=1 are sent to it',
  WATCHDOG_USEC: 'Set by systemd WatchdogSec=; the brain pings every third of the interval',
} as const;

export type EnvName = keyof typeof ENVIRONMENT_VARIABLES;
type Env = Readonly<Partial<Record<string, string | undefined>>>;

const OFF = new Set(['0', 'false', 'off', 'no']);
/** Spec 4.12: 0, false, off switch a default-on flag off. */
export const envFlag = (value: string | undefined, fallback: boolean): boolean =>
  value === undefined || value.trim() === '' ? fallback : !OFF.has(value.trim().toLowerCase());

export function resolveHome(env: Env, flag?: string): string {
  return flag ?? env.SVC_HOME ?? join(homedir(), '.svc');
}

export class EnvironmentError extends Error {}

/** SVC_CLOCK_OFFSET_MS: how far the brain's clock is shifted from the machine's (0 when unset). */
export function clockOffset(env: Env): number {
  const raw = env.SVC_CLOCK_OFFSET_MS?.trim() ?? '';
  if (raw === '') return 0;
  if (!/^-?\d{1,12}$/.test(raw)) throw new EnvironmentError(`SVC_CLOCK_OFFSET_MS=${raw}: expected an integer number of milliseconds`);
  return Number(raw);
}

/** Decimal digits only: Number() would also take "0x1F" or "1e3" as a port. */
function port(value: string, name: string): number {
  const n = /^\d{1,5}$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n > 65535) throw new EnvironmentError(`${name}=${value}: expected a port number 0-65535`);
  return n;
}

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Overlays environment variables (and CLI flags, which win) onto validated settings. */
export function applyEnvironment(settings: Settings, env: Env, flags: { host?: string; port?: number } = {}): Settings {
  const s = structuredClone<Settings>(settings);
  if (env.SVC_HOST) s.server.host = env.SVC_HOST;
  if (env.SVC_PORT) s.server.port = port(env.SVC_PORT, 'SVC_PORT');
  if (flags.host !== undefined) s.server.host = flags.host;
  if (flags.port !== undefined) s.server.port = flags.port;
  if (env.SVC_LOG_LEVEL) {
    if (!LEVELS.has(env.SVC_LOG_LEVEL)) throw new EnvironmentError(`SVC_LOG_LEVEL=${env.SVC_LOG_LEVEL}: expected one of ${[...LEVELS].join(', ')}`);
    s.log.level = env.SVC_LOG_LEVEL;
  }
  s.metrics.endpoint = envFlag(env.SVC_METRICS_ENDPOINT, s.metrics.endpoint);
  // SVC_METRICS_PUBLIC is off unless exactly 1 (spec 4.12).
  if (env.SVC_METRICS_PUBLIC !== undefined) s.metrics.public = env.SVC_METRICS_PUBLIC.trim() === '1';
  // Spec 4.14: SVC_SYNC_DISABLED=1 marks the deployment single-node: the sync capability is off and the
  // mesh capability does not advertise the sync service (docs/sync.md, docs/mesh.md). It overlays the
  // capabilities' own settings sections.
  if (env.SVC_SYNC_DISABLED !== undefined && env.SVC_SYNC_DISABLED.trim() === '1') {
    const sections = s as Settings & Record<string, unknown>;
    const mesh = sections.mesh;
    sections.mesh = { ...(typeof mesh === 'object' && mesh !== null ? mesh : {}), advertise_sync: false };
    const sync = sections.sync;
    sections.sync = { ...(typeof sync === 'object' && sync !== null ? sync : {}), enabled: false };
  }
  // Spec 1.7: SVC_GENERIC_HARDWARE_SKILLS=0 disables the generated device tools (docs/hardware.md).
  if (env.SVC_GENERIC_HARDWARE_SKILLS !== undefined && env.SVC_GENERIC_HARDWARE_SKILLS.trim() !== '') {
    const value = env.SVC_GENERIC_HARDWARE_SKILLS.trim();
    if (value !== '0' && value !== '1') throw new EnvironmentError(`SVC_GENERIC_HARDWARE_SKILLS=${env.SVC_GENERIC_HARDWARE_SKILLS}: expected 0 or 1`);
    const sections = s as Settings & Record<string, unknown>;
    const hardware = sections.hardware;
    sections.hardware = { ...(typeof hardware === 'object' && hardware !== null ? hardware : {}), generic_tools: value === '1' };
  }
  const unsupported = unsupportedVariableProblems(env);
  if (unsupported.length === 1) throw new EnvironmentError(unsupported[0]);
  if (unsupported.length > 1) throw new EnvironmentError(`environment variables refused:\n${unsupported.map((p) => `  - ${p}`).join('\n')}`);
  return Object.freeze(s);
}
