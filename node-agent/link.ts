// The node-agent's link to the brain over WS /v1/node (node-protocol.md; docs/node-agent.md "How the
// link behaves"). A state machine, one socket at a time:
//   connecting  ──open──▶ registering (node_register sent) ──node_ack──▶ linked
//        ▲                     │ no ack in 5 s / close                    │ close, node_bye, no answer
//        └──── waiting (backoff: 100 ms doubling to 30 s, jitter) ◀───────┘
//   close 4001 (or HTTP 401/403 on the upgrade): refused — the key is unknown or revoked; the link
//   ends and says so (run-command.ts exits 77, which systemd does not restart).
// While linked: node_heartbeat every heartbeat_ms (from the ack) with uptime_s, and a WebSocket ping
// with it; no frame or pong from the brain for 3 intervals ends the socket (a half-open TCP
// connection after the brain's machine lost power). Readings become device_event frames; while the
// link is down the latest reading per device and event type is kept and sent after the next ack.
// hup_action_request runs on the device it names (device_id), else the only device, else the one
// device that has the action; the answer is hup_action_response within the request's timeout_ms.
import { Value } from '@sinclair/typebox/value';
import WebSocket from 'ws';
import {
  ACK_DEADLINE_MS,
  ActionRequest,
  HUP_SUBPROTOCOL,
  MAX_NODE_FRAME_BYTES,
  NodeAck,
  NodeCloseCode,
  NodeEnvelope,
  NodeErrorPayload,
  nodeFrame,
  supportedVersion,
  TYPE_ALIASES,
  type NodeRegister,
} from '../protocol/node';
import { AdapterError, type AdapterLog, type DeviceAdapter } from './adapters/adapter';

export const BACKOFF_MIN_MS = 100;
export const BACKOFF_MAX_MS = 30_000;
/** A link that stayed up this long starts its next backoff from the minimum again. */
export const STABLE_MS = 10_000;
/** The default of hup_action_request.timeout_ms (node-protocol.md). */
export const DEFAULT_ACTION_TIMEOUT_MS = 5000;
/** Readings kept while the link is down (the latest per device and event type). */
const MAX_HELD_READINGS = 256;
/** Above this much unsent data on the socket, readings are held instead of queued. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export type LinkState = 'connecting' | 'registering' | 'linked' | 'waiting' | 'refused' | 'stopped';

export interface LinkStatus {
  state: LinkState;
  /** One line for a person (systemd STATUS=, logs). */
  detail: string;
}

export type LinkEnd = { kind: 'refused'; reason: string } | { kind: 'stopped' };

export interface LinkOptions {
  /** ws:// or wss:// …/v1/node (nodeSocketUrl). */
  url: string;
  key: string;
  /** The node_register payload, built for each connection (uptime_s changes). */
  register(): NodeRegister;
  devices: readonly DeviceAdapter[];
  log: AdapterLog;
  /** Called on every state change. */
  onStatus?(status: LinkStatus): void;
  /** The first node_ack of this process (systemd READY=1). */
  onFirstAck?(): void;
  /** Every node_ack (daemon-sync.ts asks the brain for this node's daemon then). */
  onAck?(): void;
  uptimeS(): number;
  random?: () => number;
  ackTimeoutMs?: number;
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

/** The node socket of a brain's http(s) address. */
export function nodeSocketUrl(brainUrl: string): string {
  const u = new URL(brainUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/v1/node`;
  return u.toString();
}

/** The backoff before attempt `attempt` (0-based): min·2^attempt capped at max, the upper half jittered. */
export function backoffMs(attempt: number, random: () => number, min = BACKOFF_MIN_MS, max = BACKOFF_MAX_MS): number {
  const base = Math.min(max, min * 2 ** Math.min(attempt, 30));
  return Math.round(base / 2 + random() * (base / 2));
}

export class NodeLink {
  readonly done: Promise<LinkEnd>;
  private finish!: (end: LinkEnd) => void;
  private ws: WebSocket | null = null;
  private current: LinkStatus = { state: 'connecting', detail: 'not started' };
  private since = 0;
  private attempt = 0;
  private linkedAt = 0;
  private acked = false;
  private offerSubprotocol = true;
  private timers = new Set<NodeJS.Timeout>();
  private heartbeat: NodeJS.Timeout | null = null;
  private lastInbound = 0;
  private readonly held = new Map<string, { deviceId: string; event: string; data: Record<string, unknown>; ts: number }>();
  private readonly unknownTypes = new Set<string>();
  /** Why the current socket failed, for the close that follows. */
  private lastError = '';

  constructor(private readonly o: LinkOptions) {
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  start(): void {
    this.connect();
  }

  status(): LinkStatus {
    return { ...this.current };
  }

  /** False when a handshake has hung past every deadline it has (the watchdog then stops pinging). */
  healthy(now = Date.now()): boolean {
    const stuck = (this.current.state === 'connecting' || this.current.state === 'registering') && now - this.since > 30_000 + (this.o.ackTimeoutMs ?? ACK_DEADLINE_MS);
    return !stuck && this.current.state !== 'refused';
  }

  /** A reading from a device: a device_event now, or held until the link is back. */
  reading(deviceId: string, event: string, data: Record<string, unknown>): void {
    const ts = Date.now();
    const ws = this.ws;
    if (this.current.state === 'linked' && ws !== null && ws.bufferedAmount < MAX_BUFFERED_BYTES) {
      this.send(ws, 'device_event', { device_id: deviceId, event_type: event, data, ts: ts / 1000 });
      return;
    }
    const key = `${deviceId}\0${event}`;
    if (!this.held.has(key) && this.held.size >= MAX_HELD_READINGS) return;
    this.held.set(key, { deviceId, event, data, ts });
  }

  /** Sends node_register again on a linked socket (the node's devices changed); the brain re-acknowledges it. Otherwise the next connection registers them. */
  reregister(): void {
    const ws = this.ws;
    if (this.current.state === 'linked' && ws !== null) this.send(ws, 'node_register', this.o.register());
  }

  /** Sends node_bye and closes; the link does not reconnect. */
  async stop(reason = 'the node-agent is stopping'): Promise<void> {
    if (this.current.state === 'stopped' || this.current.state === 'refused') return;
    this.setStatus('stopped', reason);
    this.clearTimers();
    const ws = this.ws;
    this.ws = null;
    if (ws !== null) {
      if (ws.readyState === WebSocket.OPEN) this.send(ws, 'node_bye', { reason });
      const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
      ws.close(NodeCloseCode.normal, 'bye');
      const timer = setTimeout(() => ws.terminate(), 1000);
      await closed;
      clearTimeout(timer);
    }
    this.finish({ kind: 'stopped' });
  }

  // ── connection ─────────────────────────────────────────────────────────────────────────────────
  private connect(): void {
    if (this.ended()) return;
    this.setStatus('connecting', `connecting to ${this.o.url}`);
    const ws = new WebSocket(this.o.url, this.offerSubprotocol ? [HUP_SUBPROTOCOL] : [], {
      headers: { authorization: `Bearer ${this.o.key}` },
      handshakeTimeout: 10_000,
      maxPayload: MAX_NODE_FRAME_BYTES,
    });
    this.ws = ws;
    let refusedStatus: number | null = null;
    ws.on('open', () => this.onOpen(ws));
    ws.on('message', (data, isBinary) => this.onMessage(ws, data, isBinary));
    ws.on('pong', () => (this.lastInbound = Date.now()));
    ws.on('error', (err) => {
      const status = /Unexpected server response: (\d{3})/.exec(err.message);
      if (status && (status[1] === '401' || status[1] === '403')) refusedStatus = Number(status[1]);
      if (err.message === 'Server sent no subprotocol') this.offerSubprotocol = false;
      this.o.log.debug({ err: err.message }, 'node socket error');
      this.lastError = err.message;
    });
    ws.on('close', (code, reason) => this.onClose(ws, refusedStatus !== null ? NodeCloseCode.unauthorized : code, refusedStatus !== null ? `HTTP ${refusedStatus}` : reason.toString('utf8')));
  }

  private onOpen(ws: WebSocket): void {
    if (ws !== this.ws) return;
    this.lastInbound = Date.now();
    this.setStatus('registering', `registering with ${this.o.url}`);
    this.send(ws, 'node_register', this.o.register());
    this.later(this.o.ackTimeoutMs ?? ACK_DEADLINE_MS, () => {
      if (ws !== this.ws || this.current.state !== 'registering') return;
      this.lastError = `no node_ack within ${this.o.ackTimeoutMs ?? ACK_DEADLINE_MS} ms`;
      ws.terminate();
    });
  }

  private onClose(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.ws) return;
    this.ws = null;
    this.stopHeartbeat();
    if (this.ended()) return;
    if (code === NodeCloseCode.unauthorized) {
      const why = `the brain refused this node's key (${reason || 'close 4001'}): it is unknown or was revoked`;
      this.o.log.error({ code, reason }, why);
      this.clearTimers();
      this.setStatus('refused', why);
      this.finish({ kind: 'refused', reason: why });
      return;
    }
    const wasLinked = this.current.state === 'linked';
    if (wasLinked && Date.now() - this.linkedAt >= STABLE_MS) this.attempt = 0;
    const delay = backoffMs(this.attempt, this.o.random ?? Math.random, this.o.backoffMinMs, this.o.backoffMaxMs);
    this.attempt++;
    const why = code === 1006 || code === 1005 ? this.lastError || 'connection lost' : `close ${code}${reason ? ` ${reason}` : ''}`;
    this.lastError = '';
    const fields = { code, reason, delay_ms: delay, attempt: this.attempt };
    if (wasLinked) this.o.log.warn(fields, `node link down (${why}); reconnecting`);
    else this.o.log.info(fields, `node link attempt failed (${why}); reconnecting`);
    this.setStatus('waiting', `${why}; reconnecting to ${this.o.url} in ${(delay / 1000).toFixed(1)} s`);
    this.later(delay, () => this.connect());
  }

  // ── frames in ──────────────────────────────────────────────────────────────────────────────────
  private onMessage(ws: WebSocket, data: WebSocket.RawData, isBinary: boolean): void {
    if (ws !== this.ws) return;
    this.lastInbound = Date.now();
    if (isBinary) return;
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      this.o.log.warn({ frame: text.slice(0, 200) }, 'the brain sent a frame that is not JSON');
      return;
    }
    if (!Value.Check(NodeEnvelope, frame) || !supportedVersion(frame.hup_version)) {
      this.o.log.warn({ frame: text.slice(0, 200) }, 'the brain sent a frame outside the HUP 1.x envelope');
      return;
    }
    const type = TYPE_ALIASES[frame.type] ?? frame.type;
    const p = frame.payload;
    if (type === 'node_ack' && Value.Check(NodeAck, p)) this.onAck(ws, p);
    else if (type === 'hup_action_request' && Value.Check(ActionRequest, p)) void this.onAction(ws, p);
    else if (type === 'node_bye') {
      this.o.log.info({ reason: p.reason }, 'the brain said goodbye; reconnecting');
      this.lastError = 'the brain said node_bye';
      ws.close(NodeCloseCode.normal);
    } else if (type === 'error' && Value.Check(NodeErrorPayload, p)) this.o.log.warn({ code: p.code, name: p.name, ref: p.ref_action_id }, `the brain reported ${p.name}: ${p.message}`);
    else if (['node_ack', 'hup_action_request', 'error'].includes(type)) this.o.log.warn({ type, payload: text.slice(0, 300) }, 'the brain sent a frame whose payload does not match the protocol');
    else if (!this.unknownTypes.has(type) && this.unknownTypes.size < 64) {
      // Minor versions are additive: unknown types are ignored, each noted once (up to 64 names).
      this.unknownTypes.add(type);
      this.o.log.info({ type }, 'ignoring a message type this node-agent does not know');
    }
  }

  private onAck(ws: WebSocket, ack: NodeAck): void {
    if (this.current.state !== 'registering') return;
    this.linkedAt = Date.now();
    if (ack.denied_capabilities.length > 0) this.o.log.warn({ denied: ack.denied_capabilities }, 'the brain denied some capabilities');
    this.setStatus('linked', `connected to ${this.o.url}`);
    this.startHeartbeat(ws, ack.heartbeat_ms);
    for (const [key, r] of this.held) {
      this.held.delete(key);
      this.send(ws, 'device_event', { device_id: r.deviceId, event_type: r.event, data: r.data, ts: r.ts / 1000 });
    }
    if (!this.acked) {
      this.acked = true;
      this.o.onFirstAck?.();
    }
    this.o.onAck?.();
  }

  private startHeartbeat(ws: WebSocket, everyMs: number): void {
    this.stopHeartbeat();
    this.heartbeat = setInterval(() => {
      if (ws !== this.ws || ws.readyState !== WebSocket.OPEN) return;
      if (Date.now() - this.lastInbound > 3 * everyMs) {
        this.lastError = `the brain sent nothing for ${Math.round((3 * everyMs) / 1000)} s`;
        ws.terminate();
        return;
      }
      this.send(ws, 'node_heartbeat', { ts: Date.now() / 1000, uptime_s: this.o.uptimeS() });
      ws.ping();
    }, everyMs);
  }

  // ── actions ────────────────────────────────────────────────────────────────────────────────────
  private pick(req: ActionRequest): DeviceAdapter | string {
    const devices = this.o.devices;
    const named = req.device_id ?? (typeof req.params.device_id === 'string' ? req.params.device_id : undefined);
    if (named !== undefined) return devices.find((d) => d.manifest.device_id === named) ?? `no device ${named} on this node`;
    if (devices.length === 1) return devices[0]!;
    const having = devices.filter((d) => d.manifest.actions.some((a) => (a.name ?? a.id) === req.name));
    if (having.length === 1) return having[0]!;
    return having.length === 0 ? `no device on this node has the action ${req.name}` : `${having.length} devices have the action ${req.name}; the request must name device_id`;
  }

  private async onAction(ws: WebSocket, req: ActionRequest): Promise<void> {
    const started = performance.now();
    const timeoutMs = req.timeout_ms ?? DEFAULT_ACTION_TIMEOUT_MS;
    const respond = (success: boolean, result: Record<string, unknown> | null, error: string | null): void => {
      const duration = Math.round(performance.now() - started);
      if (ws.readyState !== WebSocket.OPEN) {
        this.o.log.info({ action_id: req.action_id, success }, 'an action finished after its socket closed; the brain has already given up on it');
        return;
      }
      this.send(ws, 'hup_action_response', { action_id: req.action_id, success, ...(result !== null ? { result } : {}), error, duration_ms: duration });
    };
    const device = this.pick(req);
    if (typeof device === 'string') return respond(false, null, device);
    const controller = new AbortController();
    const timedOut = new Promise<'timeout'>((resolve) => {
      const timer = setTimeout(() => {
        controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError'));
        resolve('timeout');
      }, timeoutMs);
      controller.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
    });
    const run = device.run(req.name, req.params, controller.signal);
    try {
      const outcome = await Promise.race([run, timedOut]);
      if (outcome === 'timeout') {
        run.catch((err: unknown) => this.o.log.debug({ err: err instanceof Error ? err.message : String(err) }, 'a timed-out action ended'));
        return respond(false, null, `timed out after ${timeoutMs} ms`);
      }
      respond(true, outcome, null);
    } catch (err) {
      if (err instanceof AdapterError) return respond(false, null, err.message);
      this.o.log.error({ err, action: req.name, device: device.manifest.device_id }, 'an adapter failed unexpectedly');
      respond(false, null, `the node-agent failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      controller.abort();
    }
  }

  // ── plumbing ───────────────────────────────────────────────────────────────────────────────────
  private send(ws: WebSocket, type: string, payload: object): void {
    if (ws.readyState === WebSocket.OPEN) ws.send(nodeFrame(type, payload as Record<string, unknown>));
  }

  private setStatus(state: LinkState, detail: string): void {
    if (state !== this.current.state) this.since = Date.now();
    this.current = { state, detail };
    this.o.onStatus?.(this.status());
  }

  private ended(): boolean {
    return this.current.state === 'stopped' || this.current.state === 'refused';
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.stopHeartbeat();
  }
}
