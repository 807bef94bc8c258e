// A NodeHub mounted on the real app (buildApp, listening on 127.0.0.1 port 0) with a recording
// listener, a fake CredentialCheck, a clock the test moves, every log line captured, and raw `ws`
// clients that speak the node protocol.
import type { TestContext } from 'node:test';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { WebSocket, type ClientOptions } from 'ws';
import { buildApp } from '../../../../daemon/app';
import { createMetrics } from '../../../../daemon/metrics/metrics';
import { Lifecycle } from '../../../../daemon/lifecycle/lifecycle';
import { NodeHub, type NodeHubOptions } from '../../../../daemon/hardware/links/node-hub';
import type { NodeHubListener, RegisteredNode, RegistrationDecision } from '../../../../daemon/hardware/links/node-links';
import type { CredentialCheck } from '../../../../daemon/kernel/capability';
import { HUP_VERSION } from '../../../../protocol/node';

export const KEYS = { 'pi-1': 'key-pi-1-0123456789', 'pi-2': 'key-pi-2-0123456789', phone: 'key-phone-0123456789' } as const;
export const ADMIN_KEY = 'admin-token-0123456789';
export const DEVICE_KEY = 'device-key-0123456789';
export const PEER_KEY = 'peer-key-0123456789';

export const credentials: CredentialCheck = {
  verify: (token) => {
    for (const [id, key] of Object.entries(KEYS)) if (token === key) return { kind: 'node', id };
    if (token === ADMIN_KEY) return { kind: 'admin' };
    if (token === DEVICE_KEY) return { kind: 'device', id: 'dev_1', deviceKind: 'phone', scopes: [] };
    if (token === PEER_KEY) return { kind: 'peer', id: 'brain-2' };
    return undefined;
  },
};

/** The level of a captured log line. */
export const levelOf = (line: string): number => (JSON.parse(line) as { level: number }).level;

export interface Frame {
  hup_version: string;
  type: string;
  ts: number;
  payload: Record<string, unknown>;
}

type Call = { [K in keyof NodeHubListener]: { method: K; args: Parameters<NodeHubListener[K]> } }[keyof NodeHubListener];

/** Records every call; `fail` makes a method throw (a bug in the device layer). */
export class RecordingListener implements NodeHubListener {
  readonly calls: Call[] = [];
  decision: RegistrationDecision = { granted: ['temperature', 'led'], denied: ['camera'], actionNames: ['set_led', 'read_temperature'] };
  fail: keyof NodeHubListener | null = null;
  private waiters: { match: (c: Call) => boolean; resolve: (c: Call) => void }[] = [];

  of<K extends keyof NodeHubListener>(method: K): Parameters<NodeHubListener[K]>[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args as Parameters<NodeHubListener[K]>);
  }

  /** The first call of `method` whose arguments `match`, recorded already or still to come. */
  next<K extends keyof NodeHubListener>(method: K, match: (args: Parameters<NodeHubListener[K]>) => boolean = () => true): Promise<Parameters<NodeHubListener[K]>> {
    const hit = (c: Call): boolean => c.method === method && match(c.args as Parameters<NodeHubListener[K]>);
    const found = this.calls.find(hit);
    if (found) return Promise.resolve(found.args as Parameters<NodeHubListener[K]>);
    return new Promise((resolve) => this.waiters.push({ match: hit, resolve: (c) => resolve(c.args as Parameters<NodeHubListener[K]>) }));
  }

  private record(call: Call): void {
    this.calls.push(call);
    this.waiters = this.waiters.filter((w) => (w.match(call) ? (w.resolve(call), false) : true));
    if (this.fail === call.method) throw new Error(`listener ${call.method} failed (test)`);
  }

  registered(node: RegisteredNode): RegistrationDecision {
    this.record({ method: 'registered', args: [node] });
    return this.decision;
  }
  heartbeat(...args: Parameters<NodeHubListener['heartbeat']>): void {
    this.record({ method: 'heartbeat', args });
  }
  deviceEvent(...args: Parameters<NodeHubListener['deviceEvent']>): void {
    this.record({ method: 'deviceEvent', args });
  }
  bridgeRegistered(...args: Parameters<NodeHubListener['bridgeRegistered']>): void {
    this.record({ method: 'bridgeRegistered', args });
  }
  chatRequest(...args: Parameters<NodeHubListener['chatRequest']>): void {
    this.record({ method: 'chatRequest', args });
  }
  disconnected(...args: Parameters<NodeHubListener['disconnected']>): void {
    this.record({ method: 'disconnected', args });
  }
}

/** A clock that moves only when the test says. */
export class TestClock {
  private t = 1_750_000_000_000;
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** A node's side of the socket: the frames it got, waits for more, and how it was closed. */
export class NodePeer {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: { match: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const f = JSON.parse(data.toString('utf8')) as Frame;
      this.frames.push(f);
      this.waiters = this.waiters.filter((w) => (w.match(f) ? (w.resolve(f), false) : true));
    });
    this.closed = new Promise((resolve) => ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString('utf8') })));
  }

  send(type: string, payload: Record<string, unknown>, version = HUP_VERSION): void {
    this.ws.send(JSON.stringify({ hup_version: version, type, ts: 1_750_000_000.25, payload }));
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.ws.send(data, { binary });
  }

  /** The first frame of `type` from index `from` on that `match`es, received already or still to come. */
  next(type: string, match: (f: Frame) => boolean = () => true, from = 0): Promise<Frame> {
    const hit = (f: Frame): boolean => f.type === type && match(f);
    const found = this.frames.slice(from).find(hit);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match: hit, resolve }));
  }

  errors(code?: number): Frame[] {
    return this.frames.filter((f) => f.type === 'error' && (code === undefined || f.payload.code === code));
  }

  /** Registers as `nodeId` and returns the node_ack. */
  async register(nodeId: string, extra: Record<string, unknown> = {}): Promise<Frame> {
    const from = this.frames.length;
    this.send('node_register', { node_id: nodeId, node_type: 'rpi', capabilities: ['temperature', 'led'], ...extra });
    return this.next('node_ack', () => true, from);
  }
}

export interface HubRig {
  hub: NodeHub;
  listener: RecordingListener;
  clock: TestClock;
  url: string;
  /** Every log line of the app and the hub, as written. */
  logs: string[];
  /** Opens a socket (header key by default); resolves once open. */
  connect: (options?: { key?: string | null; protocols?: string[]; query?: string; headers?: Record<string, string> }) => Promise<NodePeer>;
  /** Opens a socket with `nodeId`'s key and registers it. */
  node: (nodeId: keyof typeof KEYS) => Promise<{ peer: NodePeer; ack: Frame }>;
}

export async function hubRig(t: TestContext, options: Partial<Omit<NodeHubOptions, 'listener' | 'credentials' | 'logger' | 'clock'>> = {}): Promise<HubRig> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = pino({ level: 'trace' }, sink);
  const listener = new RecordingListener();
  const clock = new TestClock();
  const hub = new NodeHub({ listener, credentials, logger, clock, heartbeatMs: 10_000, ackDeadlineMs: 5000, floodLimit: { frames: 1000, perMs: 1000 }, ...options });
  const app = await buildApp({
    logger,
    version: '0.0.0-test',
    apiToken: ADMIN_KEY,
    metrics: createMetrics(false),
    metricsPublic: false,
    lifecycle: new Lifecycle(),
    bodyLimit: 1024 * 1024,
    sockets: [hub.socketRoute() as never],
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/node`;
  const sockets: WebSocket[] = [];
  t.after(async () => {
    await hub.stop();
    for (const s of sockets) s.terminate();
    await app.close();
  });
  const connect: HubRig['connect'] = (o = {}) =>
    new Promise((resolve, reject) => {
      const key = o.key === undefined ? KEYS['pi-1'] : o.key;
      const headers: Record<string, string> = { ...(key !== null ? { authorization: `Bearer ${key}` } : {}), ...o.headers };
      const clientOptions: ClientOptions = { headers };
      const ws = new WebSocket(`${url}${o.query ?? ''}`, o.protocols ?? [], clientOptions);
      sockets.push(ws);
      const peer = new NodePeer(ws);
      ws.once('open', () => resolve(peer));
      ws.once('error', reject);
    });
  const node: HubRig['node'] = async (nodeId) => {
    const peer = await connect({ key: KEYS[nodeId] });
    return { peer, ack: await peer.register(nodeId) };
  };
  return { hub, listener, clock, url, logs, connect, node };
}
