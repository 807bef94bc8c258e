// The brain's side of /v1/node, small and real (a `ws` server on loopback), for the node-agent's tests
// until the brain's own node hub runs in them: accepts /v1/node with the one node key it was given
// (anything else: error 1001 and close 4001, as node-protocol.md says), answers node_register with
// node_ack, records every frame, sends hup_action_request and returns the node's answer, says
// node_bye, revokes the key, and stops and starts again on the same port (a brain restart).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { HUP_SUBPROTOCOL, NodeCloseCode, nodeFrame } from '../../protocol/node';

export interface RecordedFrame {
  type: string;
  payload: Record<string, unknown>;
  /** Which connection (1, 2, …) it came on. */
  connection: number;
}

export interface HupBrainOptions {
  key: string;
  heartbeatMs?: number;
  /** Never answer node_register (the node's 5 s deadline). */
  silent?: boolean;
}

export interface HupBrain {
  /** http://127.0.0.1:<port> (the node-agent's --brain). */
  readonly url: string;
  readonly frames: RecordedFrame[];
  /** Upgrades seen (accepted or not). */
  connections(): number;
  /** The subprotocol and authorization of each upgrade. */
  readonly upgrades: { protocol: string | undefined; authorization: string | undefined }[];
  waitFor(type: string, predicate?: (f: RecordedFrame) => boolean, timeoutMs?: number): Promise<RecordedFrame>;
  /** Sends hup_action_request on the newest socket and resolves with the hup_action_response payload. */
  request(name: string, params: Record<string, unknown>, extra?: { device_id?: string; timeout_ms?: number }): Promise<Record<string, unknown>>;
  bye(): void;
  /** Sends this text as one frame on the newest socket (anything: the node must survive it). */
  sendRaw(text: string): void;
  /** The key stops working: open sockets get error 1001 and close 4001, later upgrades too. */
  revoke(): void;
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
}

export async function startHupBrain(options: HupBrainOptions): Promise<HupBrain> {
  const frames: RecordedFrame[] = [];
  const upgrades: HupBrain['upgrades'] = [];
  const sockets = new Set<WebSocket>();
  let newest: WebSocket | null = null;
  let revoked = false;
  let count = 0;
  let actionSeq = 0;
  const waiters = new Set<() => void>();
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has(HUP_SUBPROTOCOL) ? HUP_SUBPROTOCOL : false) });

  const refuse = (ws: WebSocket): void => {
    ws.send(nodeFrame('error', { code: 1001, name: 'unauthorized', message: 'node key refused', recoverable: false, ref_action_id: null }));
    ws.close(NodeCloseCode.unauthorized, 'unauthorized');
  };

  const attach = (server: Server): void => {
    server.on('upgrade', (req, socket, head) => {
      count++;
      upgrades.push({ protocol: req.headers['sec-websocket-protocol'], authorization: req.headers.authorization });
      if (req.url !== '/v1/node') {
        socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
        return;
      }
      const connection = count;
      wss.handleUpgrade(req, socket, head, (ws) => {
        sockets.add(ws);
        ws.on('close', () => sockets.delete(ws));
        if (revoked || req.headers.authorization !== `Bearer ${options.key}`) return refuse(ws);
        newest = ws;
        ws.on('message', (data) => {
          const frame = JSON.parse((data as Buffer).toString('utf8')) as { type: string; payload: Record<string, unknown> };
          frames.push({ type: frame.type, payload: frame.payload, connection });
          for (const w of [...waiters]) w();
          if (frame.type === 'node_register' && !options.silent) {
            ws.send(nodeFrame('node_ack', { node_id: frame.payload.node_id, session_token: `s${connection}`, heartbeat_ms: options.heartbeatMs ?? 10_000, server_time: Date.now() / 1000, granted_capabilities: frame.payload.capabilities, denied_capabilities: [] }));
          }
          if (frame.type === 'node_bye') ws.close(NodeCloseCode.normal);
        });
      });
    });
  };

  let server = createServer((_req, res) => res.writeHead(404).end());
  attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const waitFor: HupBrain['waitFor'] = (type, predicate = () => true, timeoutMs = 10_000) =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = frames.find((f) => f.type === type && predicate(f));
        if (found === undefined) return false;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no ${type} frame within ${timeoutMs} ms; frames: ${frames.map((f) => f.type).join(', ')}`));
      }, timeoutMs);
      if (!check()) waiters.add(check);
    });

  const stopServer = async (): Promise<void> => {
    for (const ws of sockets) ws.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  return {
    url: `http://127.0.0.1:${port}`,
    frames,
    upgrades,
    connections: () => count,
    waitFor,
    async request(name, params, extra = {}) {
      const ws = newest;
      if (ws === null) throw new Error('no node connected');
      const action_id = `brain-${++actionSeq}`;
      const from = frames.length;
      ws.send(nodeFrame('hup_action_request', { action_id, name, params, ...extra }));
      return (await waitFor('hup_action_response', (f) => f.payload.action_id === action_id && frames.indexOf(f) >= from, (extra.timeout_ms ?? 5000) + 5000)).payload;
    },
    bye() {
      for (const ws of sockets) ws.send(nodeFrame('node_bye', { reason: 'restarting' }));
    },
    sendRaw(text) {
      if (newest === null) throw new Error('no node connected');
      newest.send(text);
    },
    revoke() {
      revoked = true;
      for (const ws of sockets) refuse(ws);
    },
    stop: stopServer,
    async restart() {
      server = createServer((_req, res) => res.writeHead(404).end());
      attach(server);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
  };
}
