// One external MCP server the brain is a client of (docs/mcp.md "Client"): it connects (a child process
// over stdio, or Streamable HTTP), lists the server's tools and registers each in the tool registry
// under owner `mcp:<name>` with the declared safety level, follows `notifications/tools/list_changed`,
// and when the connection is lost — a crashed child, a refused request — takes the tools away and
// tries again on the backoff schedule (server-config.ts) until the brain stops. A call waits at most
// `callTimeoutMs`: a hanging server fails the tool call, never the turn.
import type { Logger } from 'pino';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Clock, SecretStore } from '../kernel/capability';
import type { ToolRegistry } from '../kernel/tool-registry';
import { ToolFailure, type Tool, type ToolOutcome } from '../kernel/tool';
import { DEFAULT_SERVER_SAFETY, type McpServerDeclaration, type McpServerStatus, type McpTestResult, type ServerState } from '../../protocol/mcp';
import { IMPLEMENTATION, type ClientSdk } from './sdk';
import { describeTarget, reconnectDelay, transportParams, type TransportParams } from './server-config';
import { brainToolNames } from './tool-names';
import { toolParameters } from './json-schema';
import { remoteOutcome } from './remote-result';

export interface ConnectionDeps {
  declaration: McpServerDeclaration;
  source: McpServerStatus['source'];
  tools: Pick<ToolRegistry, 'register' | 'unregister' | 'ownerOf'>;
  vault: Pick<SecretStore, 'get' | 'status'>;
  sdk: () => Promise<ClientSdk>;
  logger: Logger;
  clock: Clock;
  callTimeoutMs: number;
  connectTimeoutMs: number;
  random: () => number;
}

/** One remote tool as the server lists it (the fields the brain reads). */
interface RemoteTool {
  name: string;
  description?: string | undefined;
  title?: string | undefined;
  inputSchema: unknown;
}

interface Live {
  client: Client;
  stderr: StderrTail;
  /** A JSON-RPC error answer (the server is there) as opposed to a failed request (it may not be). */
  isAnswer: (err: unknown) => boolean;
}

/** Most pages of tools/list read in one listing, and most tools kept from one server. */
const MAX_PAGES = 20;
const MAX_TOOLS = 500;
const MAX_DESCRIPTION = 1024;

export const ownerOf = (server: string): string => `mcp:${server}`;

/** The last lines a stdio server wrote on stderr: why it died, for last_error. */
class StderrTail {
  private text = '';
  add(chunk: string): void {
    this.text = (this.text + chunk).slice(-2000);
  }
  last(): string {
    return this.text.trim().split('\n').slice(-3).join(' | ').slice(-500);
  }
}

/**
 * Opens a connected client (initialize done) for `params`; the caller closes it. `opening` gets the
 * client before the handshake, so a stop can close it (and end its child) while it connects.
 */
export async function openClient(sdk: ClientSdk, params: TransportParams, timeoutMs: number, onStderr: (chunk: string) => void, opening: (client: Client) => void = () => {}): Promise<Client> {
  const client = new sdk.Client(IMPLEMENTATION, { capabilities: {} });
  opening(client);
  if (params.kind === 'http') {
    await client.connect(new sdk.StreamableHTTPClientTransport(new URL(params.url), { requestInit: { headers: params.headers } }), { timeout: timeoutMs });
    return client;
  }
  // No shell; the child gets HOME, LOGNAME, PATH, SHELL, TERM, USER and its declared env, nothing of the brain's.
  const transport = new sdk.StdioClientTransport({ command: params.command, args: params.args, env: params.env, stderr: 'pipe', ...(params.cwd === undefined ? {} : { cwd: params.cwd }) });
  transport.stderr?.on('data', (d: Buffer) => onStderr(d.toString('utf8')));
  try {
    await client.connect(transport, { timeout: timeoutMs });
  } catch (err) {
    await transport.close();
    throw err;
  }
  return client;
}

/** Every page of tools/list (bounded). */
export async function listAll(client: Client, timeoutMs: number): Promise<RemoteTool[]> {
  const tools: RemoteTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES && tools.length < MAX_TOOLS; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tools.slice(0, MAX_TOOLS);
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class ServerConnection {
  private state: ServerState = 'connecting';
  private lastError: string | null = null;
  private live: Live | null = null;
  /** The client of a connect still in its handshake. */
  private opening: Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private connections = 0;
  private connectedAt: number | null = null;
  private stopped = false;
  /** Bumped by every connect and by stop: callbacks of an older connection are ignored. */
  private generation = 0;
  /** Registered tools: brain name → remote name and what they were registered from. */
  private readonly registered = new Map<string, { remote: string; fingerprint: string }>();
  private listing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: ConnectionDeps) {}

  get name(): string {
    return this.deps.declaration.name;
  }

  get declaration(): McpServerDeclaration {
    return this.deps.declaration;
  }

  /** Begins connecting (in the background); a disabled server stays disabled. */
  start(): void {
    if (this.deps.declaration.enabled === false) {
      this.state = 'disabled';
      return;
    }
    void this.connect();
  }

  /** Takes the tools away, stops retrying and closes the connection (a stdio child is ended). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.generation++;
    clearTimeout(this.timer);
    this.unregisterAll();
    const live = this.live;
    this.live = null;
    await Promise.all([live?.client.close(), this.opening?.close()]);
  }

  /** A failed server tries again now instead of at its next backoff step (a secret it lacked was just set). */
  retryNow(): void {
    if (this.state !== 'failed' || this.stopped) return;
    clearTimeout(this.timer);
    void this.connect();
  }

  status(): McpServerStatus {
    const d = this.deps.declaration;
    return {
      name: d.name,
      source: this.deps.source,
      transport: d.url === undefined ? 'stdio' : 'http',
      target: describeTarget(d),
      safety: d.safety ?? DEFAULT_SERVER_SAFETY,
      state: this.state,
      last_error: this.lastError,
      tools: [...this.registered.keys()].sort(),
      connected_at: this.connectedAt,
      reconnects: Math.max(0, this.connections - 1),
    };
  }

  /** Calls a remote tool, failing after callTimeoutMs or when `signal` aborts (the turn was cancelled). */
  async call(remote: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> {
    const live = this.live;
    if (!live) throw new ToolFailure(`MCP server ${this.name} is not connected (${this.state}${this.lastError ? `: ${this.lastError}` : ''})`);
    const timeoutMs = this.deps.callTimeoutMs;
    const abort = new AbortController();
    const onAbort = (): void => abort.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ToolFailure(`MCP server ${this.name} did not answer ${remote} within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const result = await Promise.race([live.client.callTool({ name: remote, arguments: args }, undefined, { timeout: timeoutMs, signal: abort.signal }), timedOut]);
      return remoteOutcome(this.name, remote, result);
    } catch (err) {
      if (err instanceof ToolFailure) throw err;
      // A failed HTTP request (the server went away, or restarted and forgot the session) loses the
      // connection: the tools go, a reconnect follows. A JSON-RPC error is the server's answer.
      if (this.deps.declaration.url !== undefined && !live.isAnswer(err)) this.lost(live, `the server did not answer: ${messageOf(err)}`);
      throw new ToolFailure(`MCP server ${this.name} (${remote}): ${messageOf(err)}`);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      // Still pending (timed out): the SDK sends notifications/cancelled for it and forgets it.
      abort.abort();
    }
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    this.state = 'connecting';
    const stderr = new StderrTail();
    let client: Client | undefined;
    try {
      const sdk = await this.deps.sdk();
      client = await openClient(sdk, transportParams(this.deps.declaration, this.deps.vault), this.deps.connectTimeoutMs, (chunk) => stderr.add(chunk), (c) => (this.opening = c));
      this.opening = undefined;
      if (generation !== this.generation) return void (await client.close());
      const live: Live = { client, stderr, isAnswer: (err) => err instanceof sdk.McpError };
      this.live = live;
      client.onclose = () => this.lost(live, 'the server closed the connection');
      client.onerror = (err) => this.deps.logger.debug({ err, server: this.name }, 'MCP client transport error');
      client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => this.relist(live));
      await this.list(live);
      if (generation !== this.generation) return;
      this.state = 'connected';
      this.connectedAt = this.deps.clock.now();
      this.connections++;
      this.attempt = 0;
      this.lastError = null;
      this.deps.logger.info({ server: this.name, tools: this.registered.size }, 'MCP server connected');
    } catch (err) {
      this.opening = undefined;
      if (generation !== this.generation) return;
      if (this.live?.client === client) this.live = null;
      await client?.close();
      this.failed(`${messageOf(err)}${stderr.last() ? ` (stderr: ${stderr.last()})` : ''}`);
    }
  }

  /** The connection `live` ended: unless it is already replaced or the brain is stopping, try again. */
  private lost(live: Live, why: string): void {
    if (this.live !== live || this.stopped) return;
    this.live = null;
    void live.client.close();
    const tail = live.stderr.last();
    this.failed(`${why}${tail ? ` (stderr: ${tail})` : ''}`);
  }

  private failed(message: string): void {
    this.unregisterAll();
    this.state = 'failed';
    this.lastError = message;
    this.connectedAt = null;
    if (this.stopped) return;
    const delay = reconnectDelay(this.attempt++, this.deps.random);
    this.deps.logger.warn({ server: this.name, err: message, retry_in_ms: delay }, 'MCP server unavailable; reconnecting');
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.connect(), delay);
    this.timer.unref();
  }

  /** Follows list_changed: one listing at a time, in order. */
  private relist(live: Live): Promise<void> {
    this.listing = this.listing.then(() => this.list(live)).catch((err: unknown) => {
      if (this.live !== live) return;
      this.lastError = `listing tools after list_changed: ${messageOf(err)}`;
      this.deps.logger.warn({ err, server: this.name }, 'MCP tools/list failed');
    });
    return this.listing;
  }

  private async list(live: Live): Promise<void> {
    const remotes = await listAll(live.client, this.deps.connectTimeoutMs);
    if (this.live !== live) return;
    this.sync(remotes);
  }

  /** Registers what is new or changed, unregisters what went; a name another owner holds is skipped and said. */
  private sync(remotes: RemoteTool[]): void {
    const names = brainToolNames(this.name, remotes.map((t) => t.name));
    const wanted = new Map<string, { tool: RemoteTool; fingerprint: string }>();
    for (const tool of remotes) wanted.set(names.get(tool.name)!, { tool, fingerprint: JSON.stringify([tool.name, tool.description, tool.inputSchema]) });
    for (const [name, held] of this.registered) {
      if (wanted.get(name)?.fingerprint === held.fingerprint) continue;
      this.deps.tools.unregister(name);
      this.registered.delete(name);
    }
    const skipped: string[] = [];
    for (const [name, { tool, fingerprint }] of wanted) {
      if (this.registered.has(name)) continue;
      const owner = this.deps.tools.ownerOf(name);
      if (owner !== undefined) {
        skipped.push(`${name} (taken by ${owner})`);
        continue;
      }
      this.deps.tools.register(ownerOf(this.name), this.toolOf(name, tool));
      this.registered.set(name, { remote: tool.name, fingerprint });
    }
    if (skipped.length > 0) this.lastError = `tools not registered: ${skipped.join(', ')}`;
  }

  private toolOf(name: string, remote: RemoteTool): Tool {
    const about = remote.description ?? remote.title ?? remote.name;
    return {
      spec: { name, description: `${about.slice(0, MAX_DESCRIPTION)} (tool ${remote.name} of MCP server ${this.name})`, parameters: toolParameters(remote.inputSchema) },
      safety: this.deps.declaration.safety ?? DEFAULT_SERVER_SAFETY,
      run: (args, ctx) => this.call(remote.name, args as Record<string, unknown>, ctx.signal),
    };
  }

  private unregisterAll(): void {
    for (const name of this.registered.keys()) this.deps.tools.unregister(name);
    this.registered.clear();
  }
}

/** `svc mcp servers test`: connects once, lists the tools with the names they get, and closes. */
export async function probeServer(sdk: ClientSdk, declaration: McpServerDeclaration, vault: Pick<SecretStore, 'get' | 'status'>, timeoutMs: number): Promise<McpTestResult> {
  const stderr = new StderrTail();
  let client: Client | undefined;
  try {
    client = await openClient(sdk, transportParams(declaration, vault), timeoutMs, (chunk) => stderr.add(chunk));
    const tools = await listAll(client, timeoutMs);
    const names = brainToolNames(declaration.name, tools.map((t) => t.name));
    return { name: declaration.name, ok: true, error: null, tools: tools.map((t) => ({ name: names.get(t.name)!, remote_name: t.name, description: (t.description ?? t.title ?? '').slice(0, MAX_DESCRIPTION) })) };
  } catch (err) {
    return { name: declaration.name, ok: false, tools: [], error: `${messageOf(err)}${stderr.last() ? ` (stderr: ${stderr.last()})` : ''}` };
  } finally {
    await client?.close();
  }
}
