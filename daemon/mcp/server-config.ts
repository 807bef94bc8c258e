// What the brain needs to reach one declared external MCP server (protocol/mcp.ts): the transport's
// parameters with every vault reference read now (a value `{"vault": "<namespace>/<key>"}`: secrets
// never sit in settings.json nor in the brain's table of servers), a one-line description of the
// target for status and logs (never an env or header value), and the reconnect schedule.
import type { SecretStore } from '../kernel/capability';
import { ToolFailure } from '../kernel/tool';
import type { ConfigValue, McpServerDeclaration } from '../../protocol/mcp';

export type TransportParams =
  | { kind: 'stdio'; command: string; args: string[]; cwd?: string; env: Record<string, string> }
  | { kind: 'http'; url: string; headers: Record<string, string> };

/** A declaration the brain cannot act on (a missing secret, a locked vault): the server's last error. */
export class ServerConfigError extends ToolFailure {
  constructor(message: string) {
    super(message);
    this.name = 'ServerConfigError';
  }
}

/** The value of one env var or header; a vault reference is read now. */
export function resolveValue(value: ConfigValue, vault: Pick<SecretStore, 'get' | 'status'>, what: string): string {
  if (typeof value === 'string') return value;
  const slash = value.vault.indexOf('/');
  const [namespace, key] = [value.vault.slice(0, slash), value.vault.slice(slash + 1)];
  if (vault.status().state !== 'ok') throw new ServerConfigError(`${what}: the vault is ${vault.status().state}, so ${value.vault} cannot be read`);
  const secret = vault.get(namespace, key);
  if (secret === undefined) throw new ServerConfigError(`${what}: no secret ${value.vault} in the vault (svc mcp secret ${key} puts one in namespace mcp)`);
  return secret;
}

function resolveAll(values: Readonly<Record<string, ConfigValue>> | undefined, vault: Pick<SecretStore, 'get' | 'status'>, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(values ?? {})) out[name] = resolveValue(value, vault, `${what} ${name}`);
  return out;
}

export function transportParams(d: McpServerDeclaration, vault: Pick<SecretStore, 'get' | 'status'>): TransportParams {
  if (d.url !== undefined) return { kind: 'http', url: d.url, headers: resolveAll(d.headers, vault, 'header') };
  if (d.command === undefined) throw new ServerConfigError('neither command nor url is declared');
  return { kind: 'stdio', command: d.command, args: [...(d.args ?? [])], ...(d.cwd === undefined ? {} : { cwd: d.cwd }), env: resolveAll(d.env, vault, 'env') };
}

/** The command line or URL, for people: arguments with spaces quoted; a URL without its user info or query. */
export function describeTarget(d: McpServerDeclaration): string {
  if (d.url !== undefined) {
    try {
      const u = new URL(d.url);
      return `${u.protocol}//${u.host}${u.pathname}`;
    } catch (err) {
      if (err instanceof TypeError) return '(an unreadable URL)';
      throw err;
    }
  }
  return [d.command ?? '', ...(d.args ?? [])].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

/** Reconnect schedule: 1 s doubling to 5 min, each ±20 % at random so servers restarted together spread out. */
export const BACKOFF = { firstMs: 1000, maxMs: 300_000, jitter: 0.2 } as const;

export function reconnectDelay(attempt: number, random: () => number): number {
  const base = Math.min(BACKOFF.maxMs, BACKOFF.firstMs * 2 ** Math.min(attempt, 20));
  return Math.min(BACKOFF.maxMs, Math.round(base * (1 - BACKOFF.jitter + 2 * BACKOFF.jitter * random())));
}
