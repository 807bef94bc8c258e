// MCP both ways (issue 16, spec 1.12; docs/mcp.md): the declaration of an external MCP server the brain
// connects to (settings.json `mcp.servers`, or added with `svc mcp servers add`), the status the
// brain reports for each, and the bodies of /api/mcp/*. Defined once for the brain's validation,
// the CLI and the docs.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { SafetyLevel } from './session';

const Obj = <P extends Record<string, TSchema>>(props: P, description?: string) => Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });

/**
 * A server's name: lower-case letters and digits only, so `mcp_<server>_<tool>` reads back to one
 * server (an underscore in the name would let `a_b`+`c` and `a`+`b_c` meet).
 */
export const SERVER_NAME = '^[a-z][a-z0-9]{0,23}$';
export const ServerName = Type.String({ pattern: SERVER_NAME, description: 'Lower-case letters and digits, at most 24, starting with a letter' });

/** A secret kept in the vault, named `<namespace>/<key>` (svc mcp secret <key> writes namespace `mcp`). */
export const VaultRef = Obj({ vault: Type.String({ pattern: '^[^/\\s]+/\\S+$', maxLength: 200, description: '<namespace>/<key> in the vault' }) }, 'A value read from the vault');
export type VaultRef = Static<typeof VaultRef>;

/** An environment variable's or header's value: plain text (not secret) or a vault reference. */
export const ConfigValue = Type.Union([Type.String({ maxLength: 4096 }), VaultRef]);
export type ConfigValue = Static<typeof ConfigValue>;

const EnvName = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' });
const HeaderName = Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$" });

/** One external server: either `command` (stdio, a child process) or `url` (Streamable HTTP). */
export const McpServerDeclaration = Obj(
  {
    name: ServerName,
    command: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'stdio: the program to run (no shell)' })),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 64, description: 'stdio: its arguments' })),
    cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'stdio: its working directory' })),
    env: Type.Optional(Type.Record(EnvName, ConfigValue, { description: 'stdio: environment variables besides HOME, LOGNAME, PATH, SHELL, TERM, USER' })),
    url: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 4096, description: 'Streamable HTTP: the server\'s endpoint' })),
    headers: Type.Optional(Type.Record(HeaderName, ConfigValue, { description: 'Streamable HTTP: request headers (Authorization: a vault reference)' })),
    safety: Type.Optional(SafetyLevel),
    enabled: Type.Optional(Type.Boolean({ description: 'false: declared but not connected' })),
  },
  'An external MCP server whose tools the brain offers as its own',
);
export type McpServerDeclaration = Static<typeof McpServerDeclaration>;

/** The safety level of an external server's tools when its declaration names none: held for approval by default. */
export const DEFAULT_SERVER_SAFETY: SafetyLevel = 'privileged';

/** Exactly one transport: a problem in words, or null. */
export function transportProblem(d: Pick<McpServerDeclaration, 'command' | 'url' | 'args' | 'cwd' | 'env' | 'headers'>): string | null {
  if ((d.command === undefined) === (d.url === undefined)) return 'give either command (stdio) or url (Streamable HTTP), not both and not neither';
  if (d.url !== undefined && (d.args !== undefined || d.cwd !== undefined || d.env !== undefined)) return 'args, cwd and env belong to a stdio server (command), not to url';
  if (d.command !== undefined && d.headers !== undefined) return 'headers belong to a Streamable HTTP server (url), not to command';
  return null;
}

export const SERVER_STATES = ['connecting', 'connected', 'failed', 'disabled'] as const;
export type ServerState = (typeof SERVER_STATES)[number];

export const McpServerStatus = Obj({
  name: ServerName,
  source: Type.Union([Type.Literal('settings'), Type.Literal('cli')], { description: 'settings: settings.json mcp.servers; cli: added through the API (svc mcp servers add)' }),
  transport: Type.Union([Type.Literal('stdio'), Type.Literal('http')]),
  /** The command line or the URL (never env or header values). */
  target: Type.String(),
  safety: SafetyLevel,
  state: Type.Union(SERVER_STATES.map((s) => Type.Literal(s))),
  last_error: Type.Union([Type.String(), Type.Null()]),
  /** The brain's names of its tools (docs/mcp.md "Naming"). */
  tools: Type.Array(Type.String()),
  connected_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Epoch ms of the current connection' }),
  /** Connections made after the first (reconnects). */
  reconnects: Type.Integer({ minimum: 0 }),
});
export type McpServerStatus = Static<typeof McpServerStatus>;

export const McpServerList = Obj({ servers: Type.Array(McpServerStatus) });
export type McpServerList = Static<typeof McpServerList>;

export const McpServerParams = Obj({ name: ServerName });
export const McpServerRemoved = Obj({ removed: ServerName });

export const McpToolListing = Obj({ name: Type.String(), remote_name: Type.String(), description: Type.String() });
export const McpTestResult = Obj({
  name: ServerName,
  ok: Type.Boolean(),
  tools: Type.Array(McpToolListing),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type McpTestResult = Static<typeof McpTestResult>;

export const McpSecretParams = Obj({ key: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$' }) });
export const McpSecretBody = Obj({ value: Type.String({ minLength: 1, maxLength: 16_384 }) });
export const McpSecretSaved = Obj({ ref: VaultRef });
/** The vault namespace of secrets set through /api/mcp/secrets. */
export const MCP_VAULT_NAMESPACE = 'mcp';
