// The brain's /v1/node link layer (node-protocol.md): authenticates each socket by its node key,
// runs the handshake (node_register → node_ack, else 4002), keeps one socket per node_id, watches
// liveness, enforces the limits, carries action requests to nodes and their responses back, and tells
// the device layer (NodeHubListener, node-links.ts) what nodes say. Nothing a node sends can throw out
// of here: a malformed frame is an `error` frame, a listener bug is logged and answered with 1099.
//
// Choices where the contract is silent:
// - The key's node id is the node's id: a node_register naming another node_id is refused with
//   error 1003 `capability_denied` and close 4003 (a key may not speak for another node). A socket
//   already registered that names a different node_id gets 1003 and stays (its id may not change);
//   the same node_id again is re-acknowledged with the same session_token.
// - Before registration every frame but a valid node_register (bad JSON, another type, a version
//   2.x, a register that fails its schema) gets its error frame and close 4002.
// - Flood: over `floodLimit.frames` in a fixed window of `floodLimit.perMs`, frames are dropped and
//   answered with 1004 rate_limited at most once a second; past 10× the limit in one window the
//   socket gets a last 1004 and is closed with 1008 (policy violation) "rate_limited".
// - Liveness: one sweep timer for all sockets, every heartbeatMs / 2, closes a registered socket not
//   heard from for 3 × heartbeatMs with 4004 "stale_heartbeat" (no error frame: the node is not reading).
// - disconnect(nodeId, code, reason): `code` is the error frame's code and the close code follows it
//   (1001 → 4001, 1002 → 4002, 1003 and 1005 → 4003, anything else → 1008), or one of our close codes
//   4001–4004, whose error code is sent (4001 → 1001, 4002 → 1002, 4003 → 1003; 4004: no error frame).
import type { Logger } from 'pino';
import type { WebSocket, RawData } from 'ws';
import { NodeErrorCode, type ActionRequest, type ActionResponse, type DeviceEvent, type NodeRegister } from '../../../protocol/node';
import type { Clock, CredentialCheck, RoutePlugin } from '../../kernel/capability';
import { NodeUnreachable, type NodeHubListener, type NodeLinks, type RegistrationDecision } from './node-links';
import { FLOOD_CLOSE_FACTOR, NodeConnection } from './node-connection';
import { decodeFrame, frameError, type DecodedFrame, type InboundMessage } from './node-frames';
import { checkDeviceEvent, legacyEvents } from './node-events';
import { nodeSocketRoute, type PresentedKey } from './node-socket';

export interface NodeHubOptions {
  listener: NodeHubListener;
  /** Whose a presented key is (core.credentials); only `{kind: 'node'}` is admitted. */
  credentials: CredentialCheck;
  logger: Logger;
  clock: Clock;
  /** What node_ack offers (default 10000): a node silent for 3 of these is closed 4004. */
  heartbeatMs: number;
  /** node_register must arrive within this (default 5000), else close 4002. */
  ackDeadlineMs?: number;
  /** Per socket; over it error 1004 and the frames dropped; 10× over it in one window closes the socket (1008). */
  floodLimit: { frames: number; perMs: number };
}

const DEFAULT_ACK_DEADLINE_MS = 5000;
const DEFAULT_ACTION_TIMEOUT_MS = 5000;
/** Added to an action's timeout_ms before the brain gives up on its response. */
const RESPONSE_GRACE_MS = 1000;
/** How long stop() waits for sockets to finish their close handshake. */
const STOP_WAIT_MS = 1500;
/** Unknown message types logged per node: a node inventing names cannot grow the brain's memory or its log. */
const MAX_UNKNOWN_TYPES_NOTED = 64;
const CLOSE_FOR_ERROR: Readonly<Record<number, number>> = { 1001: 4001, 1002: 4002, 1003: 4003, 1005: 4003 };
const ERROR_FOR_CLOSE: Readonly<Record<number, number>> = { 4001: 1001, 4002: 1002, 4003: 1003 };

/** disconnect()'s code is an error code (1001) or a close code of ours (4001–4004); the other follows from it. */
export function disconnectCodes(code: number): { errorCode: number | null; closeCode: number } {
  if (code >= 4001 && code <= 4004) return { errorCode: ERROR_FOR_CLOSE[code] ?? null, closeCode: code };
  return { errorCode: code, closeCode: CLOSE_FOR_ERROR[code] ?? 1008 };
}

type LegacyMessage = Extract<InboundMessage, { type: 'telemetry' | 'sensor_telemetry' | 'sensor_batch' }>;

export class NodeHub implements NodeLinks {
  /** Registered sockets by node id. */
  private readonly nodes = new Map<string, NodeConnection>();
  /** Every open socket, registered or not. */
  private readonly sockets = new Set<NodeConnection>();
  private readonly notes = new Map<string, Set<string>>();
  private readonly unknownTypes = new Map<string, Set<string>>();
  private readonly log: Logger;
  private sweepTimer: NodeJS.Timeout | null = null;
  private stopping = false;

  constructor(private readonly options: NodeHubOptions) {
    this.log = options.logger;
  }

  socketRoute(): RoutePlugin {
    return nodeSocketRoute((socket, key, remote) => this.accept(socket, key, remote));
  }

  /** Registered sockets now. */
  connected(): number {
    return this.nodes.size;
  }

  online(nodeId: string): boolean {
    return this.nodes.get(nodeId)?.open === true;
  }

  request(nodeId: string, request: ActionRequest): Promise<ActionResponse> {
    if (this.stopping) return Promise.reject(new NodeUnreachable(nodeId, 'stopping'));
    const conn = this.nodes.get(nodeId);
    if (!conn?.open) return Promise.reject(new NodeUnreachable(nodeId, 'offline'));
    return conn.request(request, (request.timeout_ms ?? DEFAULT_ACTION_TIMEOUT_MS) + RESPONSE_GRACE_MS);
  }

  disconnect(nodeId: string, code: number, reason: string): boolean {
    const conn = this.nodes.get(nodeId);
    if (!conn) return false;
    const { errorCode, closeCode } = disconnectCodes(code);
    if (errorCode !== null) {
      const name = (Object.keys(NodeErrorCode) as (keyof typeof NodeErrorCode)[]).find((n) => NodeErrorCode[n] === errorCode) ?? 'disconnected';
      conn.error({ code: errorCode, name, message: reason, ref: null }, false);
    }
    conn.close(closeCode, reason);
    return true;
  }

  /** Says node_bye to every node, closes the sockets with 1001, and rejects what waits with 'stopping'. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopSweep();
    const at = this.options.clock.now();
    const closed: Promise<void>[] = [];
    for (const conn of this.sockets) {
      if (conn.socket.readyState !== conn.socket.CLOSED) closed.push(new Promise((resolve) => conn.socket.once('close', () => resolve())));
      conn.failAll('stopping');
      if (conn.nodeId !== null && !conn.retired) this.retire(conn, 'stopping', at, false);
      conn.send('node_bye', { reason: 'stopping' });
      conn.close(1001, 'stopping');
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(timer);
    for (const conn of this.sockets) conn.socket.terminate();
  }

  // ── Sockets ──────────────────────────────────────────────────────────────────────────────────

  private accept(socket: WebSocket, key: PresentedKey | null, remote: string): void {
    if (this.stopping) {
      socket.close(1001, 'stopping');
      return;
    }
    const principal = key ? this.options.credentials.verify(key.key) : undefined;
    if (principal?.kind !== 'node') {
      this.log.warn({ remote, via: key?.via ?? 'none', presented: principal?.kind ?? (key ? 'unknown' : 'none') }, 'node socket refused: not a node key');
      const conn = new NodeConnection(socket, '', this.options.clock, this.options.floodLimit);
      conn.error(frameError('unauthorized', key ? 'this key is not a paired node key' : 'no node key: send Authorization: Bearer <node key>'), false);
      conn.close(4001, 'unauthorized');
      return;
    }
    if (key?.via === 'query') this.noteOnce(principal.id, 'query-key', () => this.log.warn({ node: principal.id }, 'node presents its key as ?api_key= (deprecated: use Authorization: Bearer)'));
    const conn = new NodeConnection(socket, principal.id, this.options.clock, this.options.floodLimit);
    this.sockets.add(conn);
    this.startSweep();
    conn.armDeadline(this.options.ackDeadlineMs ?? DEFAULT_ACK_DEADLINE_MS, () => {
      conn.error(frameError('bad_schema', 'no node_register in time'), false);
      conn.close(4002, 'no node_register');
    });
    socket.on('message', (data: RawData, isBinary: boolean) => this.received(conn, data, isBinary));
    socket.on('close', (code: number) => this.closed(conn, code));
  }

  private received(conn: NodeConnection, data: RawData, isBinary: boolean): void {
    const now = this.options.clock.now();
    conn.lastSeen = now;
    if (conn.retired || conn.closeReason !== null) return;
    const verdict = conn.rate(now);
    if (verdict !== 'pass') return this.flooded(conn, verdict === 'close', now);
    try {
      const frame = decodeFrame(data, isBinary);
      if (conn.nodeId === null) this.firstFrame(conn, frame, now);
      else this.dispatch(conn, frame, now);
    } catch (err) {
      // A fault of ours in handling one frame must not close the socket or the brain.
      this.log.error({ err, node: conn.principalId }, 'node frame handler failed');
      conn.error(frameError('internal', 'the brain could not handle this frame; see its log'));
    }
  }

  private flooded(conn: NodeConnection, close: boolean, now: number): void {
    const { frames, perMs } = this.options.floodLimit;
    const error = frameError('rate_limited', `over ${frames} frames per ${perMs} ms: frames dropped`);
    if (close) {
      this.log.warn({ node: conn.principalId }, `node flooding at ${FLOOD_CLOSE_FACTOR}× its frame limit: closed`);
      conn.error(error, false);
      conn.close(1008, 'rate_limited');
    } else if (conn.rateNoticeDue(now)) conn.error(error);
  }

  private closed(conn: NodeConnection, code: number): void {
    this.sockets.delete(conn);
    conn.clearDeadline();
    conn.failAll('disconnected');
    if (this.sockets.size === 0) this.stopSweep();
    if (conn.nodeId === null || conn.retired) return;
    this.retire(conn, conn.closeReason ?? `closed by the node (${code})`, this.options.clock.now(), false);
  }

  /** Takes a registered socket out of the registry and tells the listener it is gone. */
  private retire(conn: NodeConnection, reason: string, at: number, superseded: boolean): void {
    const nodeId = conn.nodeId!;
    conn.retired = true;
    if (this.nodes.get(nodeId) === conn) this.nodes.delete(nodeId);
    this.log.info({ node: nodeId, reason }, 'node disconnected');
    this.tell(null, 'disconnected', () => this.options.listener.disconnected(nodeId, reason, at, superseded));
  }

  // ── Liveness ─────────────────────────────────────────────────────────────────────────────────

  private startSweep(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => this.sweep(), Math.max(1, Math.floor(this.options.heartbeatMs / 2)));
    this.sweepTimer.unref();
  }

  private stopSweep(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
  }

  private sweep(): void {
    const stale = this.options.clock.now() - 3 * this.options.heartbeatMs;
    for (const conn of this.nodes.values()) {
      if (conn.lastSeen < stale && conn.closeReason === null) {
        this.log.info({ node: conn.nodeId, heartbeat_ms: this.options.heartbeatMs }, 'node silent for 3 heartbeats: closing');
        conn.close(4004, 'stale_heartbeat');
      }
    }
  }

  // ── Frames ───────────────────────────────────────────────────────────────────────────────────

  private firstFrame(conn: NodeConnection, frame: DecodedFrame, now: number): void {
    if (frame.kind === 'message' && frame.message.type === 'node_register') {
      if (frame.alias !== null) this.noteAlias(conn, frame.alias, 'node_register');
      this.register(conn, frame.message.payload, now);
      return;
    }
    const what = frame.kind === 'error' ? frame.error : frameError('bad_schema', `the first frame must be node_register, not ${frame.kind === 'message' ? frame.message.type : frame.type}`);
    conn.error(what, false);
    conn.close(4002, 'bad_schema');
  }

  private dispatch(conn: NodeConnection, frame: DecodedFrame, now: number): void {
    if (frame.kind === 'error') return conn.error(frame.error);
    if (frame.alias !== null) this.noteAlias(conn, frame.alias, frame.kind === 'message' ? frame.message.type : frame.type);
    if (frame.kind === 'unknown') {
      const type = frame.type;
      this.noteUnknownType(conn, type);
      return;
    }
    const nodeId = conn.nodeId!;
    const { listener } = this.options;
    const message = frame.message;
    switch (message.type) {
      case 'node_register':
        return this.register(conn, message.payload, now);
      case 'node_heartbeat':
        return void this.tell(conn, 'heartbeat', () => listener.heartbeat(nodeId, message.payload, now));
      case 'device_event':
        return this.deviceEvent(conn, message.payload, now);
      case 'hup_action_response':
        return this.response(conn, message.payload);
      case 'peripheral_bridge_register':
        return void this.tell(conn, 'bridgeRegistered', () => listener.bridgeRegistered(nodeId, message.payload, now));
      case 'chat_request': {
        const sessionId = message.payload.session_id;
        const reply = (text: string, final: boolean): void => conn.send('chat_response', { session_id: sessionId, text, final });
        return void this.tell(conn, 'chatRequest', () => listener.chatRequest(nodeId, message.payload, reply));
      }
      case 'node_bye':
        this.log.info({ node: nodeId, reason: message.payload.reason }, 'node said bye');
        return conn.close(1000, 'bye');
      case 'telemetry':
      case 'sensor_telemetry':
      case 'sensor_batch':
        return this.legacyTelemetry(conn, message, frame.ts, now);
    }
  }

  private register(conn: NodeConnection, register: NodeRegister, now: number): void {
    const nodeId = register.node_id;
    if (conn.nodeId !== null && conn.nodeId !== nodeId) {
      return conn.error(frameError('bad_payload', `this socket is registered as ${conn.nodeId}; a socket may not change its node_id`, 'node_register'));
    }
    if (nodeId !== conn.principalId) {
      this.log.warn({ key_node: conn.principalId, node_id: nodeId.slice(0, 128) }, 'node_register names another node than its key: refused');
      conn.error({ code: NodeErrorCode.bad_payload, name: 'capability_denied', message: `this node key belongs to ${conn.principalId}; it may not register as ${nodeId}`, ref: 'node_register' }, false);
      return conn.close(4003, 'capability_denied');
    }
    const reregister = conn.nodeId !== null;
    const { heartbeatMs } = this.options;
    let decision: RegistrationDecision | undefined;
    const told = this.tell(conn, 'registered', () => (decision = this.options.listener.registered({ nodeId, register, heartbeatMs, connectedAt: now })));
    if (!told || !decision) return;
    conn.clearDeadline();
    const previous = this.nodes.get(nodeId);
    conn.nodeId = nodeId;
    this.nodes.set(nodeId, conn);
    if (previous && previous !== conn) this.supersede(previous, now);
    conn.send('node_ack', {
      node_id: nodeId,
      session_token: conn.sessionToken,
      heartbeat_ms: heartbeatMs,
      server_time: now / 1000,
      granted_capabilities: [...new Set([...decision.granted, ...decision.actionNames])],
      denied_capabilities: [...decision.denied],
    });
    this.log.info({ node: nodeId, node_type: register.node_type, capabilities: register.capabilities.length, reregister }, 'node registered');
  }

  /** The old socket of a node that connected again: error 1005, close 4003 "superseded". */
  private supersede(old: NodeConnection, now: number): void {
    old.failAll('disconnected');
    this.retire(old, 'superseded', now, true);
    old.error(frameError('node_id_conflict', 'another connection registered this node_id; this one is closed'), false);
    old.close(4003, 'superseded');
  }

  private deviceEvent(conn: NodeConnection, event: DeviceEvent, now: number): void {
    const problem = checkDeviceEvent(event);
    if (problem) return conn.error(problem);
    const nodeId = conn.nodeId!;
    this.tell(conn, 'deviceEvent', () => this.options.listener.deviceEvent(nodeId, event, now));
  }

  private legacyTelemetry(conn: NodeConnection, message: LegacyMessage, ts: number, now: number): void {
    this.noteAlias(conn, message.type, 'device_event');
    const { events, dropped } = legacyEvents(message, ts);
    for (const why of dropped) conn.error(frameError('bad_payload', `${message.type}: ${why}`, message.type));
    for (const event of events) this.deviceEvent(conn, event, now);
  }

  private response(conn: NodeConnection, response: ActionResponse): void {
    const actionId = response.action_id ?? response.request_id;
    if (actionId === undefined) return conn.error(frameError('bad_payload', 'hup_action_response needs action_id (or request_id)', 'hup_action_response'));
    if (!conn.settle(actionId, { ...response, action_id: actionId })) this.log.debug({ node: conn.nodeId, action_id: actionId }, 'response to no waiting request: ignored');
  }

  // ── Helpers ──────────────────────────────────────────────────────────────────────────────────

  /** Calls the device layer; a throw is a bug there: logged at error and answered with 1099 on `conn`. */
  private tell(conn: NodeConnection | null, what: keyof NodeHubListener, call: () => void): boolean {
    try {
      call();
      return true;
    } catch (err) {
      this.log.error({ err, node: conn?.nodeId ?? conn?.principalId, listener: what }, 'hardware listener failed');
      conn?.error(frameError('internal', 'the brain could not handle this frame; see its log'));
      return false;
    }
  }

  private noteAlias(conn: NodeConnection, alias: string, now: string): void {
    this.noteOnce(conn.principalId, `alias:${alias}`, () => this.log.info({ node: conn.principalId, deprecated: alias, now }, 'node uses a deprecated message name'));
  }

  /** Runs `log` the first time `key` is seen for this node; keys come from a fixed set (aliases, key forms, the unknown-type cap). */
  private noteOnce(nodeId: string, key: string, log: () => void): void {
    let seen = this.notes.get(nodeId);
    if (!seen) this.notes.set(nodeId, (seen = new Set()));
    if (seen.has(key)) return;
    seen.add(key);
    log();
  }

  private noteUnknownType(conn: NodeConnection, type: string): void {
    let seen = this.unknownTypes.get(conn.principalId);
    if (!seen) this.unknownTypes.set(conn.principalId, (seen = new Set()));
    if (seen.has(type)) return;
    if (seen.size >= MAX_UNKNOWN_TYPES_NOTED) {
      this.noteOnce(conn.principalId, 'unknown-types-cap', () => this.log.info({ node: conn.principalId, noted: MAX_UNKNOWN_TYPES_NOTED }, 'node sends many unknown message types: no more are logged'));
      return;
    }
    seen.add(type);
    this.log.info({ node: conn.principalId, type: type.slice(0, 64) }, 'node sent a message type this brain does not read: ignored');
  }
}

