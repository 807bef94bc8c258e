// svc serve | start | stop | status — running the brain and asking how it is.
import { spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { HealthResponse } from '../../protocol/health';
import type { DashboardStatus } from '../../protocol/dashboard';
import type { BackendReport } from '../../protocol/memory';
import { callBrain, BrainRefusedError, BrainUnreachableError, resolveToken, type Connection } from '../connection';
import { lockOwner, readLock } from '../../daemon/store/instance-lock';
import { BRAIN_ENV, BRAIN_NODE_FLAGS } from '../brain-runtime';

export async function health(conn: Connection, timeoutMs = 1000): Promise<HealthResponse | null> {
  try {
    const r = await callBrain<HealthResponse>(conn, 'GET', '/health', undefined, timeoutMs);
    return r.status === 200 ? r.body : null;
  } catch (err) {
    if (err instanceof BrainUnreachableError) return null;
    throw err;
  }
}

/** The brain answering on a port, as it reports itself: /health, then its home and pid (authenticated). */
export interface BrainOnPort {
  health: HealthResponse;
  /** Its $SVC_HOME (the directory of its database); null when it refused our token. */
  home: string | null;
  pid: number | null;
  /** Why home and pid are unknown: the brain refused the token (another home's brain, most often). */
  refused: string | null;
}

export async function brainOnPort(conn: Connection, timeoutMs = 2000): Promise<BrainOnPort | null> {
  const h = await health(conn, timeoutMs);
  if (!h) return null;
  const st = await callBrain<DashboardStatus>(conn, 'GET', '/api/dashboard/status', undefined, timeoutMs);
  if (st.status !== 200) return { health: h, home: null, pid: null, refused: BrainRefusedError.of(conn, 'GET /api/dashboard/status', st.status, st.body).message };
  const b = await callBrain<BackendReport>(conn, 'GET', '/api/memory/backend', undefined, timeoutMs);
  if (b.status !== 200) throw BrainRefusedError.of(conn, 'GET /api/memory/backend', b.status, b.body);
  return { health: h, home: dirname(b.body.store.path), pid: st.body.pid ?? null, refused: null };
}

const sameDir = (a: string, b: string): boolean => resolve(a) === resolve(b);

async function waitForHealth(conn: Connection, deadlineMs: number, alive: () => boolean): Promise<HealthResponse | null> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end && alive()) {
    const h = await health(conn, 500);
    if (h) return h;
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

export interface StartOptions {
  host?: string | undefined;
  port?: number | undefined;
}

/** Starts the brain in the background unless it already answers; resolves when /health is 200. */
export async function startBrain(conn: Connection, opts: StartOptions, env: NodeJS.ProcessEnv, out: NodeJS.WritableStream): Promise<number> {
  const existing = await brainOnPort(conn, 1000);
  if (existing) {
    const h = existing.health;
    if (existing.home !== null && sameDir(existing.home, conn.home)) {
      out.write(`brain already running at ${conn.url} (svc ${h.version}, pid ${existing.pid ?? '?'}, up ${Math.round(h.uptime_s)} s)\n`);
      return 0;
    }
    // Another home's brain holds the port: starting ours is impossible, and talking to that one with
    // our token would fail (or reach the wrong data). Say which brain it is and what to do.
    const whose = existing.home !== null ? `the brain of ${existing.home} (pid ${existing.pid ?? '?'})` : `a brain that refuses the token of ${conn.home}`;
    out.write(`${conn.url} is taken by ${whose}, not by a brain on ${conn.home}.\nStop that one, or start this home's brain on another port: svc start --port <port>\n`);
    return 1;
  }
  mkdirSync(conn.home, { recursive: true, mode: 0o700 });
  const log = join(conn.home, 'brain.log');
  const fd = openSync(log, 'a', 0o600);
  const args = [...BRAIN_NODE_FLAGS, process.argv[1] ?? 'svc', 'serve', '--home', conn.home];
  if (opts.host) args.push('--host', opts.host);
  if (opts.port !== undefined) args.push('--port', String(opts.port));
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', fd, fd], env: { ...env, ...BRAIN_ENV } });
  const child_ = { exited: null as number | null };
  child.on('exit', (code) => (child_.exited = code ?? 1));
  child.unref();
  const h = await waitForHealth(conn, 15_000, () => child_.exited === null);
  if (!h) {
    const why = child_.exited === null ? ' within 15 s' : ` (exited with ${child_.exited})`;
    out.write(`the brain did not become healthy${why}; see ${log}\n`);
    return 1;
  }
  // The pid as the brain on the port reports it (the token file exists now, on a fresh home too).
  const live = await brainOnPort({ ...conn, token: resolveToken(conn.home, env) }, 2000);
  out.write(`brain running at ${conn.url} (svc ${h.version}, pid ${live?.pid ?? child.pid ?? '?'}); logs in ${log}\n`);
  return 0;
}

/** Sends SIGTERM to the brain that holds $SVC_HOME and waits for it to exit. */
export async function stopBrain(conn: Connection, out: NodeJS.WritableStream): Promise<number> {
  // lockOwner checks that the recorded pid is alive AND started when the brain did: a stale pid file
  // may name a pid the kernel has since given to an unrelated process, which must not be signalled.
  const pid = lockOwner(conn.home);
  if (pid === null) {
    const stale = readLock(join(conn.home, 'brain.pid')) !== null;
    out.write(`no brain is running on ${conn.home}${stale ? ' (stale pid file)' : ''}\n`);
    return 0;
  }
  try {
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') {
      out.write(`no brain is running on ${conn.home} (it exited meanwhile)\n`);
      return 0;
    }
    throw err;
  }
  for (let i = 0; i < 120; i++) {
    await new Promise((r) => setTimeout(r, 50));
    try {
      process.kill(pid, 0);
    } catch {
      out.write(`brain stopped (pid ${pid})\n`);
      return 0;
    }
  }
  out.write(`brain (pid ${pid}) did not stop within 6 s\n`);
  return 1;
}

/**
 * The brain on the port, as it reports itself: its home and pid come from the brain (authenticated),
 * not from the caller's $SVC_HOME, which may belong to another brain or none.
 */
export async function status(conn: Connection, json: boolean, out: NodeJS.WritableStream): Promise<number> {
  const b = await brainOnPort(conn, 2000);
  if (json) {
    const body = b
      ? { running: true, url: conn.url, home: b.home, pid: b.pid, health: b.health, ...(b.refused ? { error: b.refused } : {}) }
      : { running: false, url: conn.url, home: conn.home, pid: null, health: null };
    out.write(`${JSON.stringify(body)}\n`);
    return b ? 0 : 1;
  }
  if (!b) {
    out.write(`brain: not running at ${conn.url}\n  start it with: svc start   (or: systemctl start svc-brain)\n`);
    return 1;
  }
  const h = b.health;
  const other = b.home !== null && !sameDir(b.home, conn.home) ? `  (not the brain of ${conn.home})\n` : '';
  const who = b.refused ? `  home:    unknown: ${b.refused}\n` : `  home:    ${b.home}\n${other}  pid:     ${b.pid ?? '?'}\n`;
  out.write(`brain: ${h.status} at ${conn.url}\n  version: ${h.version}\n  uptime:  ${formatUptime(h.uptime_s)}\n${who}`);
  return 0;
}

export function formatUptime(seconds: number): string {
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return [d ? `${d}d` : '', h ? `${h}h` : '', m ? `${m}m` : '', `${s % 60}s`].filter(Boolean).join(' ');
}
