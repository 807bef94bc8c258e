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
  let token = env.SVC_API_TOKEN?.trim() || undefined;
  if (!token) {
    try {
      token = readFileSync(join(home, 'api-token'), 'utf8').trim() || undefined;
    } catch {
      token = undefined; // no token file yet: commands that need one report it
    }
  }
  return { url, token, home };
}

export class BrainUnreachableError extends Error {
  constructor(readonly url: string, cause: unknown) {
    super(`cannot reach the brain at ${url} (${(cause as Error).message}); start it with \`svc start\` or \`systemctl start svc-brain\``);
  }
}

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
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}
