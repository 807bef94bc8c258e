// The MCP sessions of /mcp (Streamable HTTP, MCP 2025-03-26 and later; docs/mcp.md "Server"). Session
// mode, not stateless: the brain's tools come and go (a node's devices, an installed skill), and only
// a session has the stream on which the server tells its client `notifications/tools/list_changed`.
// An `initialize` without a session id opens one (its id in the Mcp-Session-Id header); any other
// request names its session. Sessions are bounded: past `maxSessions` the least recently used is
// closed, and one that made no request for `idleMs` is closed by the next request's sweep (a desktop
// app that was killed never sends DELETE; an open notification stream alone does not count as use).
// A closed session's client gets 404 and initializes again.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ServerSdk } from './sdk';
import { createBrainServer, type ToolPlane } from './brain-server';

export interface HttpSessionsDeps {
  sdk: () => Promise<ServerSdk>;
  plane: ToolPlane;
  logger: Logger;
  now: () => number;
  maxSessions: number;
  idleMs: number;
}

interface Session {
  server: Server;
  transport: StreamableHTTPServerTransport;
  lastUsed: number;
}

/**
 * A refusal before any session takes the request (no session, an unknown one, the brain stopping):
 * in the API's error envelope, like every HTTP error before MCP takes over. MCP clients read the
 * status (404: initialize again).
 */
function refuse(res: ServerResponse, status: number, code: 'BAD_REQUEST' | 'NOT_FOUND' | 'UNAVAILABLE', message: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: { code, message, details: null } }));
}

const sessionHeader = (req: IncomingMessage): string | undefined => {
  const v = req.headers['mcp-session-id'];
  return Array.isArray(v) ? v[0] : v;
};

export class HttpSessions {
  private readonly sessions = new Map<string, Session>();
  private stopped = false;
  /** Changes of the tool list waiting to be told (one notification per burst). */
  private telling = false;

  constructor(private readonly deps: HttpSessionsDeps) {}

  get size(): number {
    return this.sessions.size;
  }

  /** Answers one /mcp request on the raw request and response; `body` is the parsed JSON of a POST. */
  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sdk = await this.deps.sdk();
    this.sweep();
    const id = sessionHeader(req);
    if (id !== undefined) {
      const session = this.sessions.get(id);
      if (!session) return refuse(res, 404, 'NOT_FOUND', `MCP session ${id} not found (closed, expired or from before a restart); initialize a new one`);
      // Use is a request (POST, DELETE); the GET that holds the notification stream open is not.
      if (req.method !== 'GET') session.lastUsed = this.deps.now();
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitialize(sdk, body)) return refuse(res, 400, 'BAD_REQUEST', 'no Mcp-Session-Id header: the first request of an MCP session is initialize');
    if (this.stopped) return refuse(res, 503, 'UNAVAILABLE', 'the brain is stopping');
    return this.open(sdk, req, res, body);
  }

  private async open(sdk: ServerSdk, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    this.evictFor(1);
    const sessionId = randomUUID();
    const transport = new sdk.StreamableHTTPServerTransport({ sessionIdGenerator: () => sessionId });
    const server = createBrainServer(sdk, this.deps.plane, sessionId);
    transport.onclose = () => {
      if (this.sessions.get(sessionId)?.transport === transport) this.sessions.delete(sessionId);
    };
    this.sessions.set(sessionId, { server, transport, lastUsed: this.deps.now() });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    // An initialize the transport refused (a bad protocol version, a batch) opened no session.
    if (transport.sessionId === undefined) await this.close(sessionId);
    else this.deps.logger.debug({ session: sessionId, sessions: this.sessions.size }, 'MCP session opened');
  }

  /** Tells every session's client the tool list changed; changes of one tick are told once. */
  toolsChanged(): void {
    if (this.telling || this.sessions.size === 0) return;
    this.telling = true;
    setImmediate(() => {
      this.telling = false;
      for (const [id, session] of this.sessions) {
        session.server.sendToolListChanged().catch((err: unknown) => this.deps.logger.debug({ err, session: id }, 'could not tell an MCP session that tools changed'));
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
  }

  private async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    await session.server.close();
  }

  private drop(id: string, why: string): void {
    this.deps.logger.info({ session: id, why }, 'closing an MCP session');
    this.close(id).catch((err: unknown) => this.deps.logger.warn({ err, session: id }, 'closing an MCP session failed'));
  }

  /** Closes sessions idle past idleMs. */
  private sweep(): void {
    const cutoff = this.deps.now() - this.deps.idleMs;
    for (const [id, s] of this.sessions) if (s.lastUsed < cutoff) this.drop(id, 'idle');
  }

  /** Makes room for `n` new sessions by closing the least recently used. */
  private evictFor(n: number): void {
    const excess = this.sessions.size + n - this.deps.maxSessions;
    if (excess <= 0) return;
    const oldest = [...this.sessions].sort((a, b) => a[1].lastUsed - b[1].lastUsed).slice(0, excess);
    for (const [id] of oldest) {
      this.drop(id, `more than ${this.deps.maxSessions} sessions`);
    }
  }
}

function isInitialize(sdk: ServerSdk, body: unknown): boolean {
  return Array.isArray(body) ? body.some((m) => sdk.isInitializeRequest(m)) : sdk.isInitializeRequest(body);
}
