// The brain's HTTP listener (kernel port daemon/kernel/listener.ts): the one http.Server fastify made
// listens on the first host, and every further host (::1 next to 127.0.0.1, :: next to 0.0.0.0) is a
// plain TCP acceptor that hands its connections to that server, so all addresses share one set of
// routes, timeouts and WebSockets. Listening elsewhere (the access mode, docs/access.md) closes the
// listening sockets and binds the new hosts on the same port; open connections are kept unless the
// new hosts no longer cover their local address (a LAN peer after `svc access localhost`), which are
// closed — WebSockets with 1001, then cut if they do not answer.
import { createServer, isIPv6, Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { covered, type ListenAddress, type ListenerPort } from '../kernel/listener';
import { OneAtATime } from '../kernel/one-at-a-time';

/** The part of a ws WebSocketServer the listener needs: which socket each WebSocket runs on. */
export interface WebSocketSource {
  on(event: 'connection', listener: (ws: ClosableSocket, request: IncomingMessage) => void): unknown;
}

export interface ClosableSocket {
  close(code: number, reason: string): void;
  terminate(): void;
  once(event: 'close', listener: () => void): unknown;
}

export interface HttpListenerOptions {
  /** Where to listen until listen() says otherwise. */
  hosts: readonly string[];
  /** 0 picks a free port once; every later bind reuses it. */
  port: number;
  pinnedHost: string | null;
  logger: Logger;
  /** How long a WebSocket told 1001 may take to close before its socket is cut. */
  closeGraceMs?: number;
}

/** A second host that this machine cannot bind (no IPv6 in a container): skipped, with a warning. */
const UNAVAILABLE = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EPROTONOSUPPORT']);
const PORT_ATTEMPTS = 5;

export class HttpListener implements ListenerPort {
  readonly pinnedHost: string | null;
  private hosts: string[];
  private port: number;
  private server: HttpServer | null = null;
  private acceptors: NetServer[] = [];
  private bound: ListenAddress[] = [];
  private started = false;
  private readonly sockets = new Set<Socket>();
  private readonly webSockets = new Map<Socket, ClosableSocket>();
  /** The response each connection is writing, so a caller that moved the listener still gets its answer. */
  private readonly inflight = new Map<Socket, ServerResponse>();
  /** Connections that carried a request a local proxy forwarded (the tunnel's). */
  private readonly forwarded = new WeakSet<Socket>();
  /** Connections already being closed (a WebSocket in its closing handshake): not counted or closed twice. */
  private readonly closing = new WeakSet<Socket>();
  private readonly handlers: ((addresses: ListenAddress[]) => void)[] = [];
  /** listen() calls run one after another: a rebind never overlaps another. */
  private readonly queue = new OneAtATime();

  constructor(private readonly options: HttpListenerOptions) {
    this.pinnedHost = options.pinnedHost;
    this.hosts = [...options.hosts];
    this.port = options.port;
  }

  /** The server fastify built and its WebSocket server; called once, before start(). */
  attach(server: HttpServer, webSockets: WebSocketSource): void {
    this.server = server;
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const socket = request.socket;
      if (isForwarded(request)) this.forwarded.add(socket);
      this.inflight.set(socket, response);
      response.once('close', () => {
        if (this.inflight.get(socket) === response) this.inflight.delete(socket);
      });
    });
    webSockets.on('connection', (ws, request) => {
      const socket = request.socket;
      if (isForwarded(request)) this.forwarded.add(socket);
      this.webSockets.set(socket, ws);
      ws.once('close', () => this.webSockets.delete(socket));
    });
  }

  addresses(): ListenAddress[] {
    return [...this.bound];
  }

  onListening(handler: (addresses: ListenAddress[]) => void): void {
    this.handlers.push(handler);
  }

  listen(hosts: readonly string[]): Promise<ListenAddress[]> {
    if (hosts.length === 0) return Promise.reject(new Error('listen needs at least one host'));
    return this.queue.run(() => (this.started ? this.rebind([...hosts]) : ((this.hosts = [...hosts]), [])));
  }

  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.bind(this.hosts, this.port);
        break;
      } catch (err) {
        // Port 0: the free port picked for the first host may be taken on another (::1); pick again.
        if (this.options.port !== 0 || code(err) !== 'EADDRINUSE' || attempt === PORT_ATTEMPTS) throw err;
      }
    }
    this.port = this.bound[0]?.port ?? this.port;
    this.started = true;
    this.announce();
  }

  /** Closes the extra acceptors; the http.Server itself is closed with the app. */
  async stop(): Promise<void> {
    this.started = false;
    await Promise.all(this.acceptors.map((a) => closeListening(a)));
    this.acceptors = [];
  }

  private async rebind(hosts: string[]): Promise<ListenAddress[]> {
    const previous = this.hosts;
    await this.unbind();
    try {
      await this.bind(hosts, this.port);
      this.hosts = hosts;
    } catch (err) {
      this.options.logger.error({ err, hosts, previous }, 'could not listen on the new hosts; listening where it did before');
      await this.bind(previous, this.port);
      throw err;
    }
    this.closeUncovered();
    this.announce();
    return this.addresses();
  }

  private async bind(hosts: readonly string[], port: number): Promise<void> {
    const server = this.server;
    if (!server) throw new Error('HttpListener.start() before attach()');
    // 0.0.0.0 and :: together: :: takes IPv6 only, or it would also claim the IPv4 port.
    const dual = hosts.includes('0.0.0.0') && hosts.includes('::');
    const [primary, ...rest] = hosts as [string, ...string[]];
    await listenOn(server, { host: primary, port, ipv6Only: dual && primary === '::' });
    const actual = (server.address() as AddressInfo).port;
    const bound: ListenAddress[] = [addressOf(primary, actual)];
    try {
      for (const host of rest) {
        const acceptor = createServer((socket) => server.emit('connection', socket));
        try {
          await listenOn(acceptor, { host, port: actual, ipv6Only: dual && host === '::' });
        } catch (err) {
          if (!UNAVAILABLE.has(code(err) ?? '')) throw err;
          this.options.logger.warn({ host, code: code(err) }, 'this machine cannot listen on this address; skipped');
          continue;
        }
        this.acceptors.push(acceptor);
        bound.push(addressOf(host, actual));
      }
    } catch (err) {
      await this.unbind();
      throw err;
    }
    this.bound = bound;
  }

  private async unbind(): Promise<void> {
    const server = this.server;
    await Promise.all(this.acceptors.map((a) => closeListening(a)));
    this.acceptors = [];
    this.bound = [];
    // net.Server's close, not http.Server's: that one would also drop idle keep-alive connections and
    // stop the timeout checks of the open ones; listening again restarts the checks on the same list.
    if (server?.listening) await closeListening(server);
  }

  closeForwarded(): number {
    const closed = this.closeWhere((socket) => this.forwarded.has(socket));
    if (closed > 0) this.options.logger.info({ closed }, 'closed connections a local proxy had forwarded');
    return closed;
  }

  /** Connections whose local address no bound host covers any more are closed. */
  private closeUncovered(): void {
    const closed = this.closeWhere((socket) => !covered(this.bound, socket.localAddress));
    if (closed > 0) this.options.logger.info({ closed }, 'closed connections to addresses the brain no longer listens on');
  }

  private closeWhere(close: (socket: Socket) => boolean): number {
    const grace = this.options.closeGraceMs ?? 1000;
    let closed = 0;
    for (const socket of this.sockets) {
      if (this.closing.has(socket) || !close(socket)) continue;
      this.closing.add(socket);
      closed++;
      const ws = this.webSockets.get(socket);
      const response = this.inflight.get(socket);
      if (!ws && response) {
        // The request being answered (the one that moved the listener, say) gets its answer, then the connection ends.
        if (!response.headersSent) response.setHeader('connection', 'close');
        response.once('close', () => socket.destroy());
        continue;
      }
      if (!ws) {
        socket.destroy();
        continue;
      }
      ws.close(1001, 'the brain no longer listens on this address');
      const timer = setTimeout(() => ws.terminate(), grace);
      timer.unref();
      ws.once('close', () => clearTimeout(timer));
    }
    return closed;
  }

  private announce(): void {
    const addresses = this.addresses();
    for (const handler of this.handlers) {
      try {
        handler(addresses);
      } catch (err) {
        this.options.logger.error({ err }, 'listening handler failed');
      }
    }
  }
}

/** A request a proxy passed on: Tailscale Serve sets X-Forwarded-For on every one (docs/access.md). */
const isForwarded = (request: IncomingMessage): boolean => request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined;

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

function addressOf(host: string, port: number): ListenAddress {
  return { host, family: isIPv6(host) ? 'IPv6' : 'IPv4', port };
}

function listenOn(server: NetServer, options: { host: string; port: number; ipv6Only: boolean }): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host: options.host, port: options.port, ipv6Only: options.ipv6Only, exclusive: true });
  });
}

/** Stops accepting: the listening socket closes at once; open connections are not waited for. */
function closeListening(server: NetServer): Promise<void> {
  return new Promise((resolve) => {
    NetServer.prototype.close.call(server);
    setImmediate(resolve);
  });
}
