// Runs one device action as a command (spec 3.4; node-protocol.md "Device self-description";
// docs/hardware.md "Commands", "Verification"): the checks that may refuse it (not granted, opt-in tier
// off, device offline, actuator rate limit), the hup_action_request to the node, and the closed
// verification loop. Every step is a transition of the command's state machine, stored with its time.
// The answer is the HardwareToolResult of protocol/node.ts, whoever asked (a generated tool, the
// agent's set_device, an approved call).
import type { Logger } from 'pino';
import type { Clock } from '../../kernel/capability';
import type { ActionRequest, ActionResponse, HardwareToolResult, NormalizedAction, VerifyContract } from '../../../protocol/node';
import type { CommandStatus } from '../../../protocol/hardware';
import { NodeUnreachable, type NodeLinks } from '../links/node-links';
import type { Command, CommandFields, CommandStore } from './command-store';

/** What the runner needs to know of a device's action at the moment it runs. */
export interface ResolvedAction {
  deviceId: string;
  nodeId: string;
  action: NormalizedAction;
  /** The device's other actions (the verify contract's `via`). */
  actions: readonly NormalizedAction[];
  online: boolean;
  /** The action is among those the node was granted (never send anything else). */
  granted: boolean;
  /** The opt-in capability the action needs while it is off in settings, or null. */
  optInOff: string | null;
  /** Put `device_id` into `params` too (phone-bridged peripherals, node-protocol.md "Phone as peer"). */
  deviceIdInParams: boolean;
}

export interface RunRequest {
  deviceId: string;
  action: string;
  /** The arguments as given, defaults filled in. */
  params: Record<string, unknown>;
  tool: string | null;
  turnId: string | null;
  /** A command waiting for confirmation that this call continues (approved). */
  continues?: Command;
  /** Refuse before sending, with this reason (a confirmation that cannot be asked for): status denied. */
  refuse?: string;
}

export interface RunnerDeps {
  commands: CommandStore;
  links: () => NodeLinks | null;
  resolve: (deviceId: string, action: string) => ResolvedAction | null;
  clock: Clock;
  logger: Logger;
  actuatorRatePerMinute: number;
  /** Waits `ms` (the verify delay); rejects when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const MINUTE = 60_000;

const defaultSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('stopping'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('stopping'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** The value at a dotted path (`state.on`, `items.0.value`), or undefined. */
export function readPath(value: unknown, path: string): unknown {
  let at: unknown = value;
  for (const key of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/**
 * Whether a read-back value satisfies `expect`: a list accepts any of its values; "$name" stands for
 * the value the command set for param `name`; numbers match within ±tolerance; no `expect` at all
 * means the field must be present (not undefined or null). A boolean and a device register compare
 * as true = 1 and false = 0: a switch set with `on: true` reads back as the byte 1 (a BLE or GPIO
 * register), and that is the same state.
 */
export function matches(actual: unknown, expect: VerifyContract['expect'], params: Record<string, unknown>, tolerance: number | undefined): boolean {
  if (expect === undefined) return actual !== undefined && actual !== null;
  if (Array.isArray(expect)) return expect.some((e) => matches(actual, e, params, tolerance));
  const wanted = expected(expect, params);
  const a = typeof actual === 'boolean' && typeof wanted === 'number' ? Number(actual) : actual;
  const w = typeof wanted === 'boolean' && typeof actual === 'number' ? Number(wanted) : wanted;
  if (typeof a === 'number' && typeof w === 'number') return Math.abs(a - w) <= (tolerance ?? 0);
  return a === w;
}

/** `expect` with a "$param" reference replaced by the value the command set. */
const expected = (expect: Exclude<VerifyContract['expect'], unknown[] | undefined>, params: Record<string, unknown>): unknown =>
  typeof expect === 'string' && expect.startsWith('$') ? params[expect.slice(1)] : expect;

/** `expect` as the verification detail shows it: "$param" references resolved. */
const describeExpect = (expect: VerifyContract['expect'], params: Record<string, unknown>): string =>
  expect === undefined ? 'a value' : JSON.stringify(Array.isArray(expect) ? expect.map((e) => expected(e, params)) : expected(expect, params));

type Ended = { status: CommandStatus; detail: string | null; set: CommandFields };

export class CommandRunner {
  private readonly issued = new Map<string, number[]>();
  private readonly stopping = new AbortController();
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;

  constructor(private readonly deps: RunnerDeps) {
    this.sleep = deps.sleep ?? defaultSleep;
  }

  /** Aborts verify delays; the link layer rejects requests in flight with `stopping`. */
  stop(): void {
    this.stopping.abort();
  }

  async run(request: RunRequest): Promise<{ result: HardwareToolResult; command: Command | null }> {
    const resolved = this.deps.resolve(request.deviceId, request.action);
    if (!resolved) return { result: failure('failure', `there is no device ${request.deviceId} with an action ${request.action}`, null), command: null };
    const command = await this.open(request, resolved);
    const refusal = this.refusal(request, resolved);
    if (refusal) return this.finish(command, refusal);
    return this.finish(command, await this.execute(command, resolved));
  }

  private async open(request: RunRequest, resolved: ResolvedAction): Promise<Command> {
    const { commands } = this.deps;
    if (request.continues) {
      await commands.transition(request.continues, 'queued', 'approved');
      return request.continues;
    }
    const { command, written } = commands.create(
      { deviceId: resolved.deviceId, nodeId: resolved.nodeId, action: resolved.action.name, tool: request.tool, params: request.params, turnId: request.turnId },
      'queued',
      null,
    );
    await written;
    return command;
  }

  /** Why a queued command must not be sent; null when it may. */
  private refusal(request: RunRequest, r: ResolvedAction): Ended | null {
    const denied = (why: string): Ended => ({ status: 'denied', detail: why, set: { error: why } });
    if (request.refuse) return denied(request.refuse);
    if (r.optInOff) return denied(`the ${r.optInOff} tier is off (settings hardware.opt_in.${r.optInOff})`);
    if (!r.online || !this.deps.links()?.online(r.nodeId)) return { status: 'failed', detail: 'device offline', set: { error: 'device offline' } };
    if (!r.granted) return denied(`${r.action.name} was not granted to node ${r.nodeId}`);
    if (r.action.category !== 'sensor' && !this.admit(r.deviceId, r.action.rate_limit_per_minute ?? this.deps.actuatorRatePerMinute)) return denied('rate limited');
    return null;
  }

  /** The per-device sliding-minute limit of actuator commands; counts the command when it admits it. */
  private admit(deviceId: string, perMinute: number): boolean {
    const now = this.deps.clock.now();
    const recent = (this.issued.get(deviceId) ?? []).filter((t) => t > now - MINUTE);
    const ok = recent.length < perMinute;
    if (ok) recent.push(now);
    this.issued.set(deviceId, recent);
    return ok;
  }

  private async execute(command: Command, r: ResolvedAction): Promise<Ended> {
    let response: ActionResponse;
    try {
      response = await this.issue(command, r, 'sent');
    } catch (err) {
      return this.unreachable(err, command);
    }
    if (!response.success) return { status: 'failed', detail: response.error ?? 'the device reported a failure', set: { error: response.error ?? 'the device reported a failure', result: response.result ?? null } };
    const contract = r.action.verify;
    if (!contract) return { status: 'succeeded', detail: null, set: { result: response.result ?? null, verified: null } };
    try {
      return await this.verify(command, r, contract, response);
    } catch (err) {
      return this.unreachable(err, command);
    }
  }

  /** Sends the action (attempts + 1) after recording the transition to `sent`. */
  private async issue(command: Command, r: ResolvedAction, detail: string): Promise<ActionResponse> {
    const attempts = command.attempts + 1;
    void this.deps.commands.transition(command, 'sent', attempts === 1 ? null : detail, { attempts });
    const links = this.deps.links();
    if (!links) throw new NodeUnreachable(r.nodeId, 'offline');
    return links.request(r.nodeId, this.actionRequest(r, attempts === 1 ? command.commandId : `${command.commandId}.${attempts}`, r.action, command.params));
  }

  private actionRequest(r: ResolvedAction, actionId: string, action: NormalizedAction, params: Record<string, unknown>): ActionRequest {
    return {
      action_id: actionId,
      name: action.name,
      params: r.deviceIdInParams ? { ...params, device_id: r.deviceId } : params,
      device_id: r.deviceId,
      ...(action.requires_confirmation ? { requires_confirmation: true } : {}),
    };
  }

  /**
   * The closed loop: wait delay_ms, read `via`, compare `field` with `expect`; on a mismatch re-issue
   * the action and check again, up to `retries` times. A transient contract is verified when the read
   * itself succeeds. The command succeeded (the node did it); `verified` says whether it held.
   */
  private async verify(command: Command, r: ResolvedAction, contract: VerifyContract, first: ActionResponse): Promise<Ended> {
    const via = r.actions.find((a) => a.name === contract.via);
    let last = first;
    const done = (verified: boolean, detail: string): Ended => ({ status: 'succeeded', detail, set: { result: last.result ?? null, verified } });
    if (!via) return done(false, `verify: the device has no action ${contract.via}`);
    for (let retry = 0; ; retry++) {
      try {
        await this.sleep(contract.delay_ms ?? 0, this.stopping.signal);
      } catch (err) {
        if (!this.stopping.signal.aborted) throw err;
        return { status: 'cancelled', detail: 'the brain is stopping', set: { result: last.result ?? null } };
      }
      let read: ActionResponse;
      try {
        read = await this.deps.links()!.request(r.nodeId, this.actionRequest(r, `${command.commandId}.v${retry + 1}`, via, {}));
      } catch (err) {
        if (!(err instanceof NodeUnreachable)) throw err;
        return done(false, `verify: ${err.message}`);
      }
      const value = readPath(read.result, contract.field);
      const ok = read.success && (contract.transient === true || matches(value, contract.expect, command.params, contract.tolerance));
      if (ok) return done(true, contract.transient ? `verified: ${contract.via} is readable` : `verified: ${contract.field} = ${JSON.stringify(value)}`);
      const why = read.success ? `${contract.field} = ${JSON.stringify(value) ?? 'absent'}, expected ${describeExpect(contract.expect, command.params)}` : `${contract.via} failed: ${read.error ?? 'no reason'}`;
      if (retry >= (contract.retries ?? 0)) return done(false, `not verified: ${why}`);
      try {
        last = await this.issue(command, r, `re-issued: ${why}`);
      } catch (err) {
        if (!(err instanceof NodeUnreachable)) throw err;
        return done(false, `not verified: re-issue failed: ${err.message}`);
      }
      if (!last.success) return done(false, `not verified: re-issue failed: ${last.error ?? 'the device reported a failure'}`);
    }
  }

  /** A request that got no response: NodeUnreachable ends the command by its reason; anything else is a bug, logged, and fails it. */
  private unreachable(err: unknown, command: Command): Ended {
    if (err instanceof NodeUnreachable) return unreachableEnd(err);
    this.deps.logger.error({ err, command_id: command.commandId }, 'sending a device action failed');
    return { status: 'failed', detail: 'internal error', set: { error: `internal error: ${(err as Error).message}` } };
  }

  private async finish(command: Command, ended: Ended): Promise<{ result: HardwareToolResult; command: Command }> {
    await this.deps.commands.transition(command, ended.status, ended.detail, ended.set);
    const data = { ...(command.result ?? {}), verified: command.verified, command_id: command.commandId };
    const statusOf: Record<CommandStatus, HardwareToolResult['status']> = {
      succeeded: 'success',
      failed: 'failure',
      timeout: 'timeout',
      denied: 'denied',
      cancelled: 'failure',
      pending_confirmation: 'pending_confirmation',
      queued: 'failure',
      sent: 'failure',
    };
    const success = command.status === 'succeeded';
    return { result: { success, status: statusOf[command.status], data, error: success ? null : (command.error ?? ended.detail) }, command };
  }
}

function unreachableEnd(err: NodeUnreachable): Ended {
  const error = err.reason === 'offline' ? 'device offline' : err.message;
  const status: CommandStatus = err.reason === 'timeout' ? 'timeout' : err.reason === 'stopping' ? 'cancelled' : 'failed';
  return { status, detail: error, set: { error } };
}

const failure = (status: HardwareToolResult['status'], error: string, commandId: string | null): HardwareToolResult => ({
  success: false,
  status,
  data: { verified: null, command_id: commandId },
  error,
});
