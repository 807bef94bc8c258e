// A delivered daemon run as a driver (docs/node-agent.md "Daemons"): its entry is JavaScript for the
// skill sandbox (skills/: QuickJS in a worker thread, one fresh context per call), defining
//   describe()                 → a device self-description (node-protocol.md "Device self-description":
//                                device_id, device_type, name, actions[] …), added to the node's devices
//   on_action(name, params)    → the result object of one hup_action_request for that device
// with the sandbox's host functions `log`, `http_get` and `http_post`, the latter two limited to the
// hosts the daemon's manifest allows (`permissions.network`, the skills' rules and skills/egress.ts;
// none when it names none). `call_tool` is refused: a driver drives a device, it does not reach into
// the brain. Each call is a fresh context, so a driver keeps no state between calls (its device does).
// Loaded with import() by daemon-runner.ts, so a node-agent without a daemon never loads the sandbox.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { DaemonDriverManifest } from '../protocol/daemons';
import { DeviceManifest, normalizeAction } from '../protocol/node';
import { BUNDLE_PATH_PATTERN } from '../protocol/registry';
import { createEgress } from '../skills/egress';
import { PolicyRefusal, type HttpRequest, type HttpResponse, type SkillHost } from '../skills/host-functions';
import { SandboxPool } from '../skills/sandbox-pool';
import type { SkillOutcome, SkillRun } from '../skills/sandbox';
import { AdapterError, DEVICE_UNAVAILABLE, type AdapterLog, type AdapterSink, type AdapterStatus, type DeviceAdapter } from './adapters/adapter';
import type { HeldDaemon } from './daemon-store';

/** The largest entry file read. */
export const MAX_ENTRY_BYTES = 1024 * 1024;
/** Wall time of describe() and of each action (the brain's own timeout still applies to actions). */
export const DRIVER_WALL_MS = 10_000;
/** Appended to the entry: the sandbox calls `main(params)` when the script defines one. */
const DISPATCH = '\n;function main(p) { return p.call === "describe" ? describe() : on_action(p.action, p.params); }\n';

/** A driver that cannot run; the message is what the node reports (state failed). */
export class DriverError extends Error {}

export interface DriverSandbox {
  run(run: SkillRun): Promise<SkillOutcome>;
}

export interface DriverDeps {
  sandbox: DriverSandbox;
  log: AdapterLog;
  /** The http of a network policy (default skills/egress.ts createEgress). */
  egress?: typeof createEgress;
  wallMs?: number;
}

/** The sandbox the node-agent's drivers share: one worker, ended after a minute idle. */
export const driverSandbox = (): SandboxPool => new SandboxPool({ size: 1, idleMs: 60_000 });

async function readText(file: string, max: number, what: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new DriverError(`${what} is missing from the bundle`);
    throw err;
  }
  if (bytes.length > max) throw new DriverError(`${what} is larger than ${max} bytes`);
  return bytes.toString('utf8');
}

/** The manifest's network permission, or none. */
async function networkPolicy(dir: string): Promise<DaemonDriverManifest> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readText(join(dir, 'manifest.json'), MAX_ENTRY_BYTES, 'manifest.json'));
  } catch (err) {
    if (err instanceof SyntaxError) throw new DriverError(`manifest.json is not JSON: ${err.message}`);
    throw err;
  }
  if (!Value.Check(DaemonDriverManifest, parsed)) {
    const first = [...Value.Errors(DaemonDriverManifest, parsed)][0];
    throw new DriverError(`manifest.json${first?.path ?? ''}: ${first?.message ?? 'invalid'}`);
  }
  return parsed;
}

function hostFor(manifest: DaemonDriverManifest, egress: typeof createEgress): SkillHost {
  const network = manifest.permissions?.network;
  const http = network
    ? egress(network)
    : (request: HttpRequest): Promise<HttpResponse> => Promise.reject(new PolicyRefusal(`${request.method} ${request.url}: this daemon's manifest allows no network (permissions.network)`));
  return { tools: [], callTool: (name) => Promise.reject(new PolicyRefusal(`call_tool: a driver calls no tools (${name})`)), http };
}

/** Runs describe() of a held daemon and returns its device, ready to start. */
export async function loadDriver(held: HeldDaemon, deps: DriverDeps): Promise<DriverAdapter> {
  const entry = held.offer.entry;
  if (!new RegExp(BUNDLE_PATH_PATTERN).test(entry)) throw new DriverError(`entry ${JSON.stringify(entry)} is not a path inside the bundle`);
  const source = (await readText(join(held.path, ...entry.split('/')), MAX_ENTRY_BYTES, `the entry ${entry}`)) + DISPATCH;
  const host = hostFor(await networkPolicy(held.path), deps.egress ?? createEgress);
  const call = (params: Record<string, unknown>): Promise<SkillOutcome> => deps.sandbox.run({ source, params, host, limits: { wallMs: deps.wallMs ?? DRIVER_WALL_MS } });
  const described = await call({ call: 'describe' });
  logLines(deps.log, held, described.logs);
  if (!described.ok) throw new DriverError(`describe() failed (${described.kill ?? 'held'}): ${described.message}`);
  const manifest = checkDescription(described.result);
  return new DriverAdapter(manifest, held, call, deps.log);
}

/** A device self-description from describe(), its transport `local` unless it names one. */
export function checkDescription(value: unknown): DeviceManifest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DriverError('describe() must return a device self-description object');
  const manifest = { transport: { kind: 'local' }, ...value };
  if (!Value.Check(DeviceManifest, manifest)) {
    const first = [...Value.Errors(DeviceManifest, manifest)][0];
    throw new DriverError(`describe() returned no valid device self-description: ${first?.path ?? '/'}: ${first?.message ?? 'invalid'}`);
  }
  const names = manifest.actions.map((a) => normalizeAction(a)?.name);
  if (names.some((n) => n === undefined)) throw new DriverError('describe(): every action needs a name');
  if (new Set(names).size !== names.length) throw new DriverError('describe(): an action name is declared twice');
  return manifest;
}

function logLines(log: AdapterLog, held: HeldDaemon, lines: readonly string[]): void {
  for (const line of lines) log.info({ daemon: held.offer.node_id, version: held.offer.version }, `driver: ${line}`);
}

/** The device a driver describes: each action a sandbox call of on_action. */
export class DriverAdapter implements DeviceAdapter {
  private state: AdapterStatus = { state: 'connecting', detail: 'not started' };

  constructor(
    readonly manifest: DeviceManifest,
    private readonly held: HeldDaemon,
    private readonly call: (params: Record<string, unknown>) => Promise<SkillOutcome>,
    private readonly log: AdapterLog,
  ) {}

  start(sink: AdapterSink): Promise<void> {
    this.state = { state: 'connected', detail: `driver ${this.held.offer.display_name} ${this.held.offer.version}` };
    sink.status(this.state.state, this.state.detail);
    return Promise.resolve();
  }

  /** `_signal` is not passed into the sandbox: the driver's wall time bounds a call, the link's timeout answers the brain. */
  async run(action: string, params: Record<string, unknown>, _signal?: AbortSignal): Promise<Record<string, unknown>> {
    if (this.state.state !== 'connected') throw new AdapterError(DEVICE_UNAVAILABLE);
    if (!this.manifest.actions.some((a) => normalizeAction(a)?.name === action)) throw new AdapterError(`${this.manifest.device_id} has no action ${action}`);
    const outcome = await this.call({ call: 'action', action, params });
    logLines(this.log, this.held, outcome.logs);
    if (!outcome.ok) throw new AdapterError(`the driver failed (${outcome.kill ?? 'held'}): ${outcome.message}`);
    const result = outcome.result;
    return typeof result === 'object' && result !== null && !Array.isArray(result) ? (result as Record<string, unknown>) : { value: result ?? null };
  }

  status(): AdapterStatus {
    return { ...this.state };
  }

  stop(): Promise<void> {
    this.state = { state: 'unavailable', detail: 'stopped' };
    return Promise.resolve();
  }
}
