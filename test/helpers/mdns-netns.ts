// Real multicast without the machine's network: two network namespaces this process creates, linked
// by a veth pair on a private test subnet (10.232.N.0/30), each with a route for 224.0.0.0/4 (a
// namespace has no default route, and without one multicast cannot be sent). In them: the built
// brain, a mesh/mdns.ts browser (a child process running the calling test file in browser mode),
// and avahi-daemon with a private D-Bus (avahi-browse and avahi-publish only talk D-Bus) and a
// private /run (its pid file). Every process started here is stopped by its own pid. Needs root.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BRAIN_ENV, BRAIN_NODE_FLAGS } from '../../cli/brain-runtime';
import { browseMdns, type MdnsLog } from '../../mesh/mdns';
import type { DiscoveredService, ServiceKind } from '../../mesh/mdns-records';
import { SVC } from './brain-process';
import { runTool, runToolOk } from './external-tools';

export interface MeshNet {
  brainNs: string;
  peerNs: string;
  brainIf: string;
  peerIf: string;
  brainV4: string;
  peerV4: string;
  destroy(): Promise<void>;
}

/** Two namespaces joined by a veth pair; `tag` keeps concurrent tests apart. */
export async function createMeshNet(tag: string): Promise<MeshNet> {
  const n = (process.pid % 200) + 20;
  const net: MeshNet = {
    brainNs: `svc-${tag}-b-${process.pid}`,
    peerNs: `svc-${tag}-p-${process.pid}`,
    brainIf: `svb${process.pid}`,
    peerIf: `svp${process.pid}`,
    brainV4: `10.232.${n}.1`,
    peerV4: `10.232.${n}.2`,
    destroy: async () => {
      await runTool('ip', ['netns', 'del', net.brainNs]);
      await runTool('ip', ['netns', 'del', net.peerNs]);
    },
  };
  await net.destroy(); // left by a killed run with the same pid
  const steps: string[][] = [
    ['netns', 'add', net.brainNs],
    ['netns', 'add', net.peerNs],
    ['link', 'add', net.brainIf, 'netns', net.brainNs, 'type', 'veth', 'peer', 'name', net.peerIf, 'netns', net.peerNs],
    ['-n', net.brainNs, 'addr', 'add', `${net.brainV4}/30`, 'dev', net.brainIf],
    ['-n', net.peerNs, 'addr', 'add', `${net.peerV4}/30`, 'dev', net.peerIf],
  ];
  for (const [ns, dev] of [
    [net.brainNs, net.brainIf],
    [net.peerNs, net.peerIf],
  ] as const) {
    steps.push(['-n', ns, 'link', 'set', 'lo', 'up'], ['-n', ns, 'link', 'set', dev, 'up'], ['-n', ns, 'route', 'add', '224.0.0.0/4', 'dev', dev]);
  }
  try {
    for (const args of steps) await runToolOk('ip', args);
  } catch (err) {
    await net.destroy();
    throw err;
  }
  return net;
}

/** Lines of a child's stdout and stderr, and a way to wait for one that matches. */
class Lines {
  readonly all: string[] = [];
  private waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = [];

  constructor(child: ChildProcess) {
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', (line) => this.push(line));
    }
  }

  private push(line: string): void {
    this.all.push(line);
    this.waiters = this.waiters.filter((w) => !(w.test(line) && (w.resolve(line), true)));
  }

  /** The first line (past or future) that `test` accepts; rejects after `timeoutMs` or when `exited` settles first. */
  waitFor(test: (line: string) => boolean, what: string, exited: Promise<unknown>, timeoutMs = 20_000): Promise<string> {
    const seen = this.all.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms:\n${this.all.join('\n')}`)), timeoutMs);
      this.waiters.push({
        test,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`exited before ${what}:\n${this.all.join('\n')}`));
      });
    });
  }
}

export interface Spawned {
  child: ChildProcess;
  lines: Lines;
  exited: Promise<number | null>;
  /** SIGTERM (then SIGKILL after `graceMs`) and wait for the exit. */
  stop(graceMs?: number): Promise<number | null>;
}

function spawned(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Spawned {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = new Lines(child);
  return {
    child,
    lines,
    exited,
    stop: async (graceMs = 5000) => {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

const inNs = (ns: string, command: string, args: readonly string[]): [string, string[]] => ['ip', ['netns', 'exec', ns, command, ...args]];

export interface NamespacedBrain extends Spawned {
  home: string;
  port: number;
  brainId(): string;
  token(): string;
  /** The instant (Date.now()) the process was spawned. */
  spawnedAt: number;
}

/** dist/svc.mjs serve inside `ns` with the runtime svc start uses, a fresh home and an ephemeral port. */
export async function startBrainIn(ns: string, opts: { args?: string[]; env?: Record<string, string> } = {}): Promise<NamespacedBrain> {
  const home = mkdtempSync(join(tmpdir(), 'svc-mdns-'));
  const env = { ...process.env, ...BRAIN_ENV, SVC_HOME: home, SVC_LOG_LEVEL: 'info', SVC_API_TOKEN: '', ...opts.env };
  const spawnedAt = Date.now();
  const brain = spawned(...inNs(ns, process.execPath, [...BRAIN_NODE_FLAGS, SVC, 'serve', '--port', '0', ...(opts.args ?? [])]), env);
  const stop = async (): Promise<number | null> => {
    const code = await brain.stop();
    rmSync(home, { recursive: true, force: true });
    return code;
  };
  try {
    const line = await brain.lines.waitFor((l) => l.includes('"msg":"svc brain listening on'), 'listening line', brain.exited);
    const port = Number(/"msg":"svc brain listening on http:\/\/[^"]*:(\d+)"/.exec(line)?.[1]);
    return { ...brain, stop, home, port, spawnedAt, brainId: () => readFileSync(join(home, 'brain-id'), 'utf8').trim(), token: () => readFileSync(join(home, 'api-token'), 'utf8').trim() };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface BrowserEvent {
  event: 'up' | 'down' | 'ready';
  at: number;
  service?: DiscoveredService;
  kind?: ServiceKind;
  name?: string;
  /** For an `api` service: the status of GET <baseUrl>/health, asked from the browser's namespace. */
  health?: number;
}

export interface BrowserChild extends Spawned {
  events(): BrowserEvent[];
  waitFor(test: (e: BrowserEvent) => boolean, what: string, timeoutMs?: number): Promise<BrowserEvent>;
}

const BROWSER_ENV = 'SVC_TEST_MDNS_BROWSER';

/**
 * Runs `script` (the calling compiled test file) inside `ns` as a mesh/mdns.ts browser of `kinds`:
 * the test file calls runBrowserChildIfAsked() first thing, which takes over in that process.
 */
export async function startBrowser(ns: string, script: string, kinds: readonly ServiceKind[]): Promise<BrowserChild> {
  const child = spawned(...inNs(ns, process.execPath, [script]), { ...process.env, [BROWSER_ENV]: kinds.join(',') });
  const parse = (line: string): BrowserEvent | null => (line.startsWith('{"event"') ? (JSON.parse(line) as BrowserEvent) : null);
  const browser: BrowserChild = {
    ...child,
    events: () => child.lines.all.map(parse).filter((e): e is BrowserEvent => e !== null),
    waitFor: async (test, what, timeoutMs) => parse(await child.lines.waitFor((l) => parse(l) !== null && test(parse(l)!), what, child.exited, timeoutMs))!,
  };
  await browser.waitFor((e) => e.event === 'ready', 'browser ready');
  return browser;
}

/** In a browser child (startBrowser): browse until SIGTERM, printing one JSON line per event. Returns false elsewhere. */
export async function runBrowserChildIfAsked(): Promise<boolean> {
  const kinds = process.env[BROWSER_ENV];
  if (kinds === undefined) return false;
  const print = (e: Omit<BrowserEvent, 'at'>): void => void process.stdout.write(`${JSON.stringify({ ...e, at: Date.now() })}\n`);
  const log: MdnsLog = { warn: (obj, msg) => process.stderr.write(`warn ${msg} ${JSON.stringify(obj)}\n`), debug: (obj, msg) => process.stderr.write(`debug ${msg} ${JSON.stringify(obj)}\n`) };
  const browse = await browseMdns({
    log,
    kinds: kinds.split(',') as ServiceKind[],
    onUp: (service) => {
      if (service.kind !== 'api') return print({ event: 'up', service });
      fetch(`${service.baseUrl}/health`, { signal: AbortSignal.timeout(5000) }).then(
        (r) => print({ event: 'up', service, health: r.status }),
        (err: unknown) => print({ event: 'up', service, health: -1, name: String(err) }),
      );
    },
    onDown: (s) => print({ event: 'down', kind: s.kind, name: s.name }),
  });
  print({ event: 'ready' });
  process.once('SIGTERM', () => void browse.stop().then(() => process.exit(0)));
  return true;
}

export interface Avahi {
  /** The environment avahi-browse and avahi-publish need (DBUS_SYSTEM_BUS_ADDRESS of the private bus). */
  env: NodeJS.ProcessEnv;
  hostName: string;
  /** Runs an avahi client tool inside the namespace to completion. */
  run(tool: string, args: readonly string[]): Promise<string>;
  /** Starts a long-running avahi client tool (avahi-publish) inside the namespace. */
  start(tool: string, args: readonly string[]): Spawned;
  stop(): Promise<void>;
}

/** A private D-Bus and avahi-daemon (on `iface` only, host name `hostName`) inside `ns`. */
export async function startAvahi(ns: string, iface: string, hostName: string): Promise<Avahi> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-avahi-'));
  const bus = join(dir, 'bus');
  writeFileSync(
    join(dir, 'bus.conf'),
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path=${bus}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy></busconfig>\n`,
  );
  writeFileSync(
    join(dir, 'avahi-daemon.conf'),
    `[server]\nhost-name=${hostName}\nuse-ipv4=yes\nuse-ipv6=no\nallow-interfaces=${iface}\nenable-dbus=yes\n[wide-area]\nenable-wide-area=no\n[publish]\npublish-hinfo=no\npublish-workstation=no\n`,
  );
  const env = { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: `unix:path=${bus}` };
  const dbus = spawned('dbus-daemon', [`--config-file=${join(dir, 'bus.conf')}`, '--nofork', '--print-address=1'], env);
  const daemons: Spawned[] = [dbus];
  const stop = async (): Promise<void> => {
    for (const d of daemons.reverse()) await d.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await dbus.lines.waitFor((l) => l.startsWith('unix:path='), 'dbus address', dbus.exited);
    // avahi-daemon writes /run/avahi-daemon/pid and refuses to start when one exists: a private /run.
    const script = `mount -t tmpfs tmpfs /run && exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f ${join(dir, 'avahi-daemon.conf')}`;
    const avahi = spawned(...inNs(ns, 'unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script]), env);
    daemons.push(avahi);
    await avahi.lines.waitFor((l) => l.includes('Server startup complete'), 'avahi-daemon startup', avahi.exited);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    env,
    hostName,
    run: async (tool, args) => (await runToolOk(...inNs(ns, tool, args), { env, timeoutMs: 15_000 })).stdout,
    start: (tool, args) => {
      const s = spawned(...inNs(ns, tool, args), env);
      daemons.push(s);
      return s;
    },
    stop,
  };
}
