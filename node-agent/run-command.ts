// `node-agent run` (the default command; docs/node-agent.md "Run"): read the config file, find the
// brain, pair by code first when this node has no key, start the devices' adapters, and keep the link
// to /v1/node until a signal (exit 0) or the brain refuses the key (exit 77, EX_NOPERM: systemd must
// not restart into the same refusal). A bad config file is exit 78 (EX_CONFIG), every problem listed.
// Human lines go to stderr; pino's JSON log lines go to the logger the composition root gives.
import { arch, platform, release, type as osType } from 'node:os';
import { dirname } from 'node:path';
import type { DeviceManifest, NodeRegister, NodeType } from '../protocol/node';
import { normalizeAction } from '../protocol/node';
import type { AdapterLog, AdapterSink, DeviceAdapter } from './adapters/adapter';
import type { SerialOpener } from './adapters/serial';
import { SerialAdapter } from './adapters/serial';
import { locateBrain, NoBrainError, type LocateInput, type LocatedBrain } from './brain-locator';
import { checkNodeId, DEFAULT_PAIR_TIMEOUT_S, type PairOptions, type RunOptions } from './command-line';
import { parseBrainUrl } from '../mesh/brain-url';
import { AgentConfigError, loadAgentConfig, parseAgentConfig, type AgentConfig, type BleDevice } from './config';
import { readNodeKey } from '../mesh/node-key-store';
import { NodeLink, nodeSocketUrl, type LinkEnd } from './link';
import type { Io } from './pair-command';
import type { AgentNotifier } from './sd-notify';
import { DaemonStore, daemonRoot } from './daemon-store';
import { DaemonSync } from './daemon-sync';
import { brainHttp } from './daemon-http';
import { DaemonRunner } from './daemon-runner';

export const EXIT_STOPPED = 0;
export const EXIT_FAILED = 1;
export const EX_NOPERM = 77;
export const EX_CONFIG = 78;
/** How long each adapter gets to close its device at exit. */
const STOP_DEVICE_MS = 3000;

export interface RunLog extends AdapterLog {
  child(bindings: Record<string, unknown>): RunLog;
}

export interface RunContext {
  io: Io;
  log: RunLog;
  /** $SVC_BRAIN_URL. */
  envBrain: string | undefined;
  /** $SVC_NODE_KEY: the key itself (the brain's local node-agent); no key directory, no pairing. */
  envKey: string | undefined;
  defaultKeyDir: string;
  /** The config file when --config is not given; `explicit` when it came from $SVC_NODE_CONFIG (then it must exist). */
  defaultConfig: { file: string; explicit: boolean };
  hostname: string;
  discover: LocateInput['discover'];
  /** `node-agent pair` with these options (pair-command.ts), writing to `io`. */
  pair(options: PairOptions, io: Io): Promise<number>;
  /** The serialport binding, loaded on first call (only when a serial device is configured). */
  serialOpener(): Promise<SerialOpener>;
  /** The BLE adapter for a device (adapters/ble.ts), loaded on first call. */
  bleAdapter(device: BleDevice, log: AdapterLog): Promise<DeviceAdapter>;
  notifier: AgentNotifier;
  /** Ping interval (half of WatchdogSec), or null. */
  watchdogMs: number | null;
  /** Aborted on SIGTERM/SIGINT. */
  stop: AbortSignal;
  agentVersion: string;
  uptimeS(): number;
  /** Where delivered daemons are kept (<state dir>/daemons/<node_id>/); default the key directory's parent. */
  stateDir?: string;
}

/** Not on Linux ARM (a Pi): "server". */
const defaultNodeType = (): NodeType => (platform() === 'linux' && (arch() === 'arm' || arch() === 'arm64') ? 'rpi' : 'server');

async function readConfig(options: RunOptions, ctx: RunContext): Promise<AgentConfig | string> {
  const file = options.config ?? ctx.defaultConfig.file;
  const mustExist = options.config !== undefined || ctx.defaultConfig.explicit;
  try {
    const config = await loadAgentConfig(file);
    if (config !== null) return config;
  } catch (err) {
    if (err instanceof AgentConfigError) return err.message;
    throw err;
  }
  if (mustExist) return `${file}: no such file`;
  ctx.io.err.write(`node-agent: no config file at ${file}; running with no devices\n`);
  return parseAgentConfig({}, file);
}

/** The union of the devices' capabilities and their actions' capability fields. */
export function nodeCapabilities(manifests: readonly DeviceManifest[]): string[] {
  const all = new Set<string>();
  for (const m of manifests) {
    for (const c of m.capabilities ?? []) all.add(c);
    for (const a of m.actions) {
      const capability = normalizeAction(a)?.capability;
      if (capability) all.add(capability);
    }
  }
  return [...all].sort();
}

async function adaptersFor(config: AgentConfig, ctx: RunContext): Promise<DeviceAdapter[]> {
  let serial: SerialOpener | null = null;
  const out: DeviceAdapter[] = [];
  for (const device of config.devices) {
    const log = ctx.log.child({ adapter: device.adapter });
    if (device.adapter === 'serial') {
      serial ??= await ctx.serialOpener();
      out.push(new SerialAdapter(device, { open: serial, log }));
    } else out.push(await ctx.bleAdapter(device, log));
  }
  return out;
}

function statusLine(link: NodeLink, devices: readonly DeviceAdapter[]): string {
  const counts = new Map<string, number>();
  for (const d of devices) counts.set(d.status().state, (counts.get(d.status().state) ?? 0) + 1);
  const parts = [...counts].map(([state, n]) => `${n} ${state}`).join(', ');
  return `${link.status().detail}; ${devices.length} device${devices.length === 1 ? '' : 's'}${parts ? ` (${parts})` : ''}`;
}

/** Each adapter's stop, bounded so one stuck device cannot hold the rest (STYLE.md 2). */
async function stopDevices(devices: readonly DeviceAdapter[], log: AdapterLog): Promise<void> {
  await Promise.all(
    devices.map(async (d) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_DEVICE_MS)));
      try {
        if ((await Promise.race([d.stop(), late])) === 'late') log.warn({ device: d.manifest.device_id }, `the device did not stop within ${STOP_DEVICE_MS} ms`);
      } catch (err) {
        log.error({ device: d.manifest.device_id, err }, 'the device failed to stop');
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}

/**
 * The watchdog pings from the start (systemd may arm it before READY=1): while the agent reads its
 * config, looks for the brain or waits for a pairing claim, a live event loop is health enough; once
 * the link runs, it is the link's health.
 */
export async function runCommand(options: RunOptions, ctx: RunContext): Promise<number> {
  const health = { check: (): boolean => true };
  const watchdog = ctx.watchdogMs === null ? null : setInterval(() => health.check() && ctx.notifier.watchdog(), ctx.watchdogMs);
  try {
    return await run(options, ctx, health);
  } finally {
    if (watchdog !== null) clearInterval(watchdog);
    ctx.notifier.stop();
  }
}

/** Pairing output passes through; the claim line also becomes the systemd STATUS. */
function pairingIo(ctx: RunContext): Io {
  return {
    out: {
      write: (text: string) => {
        const claim = /svc pair code (\d{6})/.exec(text);
        if (claim) ctx.notifier.status(`not paired yet: claim the code on the brain with \`svc pair code ${claim[1]}\``);
        return ctx.io.out.write(text);
      },
    },
    err: ctx.io.err,
  };
}

async function run(options: RunOptions, ctx: RunContext, health: { check: () => boolean }): Promise<number> {
  const { io } = ctx;
  const config = await readConfig(options, ctx);
  if (typeof config === 'string') {
    io.err.write(`node-agent: ${config}\n`);
    return EX_CONFIG;
  }
  const nodeId = options.nodeId ?? config.node_id ?? ctx.hostname;
  const badId = checkNodeId(nodeId);
  if (badId !== undefined) {
    io.err.write(`node-agent: the host name cannot be the node id: ${badId}; set node_id in the config file or give --node-id\n`);
    return EX_CONFIG;
  }
  const name = options.name ?? config.name;
  const keyDir = options.keyDir ?? config.key_dir ?? ctx.defaultKeyDir;
  let flag = options.brain;
  if (flag === undefined && config.brain !== undefined) {
    const parsed = parseBrainUrl(config.brain);
    if ('problem' in parsed) {
      io.err.write(`node-agent: /brain in the config file: ${parsed.problem}\n`);
      return EX_CONFIG;
    }
    flag = parsed.url;
  }
  let brain: LocatedBrain;
  try {
    brain = await locateBrain({ flag, env: ctx.envBrain, discover: ctx.discover });
  } catch (err) {
    if (!(err instanceof NoBrainError)) throw err;
    io.err.write(`node-agent: ${err.message}\n`);
    return EXIT_FAILED;
  }

  let key = ctx.envKey !== undefined && ctx.envKey !== '' ? ctx.envKey : await readNodeKey(keyDir, nodeId);
  if (key === null) {
    io.err.write(`node-agent: node "${nodeId}" has no node key in ${keyDir} yet; pairing first\n`);
    const paired = await ctx.pair({ brain: brain.url, nodeId, keyDir, timeoutSeconds: DEFAULT_PAIR_TIMEOUT_S, ...(name !== undefined ? { name } : {}) }, pairingIo(ctx));
    if (paired !== 0) return paired;
    key = await readNodeKey(keyDir, nodeId);
    if (key === null) throw new Error(`pairing ended without a key in ${keyDir}`);
  }
  if (ctx.stop.aborted) return EXIT_STOPPED;

  // A delivered daemon's driver joins these devices at run time (daemon-runner.ts): read them afresh.
  const devices = await adaptersFor(config, ctx);
  const manifests = (): DeviceManifest[] => devices.map((d) => d.manifest);
  const url = nodeSocketUrl(brain.url);
  const runner = new DaemonRunner({ devices, sinkFor: (id) => sinkFor(id), reregister: () => link.reregister(), log: ctx.log.child({ part: 'driver' }) });
  const daemons = new DaemonSync({
    nodeId,
    store: new DaemonStore(daemonRoot(ctx.stateDir ?? dirname(keyDir), nodeId)),
    http: brainHttp(brain.url, key),
    log: ctx.log.child({ part: 'daemons' }),
    linked: () => link.status().state === 'linked',
    activate: (held) => runner.activate(held),
  });
  const register = (): NodeRegister => ({
    node_id: nodeId,
    node_type: config.node_type ?? defaultNodeType(),
    capabilities: nodeCapabilities(manifests()),
    ...(name !== undefined ? { name } : {}),
    platform: platform(),
    os: `${osType()} ${release()}`.slice(0, 64),
    ...(config.location !== undefined ? { location: config.location } : {}),
    ...(config.tags !== undefined ? { tags: config.tags } : {}),
    device_manifest: manifests(),
    agent_version: ctx.agentVersion,
    uptime_s: ctx.uptimeS(),
  });
  const link: NodeLink = new NodeLink({
    url,
    key,
    register,
    devices,
    log: ctx.log.child({ part: 'link' }),
    uptimeS: () => ctx.uptimeS(),
    onStatus: () => ctx.notifier.status(statusLine(link, devices)),
    onAck: () => daemons.poke(),
    onFirstAck: () => {
      ctx.notifier.ready(statusLine(link, devices));
      io.err.write(`node-agent: node "${nodeId}" linked to ${url} with ${devices.length} device${devices.length === 1 ? '' : 's'}\n`);
    },
  });
  const sinkFor = (id: string): AdapterSink => ({
    reading: (event, data) => link.reading(id, event, data),
    status: (state, detail) => {
      // One reading per device (the brain keeps readings by field): what the dashboard shows as its state.
      link.reading(id, 'device_status', { device_state: state });
      ctx.log.debug({ device: id, state, detail }, 'device status');
      ctx.notifier.status(statusLine(link, devices));
    },
  });
  for (const d of devices) await d.start(sinkFor(d.manifest.device_id));
  io.err.write(`node-agent: linking node "${nodeId}" to the brain at ${brain.url} (${brain.via}${brain.name !== undefined ? `: ${brain.name}` : ''})\n`);
  link.start();
  daemons.start();
  health.check = () => link.healthy();

  const stopped = new Promise<'signal'>((resolve) => {
    if (ctx.stop.aborted) resolve('signal');
    ctx.stop.addEventListener('abort', () => resolve('signal'), { once: true });
  });
  const end: LinkEnd | 'signal' = await Promise.race([link.done, stopped]);
  health.check = () => true;
  if (end === 'signal') ctx.notifier.stopping();
  await daemons.stop();
  await link.stop();
  await runner.stop();
  await stopDevices(devices, ctx.log);
  if (end !== 'signal' && end.kind === 'refused') {
    io.err.write(`node-agent: ${end.reason}; pair this board again with \`node-agent pair\` (then restart it)\n`);
    return EX_NOPERM;
  }
  return EXIT_STOPPED;
}
