// The brain-local transport (spec 1.7; docs/hardware.md "Devices on the brain's own board"): when the
// brain's board has serial or BLE devices, the brain supervises a node-agent child for them, so the
// brain process itself never loads a native module and a driver crash never takes it down.
//
// - The child connects to this brain's /v1/node on loopback with a node key minted for this run only
//   (LocalAgentKey, given to it in its environment, never on its command line), as node LOCAL_NODE_ID.
// - Its stdout and stderr go line by line into the brain's log (logger `local-agent`).
// - It is restarted with exponential backoff (1 s doubling to 60 s; reset after it ran 60 s). Exit 78
//   (its configuration is invalid) and 77 (its key was refused) are not retried: they need the user.
// - It is started once the brain listens and stopped with the brain: SIGTERM, SIGKILL after 5 s.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import type { CapabilityVerifier, CredentialPrincipal } from '../kernel/capability';
import type { ListenAddress } from '../kernel/listener';

export const LOCAL_NODE_ID = 'brain-local';
/** The environment variable the node-agent reads its key from (node-agent/command-line.ts). */
export const NODE_KEY_VARIABLE = 'SVC_NODE_KEY';
const EX_NOPERM = 77;
const EX_CONFIG = 78;
const BACKOFF = { firstMs: 1000, maxMs: 60_000, stableMs: 60_000 } as const;
const KILL_AFTER_MS = 5000;

/** The local child's credential: random per brain run, compared by hash in constant time. */
export class LocalAgentKey implements CapabilityVerifier {
  readonly key = randomBytes(32).toString('base64url');
  private readonly hash = createHash('sha256').update(this.key).digest();
  private readonly principal: CredentialPrincipal = Object.freeze({ kind: 'node', id: LOCAL_NODE_ID });

  verify(credential: { readonly token: string }): CredentialPrincipal | undefined {
    const presented = createHash('sha256').update(credential.token).digest();
    return timingSafeEqual(presented, this.hash) ? this.principal : undefined;
  }
}

export interface LocalAgentOptions {
  /** dist/node-agent.mjs */
  script: string;
  /** Its configuration file (the devices of this board). */
  config: string;
  key: LocalAgentKey;
  logger: Logger;
  /** Who runs the child: process.execPath by default. */
  node?: string;
  /** Extra environment for the child (tests: DBUS_SYSTEM_BUS_ADDRESS); it never inherits the brain's, which may hold secrets. */
  env?: Readonly<Record<string, string>>;
}

export type LocalAgentState = 'stopped' | 'running' | 'backoff' | 'failed';

export class LocalAgentSupervisor {
  private child: ChildProcess | null = null;
  private state: LocalAgentState = 'stopped';
  private stopping = false;
  private timer: NodeJS.Timeout | null = null;
  private delayMs: number = BACKOFF.firstMs;
  private brainUrl: string | null = null;
  private starts = 0;

  constructor(private readonly options: LocalAgentOptions) {}

  status(): { state: LocalAgentState; pid: number | null; starts: number } {
    return { state: this.state, pid: this.child?.pid ?? null, starts: this.starts };
  }

  /** The brain listens (again): start the child against the first loopback-reachable address, once. */
  listening(addresses: readonly ListenAddress[]): void {
    const url = loopbackUrl(addresses);
    if (url === null) {
      this.options.logger.error({ addresses }, 'the brain listens on no address the local node-agent can reach; it is not started');
      return;
    }
    const first = this.brainUrl === null;
    this.brainUrl = url;
    if (first && !this.stopping) this.spawn();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    await exited;
    clearTimeout(kill);
    this.state = 'stopped';
  }

  private spawn(): void {
    const { options } = this;
    const args = [options.script, 'run', '--config', options.config, '--brain', this.brainUrl!, '--node-id', LOCAL_NODE_ID];
    const child = spawn(options.node ?? process.execPath, args, { env: { ...childEnvironment(), ...options.env, [NODE_KEY_VARIABLE]: options.key.key }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.state = 'running';
    this.starts++;
    const startedAt = Date.now();
    const log = options.logger;
    log.info({ pid: child.pid, config: options.config }, 'local node-agent started');
    createInterface({ input: child.stdout }).on('line', (line) => log.info({ stream: 'stdout' }, line));
    createInterface({ input: child.stderr }).on('line', (line) => log.warn({ stream: 'stderr' }, line));
    child.on('error', (err) => log.error({ err }, 'local node-agent could not be started'));
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      if (this.stopping) return;
      if (code === EX_CONFIG || code === EX_NOPERM) {
        this.state = 'failed';
        log.error({ code }, code === EX_CONFIG ? 'local node-agent refused its configuration; fix it and restart the brain' : 'local node-agent key was refused');
        return;
      }
      if (Date.now() - startedAt >= BACKOFF.stableMs) this.delayMs = BACKOFF.firstMs;
      this.state = 'backoff';
      log.warn({ code, signal, restart_in_ms: this.delayMs }, 'local node-agent exited; restarting');
      this.timer = setTimeout(() => this.spawn(), this.delayMs);
      this.timer.unref();
      this.delayMs = Math.min(this.delayMs * 2, BACKOFF.maxMs);
    });
  }
}

/** A plain environment: a standard PATH, the user's home, UTF-8; nothing of the brain's (SVC_API_TOKEN, SVC_VAULT_KEY). */
function childEnvironment(): Record<string, string> {
  return { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: userInfo().homedir, LANG: 'C.UTF-8' };
}

/** http://<loopback>:<port> the child can reach: 127.0.0.1 when IPv4 is bound (or any), else ::1. */
export function loopbackUrl(addresses: readonly ListenAddress[]): string | null {
  const v4 = addresses.find((a) => a.host === '127.0.0.1' || a.host === '0.0.0.0');
  if (v4) return `http://127.0.0.1:${v4.port}`;
  const v6 = addresses.find((a) => a.host === '::1' || a.host === '::');
  if (v6) return `http://[::1]:${v6.port}`;
  return null;
}
