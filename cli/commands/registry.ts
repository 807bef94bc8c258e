// svc registry serve (issue 16, docs/registry.md "Running a registry"), and how the marketplace
// commands (publish, install, marketplace) find a registry and talk to it:
//   url:   --registry <url>, else $SVC_REGISTRY_URL, else the local brain (--url / $SVC_URL), whose
//          registry answers when its capability is enabled (settings registry.enabled)
//   token: $SVC_REGISTRY_TOKEN (the reviewer token of `svc registry serve`), else, for the local brain,
//          its API token. Only reviews need one; publishing, searching and installing are public.
import type { Sade } from 'sade';
import { BrainUnreachableError, callBrain, type Connection, type Env } from '../connection';
import { REGISTRY_PREFIX } from '../../protocol/registry';
import { str, type CliIo, type CommandContext } from './key';

type Opts = Record<string, unknown>;

export const REGISTRY_USAGE = `usage: svc registry serve [--dir <dir>] [--host <host>] [--port <port>]
`;
export const DEFAULT_REGISTRY_PORT = 9091;

/** A registry to talk to: its base URL, the token sent (if any), and whether it is the local brain. */
export interface Registry {
  readonly url: string;
  readonly token: string | undefined;
  readonly local: boolean;
}

export function resolveRegistry(flag: string | undefined, env: Env, brain: Connection): Registry {
  const explicit = flag ?? env.SVC_REGISTRY_URL;
  const token = env.SVC_REGISTRY_TOKEN?.trim() || undefined;
  if (explicit !== undefined && explicit.trim() !== '') return { url: explicit.trim().replace(/\/+$/, ''), token, local: false };
  return { url: brain.url, token: token ?? brain.token, local: true };
}

/** A refusal of the registry, worded for people: which registry, and what it said. */
export class RegistryError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly details: unknown,
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string; details?: unknown };
}

/** Calls the registry's API (`path` under /registry/v1); a non-2xx answer is a RegistryError. */
export async function callRegistry<T>(registry: Registry, method: string, path: string, body?: unknown): Promise<T> {
  const conn: Connection = { url: registry.url, token: registry.token, home: '' };
  let r: Awaited<ReturnType<typeof callBrain<T>>>;
  try {
    r = await callBrain<T>(conn, method, `${REGISTRY_PREFIX}${path}`, body, 60_000);
  } catch (err) {
    if (err instanceof BrainUnreachableError && !registry.local) throw new RegistryError(`cannot reach the registry at ${registry.url}; is \`svc registry serve\` running there?`, 0, 'UNREACHABLE', null);
    throw err;
  }
  if (r.status >= 200 && r.status < 300) return r.body;
  const e = (r.body as ErrorBody | null)?.error;
  const details = e?.details ?? null;
  // A 404 that names no item is the route itself missing: no registry is served there.
  if (r.status === 404 && (details === null || typeof details !== 'object')) throw new RegistryError(noRegistry(registry), 404, 'NO_REGISTRY', details);
  if (r.status === 401 || r.status === 403) {
    const hint = registry.local ? "the local brain's API token is sent ($SVC_HOME/api-token or SVC_API_TOKEN)" : 'set SVC_REGISTRY_TOKEN to the reviewer token of that registry (its directory\'s reviewer-token file)';
    throw new RegistryError(`${e?.message ?? `HTTP ${r.status}`} (${hint})`, r.status, e?.code ?? `HTTP_${r.status}`, details);
  }
  throw new RegistryError(e?.message ?? `the registry at ${registry.url} answered HTTP ${r.status}`, r.status, e?.code ?? `HTTP_${r.status}`, details);
}

const noRegistry = (registry: Registry): string =>
  registry.local
    ? `no registry at ${registry.url}: the local brain serves one when settings registry.enabled is true; else pass --registry <url> or set SVC_REGISTRY_URL`
    : `no registry at ${registry.url} (nothing answers under ${REGISTRY_PREFIX})`;

/** Runs a command body; a RegistryError or an unreachable registry is one line on stderr and exit 1. */
export async function registryCommand(io: Pick<CliIo, 'err'>, name: string, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RegistryError || err instanceof BrainUnreachableError) {
      io.err.write(`svc ${name}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

export function registerRegistryCommands(prog: Sade, ctx: CommandContext, version: string): void {
  prog.command('registry', 'A marketplace registry of your own: svc registry serve').action(() => {
    ctx.out.write(REGISTRY_USAGE);
    ctx.exit(2);
  });
  prog
    .command('registry serve', 'Run a standalone marketplace registry in the foreground (docs/registry.md)')
    .option('--dir', 'Its data directory (default <home>/registry)')
    .option('--host', 'Listen address (default 127.0.0.1)')
    .option('--port', `Listen port (default ${DEFAULT_REGISTRY_PORT}; 0 picks a free one)`)
    .action(async (o: Opts) => {
      const port = o.port === undefined ? DEFAULT_REGISTRY_PORT : Number(o.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) return ctx.usageError(`registry serve: --port ${String(o.port)}: expected a port number 0-65535`);
      const dir = str(o.dir) ?? `${ctx.conn(o).home}/registry`;
      const { serveRegistry } = await import('../../daemon/registry-server');
      await serveRegistry({ dir, host: str(o.host) ?? '127.0.0.1', port, version, logLevel: ctx.env.SVC_LOG_LEVEL ?? 'warn', out: ctx.out });
    });
}
