// Every external MCP server the brain is a client of (docs/mcp.md "Client"): the static ones of
// settings.json and those added through the API, one ServerConnection each. `apply` brings the set to
// a new list — connecting what is new, closing what went, reconnecting what changed — so an addition
// or removal takes effect without a restart. Nothing loads the MCP SDK until a server is declared.
import { OneAtATime } from '../kernel/one-at-a-time';
import type { McpServerDeclaration, McpServerStatus, McpTestResult } from '../../protocol/mcp';
import { ServerConnection, probeServer, type ConnectionDeps } from './server-connection';

export interface DeclaredServer {
  declaration: McpServerDeclaration;
  source: McpServerStatus['source'];
}

/** What every connection shares (server-connection.ts ConnectionDeps without the server); `random` defaults to Math.random. */
export type McpClientsDeps = Omit<ConnectionDeps, 'declaration' | 'source' | 'random'> & { random?: () => number };

export class McpClients {
  private readonly connections = new Map<string, { connection: ServerConnection; source: DeclaredServer['source'] }>();
  private stopped = false;
  private readonly applying = new OneAtATime();

  constructor(private readonly deps: McpClientsDeps) {}

  /** Makes the connected set `servers`, one change after another: unchanged ones keep their connection. */
  apply(servers: readonly DeclaredServer[]): Promise<void> {
    return this.applying.run(() => this.applyNow(servers));
  }

  private async applyNow(servers: readonly DeclaredServer[]): Promise<void> {
    if (this.stopped) return;
    const wanted = new Map(servers.map((s) => [s.declaration.name, s]));
    const closing: Promise<void>[] = [];
    for (const [name, held] of this.connections) {
      const next = wanted.get(name);
      if (next && next.source === held.source && JSON.stringify(next.declaration) === JSON.stringify(held.connection.declaration)) continue;
      this.connections.delete(name);
      closing.push(held.connection.stop());
    }
    // A changed server's old tools are gone before its new connection registers the same names.
    await Promise.all(closing);
    for (const server of servers) {
      if (this.connections.has(server.declaration.name)) continue;
      const connection = new ServerConnection({ ...this.deps, random: this.deps.random ?? Math.random, declaration: server.declaration, source: server.source });
      this.connections.set(server.declaration.name, { connection, source: server.source });
      connection.start();
    }
  }

  list(): McpServerStatus[] {
    return [...this.connections.values()].map((c) => c.connection.status());
  }

  get(name: string): McpServerStatus | undefined {
    return this.connections.get(name)?.connection.status();
  }

  declaration(name: string): McpServerDeclaration | undefined {
    return this.connections.get(name)?.connection.declaration;
  }

  /** Connects to `declaration` once, apart from the live connection, and lists its tools. */
  async test(declaration: McpServerDeclaration): Promise<McpTestResult> {
    return probeServer(await this.deps.sdk(), declaration, this.deps.vault, this.deps.connectTimeoutMs);
  }

  /** Failed servers try again now. */
  retryFailed(): void {
    for (const c of this.connections.values()) c.connection.retryNow();
  }

  /** Closes every connection (stdio children end) and stops all retries. */
  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map((c) => c.connection.stop()));
  }
}
