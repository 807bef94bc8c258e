// A built brain in a member namespace of a bridge network (test/helpers/bridge-netns.ts): it listens on
// [::] (IPv4 and IPv6) at a fixed port — the namespace has ports of its own — so a restart on the same
// home keeps the address its peers pinned. Peers reach it at its bridge address (`url`); the test
// reaches it over its own link (`api`), with /metrics served off loopback (SVC_METRICS_PUBLIC=1).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BridgeMember } from './bridge-netns';
import { startBrainInNamespace, type NamespacedBrainProcess } from './netns';
import { WebSocket } from 'ws';
import type { SessionBrain } from './sync-model';

export const MESH_PORT = 7420;

/** Variables of this process a brain here must not inherit: the test says what each brain gets. */
const OWN_SETTINGS = ['SVC_METRICS_PUBLIC', 'SVC_METRICS_ENDPOINT', 'SVC_SYNC_DISABLED', 'SVC_CLOCK_OFFSET_MS', 'SVC_HOST', 'SVC_PORT', 'SVC_API_TOKEN'];

export interface MeshBrain extends SessionBrain {
  readonly label: string;
  readonly member: BridgeMember;
  readonly home: string;
  /** Starts it (again, on the same home). */
  start(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
  /** Its log so far, across restarts. */
  log(): string;
  metrics(): Promise<string>;
}

/** A brain for `member` with a fresh home (removed by `dispose`); `env` is added to its environment on every start. */
export function meshBrain(label: string, member: BridgeMember, env: Record<string, string> = {}): MeshBrain & { dispose(): Promise<void> } {
  const home = mkdtempSync(join(tmpdir(), `svc-sync-${label}-`));
  const base = `http://[${member.plan.nsV6}]:${MESH_PORT}`;
  let running: NamespacedBrainProcess | null = null;
  let token = '';
  let earlier = '';
  const inherited = { ...process.env };
  for (const name of OWN_SETTINGS) delete inherited[name];
  const brain = {
    label,
    member,
    home,
    url: `http://${member.meshV4}:${MESH_PORT}`,
    api: (path: string, init: RequestInit = {}) =>
      fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string> | undefined) } }),
    start: async () => {
      running = await startBrainInNamespace(member.plan.ns, { home, port: MESH_PORT, args: ['--host', '::'], env: { ...inherited, SVC_METRICS_PUBLIC: '1', ...env } });
      token = readFileSync(join(home, 'api-token'), 'utf8').trim();
    },
    stop: async () => {
      await running?.stop();
      retire();
    },
    kill: async () => {
      await running?.kill();
      retire();
    },
    log: () => earlier + (running?.output() ?? ''),
    metrics: async () => (await fetch(`${base}/metrics`)).text(),
    session: () => new WebSocket(`ws://[${member.plan.nsV6}]:${MESH_PORT}/v1/session`, ['svc.v1', `svc.bearer.${token}`]),
    dispose: async () => {
      await brain.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
  const retire = (): void => {
    earlier += running?.output() ?? '';
    running = null;
  };
  return brain;
}
