// The phone's side of /v1/node (node-protocol.md "Phone as peer"; docs/phone-bridge.md): one link to
// the brain, kept up for as long as the bridge runs.
//
//   connecting ──open──▶ registering ──node_ack──▶ registered ──close──▶ waiting ──backoff──▶ connecting
//        │                    └──no ack in 5 s: the socket is dropped──────────▲
//        └──refused (401/403 upgrade, close 4001)──▶ ended "unauthorized" (the key is not, or no longer, paired)
//   close 4003 (another link took this node_id, or a capability was denied) ──▶ ended "superseded"
//
// Registered, the bridge (phone → brain) heartbeats every heartbeat_ms of the ack, registers its
// peripherals with peripheral_bridge_register and again before its expires_at, notifies readings as
// device_event, answers hup_action_request for params.device_id from the peripheral's state, and
// sends chat_request; (brain → phone) node_ack, hup_action_request, chat_response, error, node_bye.
// A WebSocket ping each heartbeat finds a link that died without a close (a phone leaving the Wi-Fi).
import { WebSocket, type RawData } from 'ws';
import { ACK_DEADLINE_MS, HUP_SUBPROTOCOL, MAX_NODE_FRAME_BYTES, NodeCloseCode, nodeFrame, type ActionRequest, type ChatResponse, type DeviceManifest, type NodeAck } from '../protocol/node';
import { backoffDelay } from './backoff';
import { decodeBrainFrame, type BrainMessage } from './frames';
import { PeripheralError, type PeripheralSet } from './peripherals';

export interface BridgeIdentity {
  /** The node_id the key was paired for. */
  nodeId: string;
  key: string;
  name: string;
  bridgeId: string;
  platform: 'ios' | 'android';
}

export interface BridgeClientOptions {
  /** http(s)://host:port of the brain; the link is ws(s)://host:port/v1/node. */
  brainUrl: string;
  identity: BridgeIdentity;
  /** The peripherals to relay; none for a link that only chats. */
  peripherals: PeripheralSet | null;
  /** How long a peripheral_bridge_register stays valid; it is sent again at 80% of this. */
  bridgeTtlMs: number;
  random: () => number;
  now: () => number;
  /** One line about the link (stderr in main.ts). */
  log: (line: string) => void;
}

export type BridgeEnd = { reason: 'stopped' } | { reason: 'unauthorized'; detail: string } | { reason: 'superseded'; detail: string };

/** Heartbeats without any inbound frame or pong before the link is taken for dead. */
const SILENT_HEARTBEATS = 3;
/** peripheral_bridge_register is sent again when this share of its lifetime has passed. */
const REFRESH_AT = 0.8;

interface PendingChat {
  sessionId: string;
  resolve: (text: string) => void;
  reject: (err: Error) => void;
  onText: ((text: string) => void) | undefined;
}

/** The link ended or was not up when a chat needed it. */
export class LinkDown extends Error {
  override name = 'LinkDown';
}

export const nodeUrl = (brainUrl: string): string => {
  const u = new URL(brainUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/v1/node`;
  return u.toString();
};

export class BridgeClient {
  private socket: WebSocket | null = null;
  private ack: NodeAck | null = null;
  private attempt = 0;
  private stopping = false;
  private ended: BridgeEnd | null = null;
  private timers: NodeJS.Timeout[] = [];
  private wake: (() => void) | null = null;
  private lastInbound = 0;
  private chats: PendingChat[] = [];
  private registeredWaiters: ((ack: NodeAck) => void)[] = [];
  private readonly unknownTypes = new Set<string>();

  constructor(private readonly options: BridgeClientOptions) {}

  /** Runs the link until stop(), or until the brain refuses this node for good. */
  async run(): Promise<BridgeEnd> {
    while (!this.stopping && this.ended === null) {
      await this.connectOnce();
      if (this.stopping || this.ended !== null) break;
      const delay = backoffDelay(this.attempt++, this.options.random);
      this.options.log(`link down; reconnecting in ${delay} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    return this.ended ?? { reason: 'stopped' };
  }

  /** Says node_bye, closes the link with 1000 and ends run(). */
  stop(): void {
    this.stopping = true;
    const ws = this.socket;
    if (ws?.readyState === WebSocket.OPEN) {
      ws.send(nodeFrame('node_bye', { reason: 'bridge stopped' }, this.options.now()));
      ws.close(NodeCloseCode.normal, 'bye');
    } else ws?.terminate();
    this.wake?.();
  }

  /** The ack of the link now, or the next one's. */
  registered(): Promise<NodeAck> {
    if (this.ack) return Promise.resolve(this.ack);
    return new Promise((resolve) => this.registeredWaiters.push(resolve));
  }

  /** Sends chat_request and resolves with the final chat_response's text; `onText` sees each partial one. */
  chat(sessionId: string, text: string, onText?: (text: string) => void): Promise<string> {
    const ws = this.socket;
    if (!this.ack || ws?.readyState !== WebSocket.OPEN) return Promise.reject(new LinkDown('the link to the brain is not up'));
    return new Promise((resolve, reject) => {
      this.chats.push({ sessionId, resolve, reject, onText });
      this.send('chat_request', { session_id: sessionId, text, reply_mode: onText ? 'stream' : 'final' });
    });
  }

  /** One socket's life: resolves when it has closed. */
  private connectOnce(): Promise<void> {
    const { identity } = this.options;
    return new Promise<void>((resolve) => {
      const ws = new WebSocket(nodeUrl(this.options.brainUrl), [HUP_SUBPROTOCOL], {
        headers: { authorization: `Bearer ${identity.key}` },
        maxPayload: MAX_NODE_FRAME_BYTES,
        handshakeTimeout: ACK_DEADLINE_MS * 2,
      });
      this.socket = ws;
      ws.on('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        if (status === 401 || status === 403) this.end({ reason: 'unauthorized', detail: `the brain refused the node key (HTTP ${status})` });
        else this.options.log(`the brain answered the upgrade with HTTP ${status}`);
        res.resume();
        ws.terminate();
      });
      ws.on('error', (err) => this.options.log(`link error: ${err.message}`));
      let open = false;
      ws.on('open', () => {
        open = true;
        this.opened(ws);
      });
      ws.on('pong', () => (this.lastInbound = this.options.now()));
      ws.on('message', (data: RawData, isBinary: boolean) => {
        this.lastInbound = this.options.now();
        if (isBinary) this.options.log('ignored a binary frame');
        else this.received(ws, rawText(data));
      });
      ws.on('close', (code: number, reason: Buffer) => {
        this.closed(code, reason.toString(), open);
        resolve();
      });
    });
  }

  private opened(ws: WebSocket): void {
    const { identity, peripherals } = this.options;
    this.lastInbound = this.options.now();
    const capabilities = [...new Set((peripherals?.all() ?? []).flatMap((p) => p.spec.capabilities))];
    // The phone itself is a device with no actions of its own: a register without a manifest would have
    // the brain derive actions for the phone from these capabilities, which belong to the peripherals.
    const own: DeviceManifest = { device_id: identity.nodeId.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 64), device_type: 'phone', name: identity.name, capabilities: [], actions: [] };
    this.send('node_register', { node_id: identity.nodeId, node_type: 'phone', capabilities, name: identity.name, platform: identity.platform, device_manifest: own });
    this.later(ACK_DEADLINE_MS, () => {
      if (this.ack === null && this.socket === ws) {
        this.options.log(`no node_ack within ${ACK_DEADLINE_MS} ms; dropping the link`);
        ws.terminate();
      }
    });
  }

  private received(ws: WebSocket, text: string): void {
    const frame = decodeBrainFrame(text);
    if (frame.kind === 'unknown') {
      if (!this.unknownTypes.has(frame.type)) this.options.log(`ignoring message type ${frame.type}`);
      this.unknownTypes.add(frame.type);
    } else if (frame.kind === 'invalid') {
      this.options.log(`unreadable frame from the brain: ${frame.problem}`);
      if (frame.actionId !== null) this.send('hup_action_response', { action_id: frame.actionId, success: false, error: `unreadable request: ${frame.problem}`, duration_ms: 0 });
    } else this.handle(ws, frame.message);
  }

  private handle(ws: WebSocket, message: BrainMessage): void {
    switch (message.type) {
      case 'node_ack':
        return this.acknowledged(ws, message.payload);
      case 'hup_action_request':
        return this.act(message.payload);
      case 'chat_response':
        return this.chatAnswered(message.payload);
      case 'error':
        return this.options.log(`brain error ${message.payload.code} ${message.payload.name}: ${message.payload.message}`);
      case 'node_bye':
        this.options.log(`the brain said node_bye${message.payload.reason ? ` (${message.payload.reason})` : ''}`);
        ws.close(NodeCloseCode.normal, 'bye');
    }
  }

  private acknowledged(ws: WebSocket, ack: NodeAck): void {
    if (this.ack !== null) return;
    this.ack = ack;
    this.attempt = 0;
    const denied = ack.denied_capabilities.length > 0 ? `; denied: ${ack.denied_capabilities.join(', ')}` : '';
    this.options.log(`registered as ${ack.node_id} (heartbeat ${ack.heartbeat_ms} ms)${denied}`);
    this.every(ack.heartbeat_ms, () => this.beat(ws, ack.heartbeat_ms));
    if (this.options.peripherals) {
      this.registerBridge();
      this.every(Math.max(1, Math.floor(this.options.bridgeTtlMs * REFRESH_AT)), () => this.registerBridge());
      for (const p of this.options.peripherals.all()) {
        for (const reading of p.spec.readings ?? []) {
          this.every(reading.every_ms, () => this.send('device_event', { node_id: ack.node_id, device_id: p.deviceId, event_type: reading.event_type, data: { [reading.field]: p.nextReading(reading, this.options.random) }, ts: this.options.now() / 1000 }));
        }
      }
    }
    for (const waiter of this.registeredWaiters.splice(0)) waiter(ack);
  }

  private beat(ws: WebSocket, heartbeatMs: number): void {
    if (this.options.now() - this.lastInbound > heartbeatMs * SILENT_HEARTBEATS) {
      this.options.log(`nothing from the brain for ${SILENT_HEARTBEATS} heartbeats; dropping the link`);
      ws.terminate();
      return;
    }
    this.send('node_heartbeat', { ts: this.options.now() / 1000 });
    ws.ping();
  }

  private registerBridge(): void {
    const { identity, peripherals, bridgeTtlMs, now } = this.options;
    const devices = (peripherals?.all() ?? []).map((p) => p.registration());
    this.send('peripheral_bridge_register', { bridge_id: identity.bridgeId, platform: identity.platform, devices, expires_at: (now() + bridgeTtlMs) / 1000 });
  }

  /** Answers hup_action_request from the peripheral it names (params.device_id, or the request's device_id). */
  private act(request: ActionRequest): void {
    const started = this.options.now();
    const { device_id: named, ...params } = request.params;
    const deviceId = typeof named === 'string' ? named : request.device_id;
    const answer = (success: boolean, result: Record<string, unknown> | null, error: string | null): void =>
      this.send('hup_action_response', { action_id: request.action_id, success, result, error, duration_ms: this.options.now() - started });
    const peripheral = deviceId === undefined ? undefined : this.options.peripherals?.get(deviceId);
    if (!peripheral) return answer(false, null, deviceId === undefined ? 'the request names no device_id' : `no peripheral ${deviceId} on this bridge`);
    try {
      answer(true, peripheral.run(request.name, params), null);
      this.options.log(`${deviceId}.${request.name} ${JSON.stringify(params)} -> ${JSON.stringify(peripheral.snapshot())}`);
    } catch (err) {
      if (!(err instanceof PeripheralError)) throw err;
      answer(false, null, err.message);
    }
  }

  private chatAnswered(response: ChatResponse): void {
    const index = this.chats.findIndex((c) => c.sessionId === response.session_id);
    const pending = this.chats[index];
    if (!pending) return this.options.log(`chat_response for session ${response.session_id}, which this bridge did not ask`);
    if (!response.final) return pending.onText?.(response.text);
    this.chats.splice(index, 1);
    pending.resolve(response.text);
  }

  /** `open`: the socket had connected (a refused connect was logged as its error already). */
  private closed(code: number, reason: string, open: boolean): void {
    for (const t of this.timers.splice(0)) clearInterval(t);
    const wasRegistered = this.ack !== null;
    this.ack = null;
    this.socket = null;
    for (const c of this.chats.splice(0)) c.reject(new LinkDown(`the link closed (${code}) before the answer`));
    if (code === NodeCloseCode.unauthorized) this.end({ reason: 'unauthorized', detail: `the brain closed the link with 4001${reason ? ` (${reason})` : ''}: the node key is not paired, or was revoked` });
    else if (code === NodeCloseCode.capability_denied) this.end({ reason: 'superseded', detail: `the brain closed the link with 4003${reason ? ` (${reason})` : ''}: another connection took this node_id, or a capability was denied` });
    else if (!this.stopping && open) this.options.log(`link closed (${code}${reason ? ` ${reason}` : ''})${wasRegistered ? '' : ' before node_ack'}`);
  }

  private end(end: BridgeEnd): void {
    if (this.ended === null) this.ended = end;
  }

  private send(type: string, payload: Record<string, unknown>): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(nodeFrame(type, payload, this.options.now()));
  }

  private every(ms: number, fn: () => void): void {
    this.timers.push(setInterval(fn, ms));
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(fn, ms);
    timer.unref();
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}
