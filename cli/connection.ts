// How the svc client finds the brain and its token (docs/cli.md):
//   url:   --url, else SVC_URL, else http://SVC_HOST:SVC_PORT (defaults 127.0.0.1:9090)
//   token: SVC_API_TOKEN, else $SVC_HOME/api-token (the file the brain creates on first start)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { homedir } from 'node:os';

export type Env = Readonly<Record<string, string | undefined>>;

export interface Connection {
  url: string;
  token: string | undefined;
  home: string;
}

export interface GlobalFlags {
  url?: string | undefined;
  home?: string | undefined;
}

export function resolveConnection(flags: GlobalFlags, env: Env): Connection {
  const home = flags.home ?? env.SVC_HOME ?? join(homedir(), '.svc');
  const host = !env.SVC_HOST || env.SVC_HOST === '0.0.0.0' || env.SVC_HOST === '::' ? '127.0.0.1' : env.SVC_HOST;
  const url = (flags.url ?? env.SVC_URL ?? `http://${host.includes(':') ? `[${host}]` : host}:${env.SVC_PORT ?? '9090'}`).replace(/\/+$/, '');
  return { url, token: resolveToken(home, env), home };
}

/**
 * SVC_API_TOKEN, else $SVC_HOME/api-token. Read again after `svc start` has started a brain on a fresh
 * home: the brain creates the file, so a token read before the start is missing (every call a 401).
 */
export function resolveToken(home: string, env: Env): string | undefined {
  const fromEnv = env.SVC_API_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  try {
    return readFileSync(join(home, 'api-token'), 'utf8').trim() || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // no brain has started on this home yet
    throw err;
  }
}

export class BrainUnreachableError extends Error {
  constructor(readonly url: string, cause: unknown) {
    super(`cannot reach the brain at ${url} (${(cause as Error).message}); start it with \`svc start\` or \`systemctl start svc-brain\``);
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string };
}

/** The brain answered a call with an error status; the message is the envelope's (spec error envelope). */
export class BrainRefusedError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'BrainRefusedError';
  }

  static of(conn: Connection, what: string, status: number, body: unknown): BrainRefusedError {
    const e = (body as ErrorBody | null)?.error;
    if (status === 401) {
      const where = conn.token ? `the token from ${tokenSource(conn)} is not this brain's` : `no token was sent (none was read from ${join(conn.home, 'api-token')}, and SVC_API_TOKEN is not set)`;
      return new BrainRefusedError(status, e?.code ?? 'UNAUTHORIZED', `${what}: the brain at ${conn.url} refused the request (401): ${where}; use --home (or SVC_HOME) of the brain on that port, or SVC_API_TOKEN`);
    }
    return new BrainRefusedError(status, e?.code ?? `HTTP_${status}`, `${what}: ${e?.message ?? `the brain answered HTTP ${status}`}`);
  }
}

const tokenSource = (conn: Connection): string => `${join(conn.home, 'api-token')} (or SVC_API_TOKEN)`;

export interface ApiResult<T> {
  status: number;
  body: T;
}

/** One HTTP call to the brain with the bearer token; network failures become BrainUnreachableError. */
export async function callBrain<T>(conn: Connection, method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<ApiResult<T>> {
  let res: Response;
  try {
    res = await fetch(`${conn.url}${path}`, {
      method,
      headers: {
        ...(conn.token ? { authorization: `Bearer ${conn.token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new BrainUnreachableError(conn.url, err);
  }
  const text = await res.text();
  try {
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw new BrainRefusedError(res.status, 'NOT_A_BRAIN', `${method} ${path}: ${conn.url} answered HTTP ${res.status} with a body that is not JSON; is an svc brain listening there?`);
  }
}

/** callBrain for a call that must succeed: any status outside 2xx throws BrainRefusedError. */
export async function callBrainOk<T>(conn: Connection, method: string, path: string, body?: unknown, timeoutMs?: number): Promise<T> {
  const r = await callBrain<T>(conn, method, path, body, timeoutMs);
  if (r.status < 200 || r.status > 299) throw BrainRefusedError.of(conn, `${method} ${path}`, r.status, r.body);
  return r.body;
}
