// What /api/mcp/servers and `svc mcp servers` do (docs/mcp.md "CLI"): list the declared servers with
// their state, add one (kept in the capability's table, connected at once), remove one added that way
// (settings.json's are changed in settings.json), test one, and put a secret in the vault for a
// declaration to reference. Each change is applied to the live connections without a restart.
import type { SecretStore } from '../kernel/capability';
import { AppError, notFound } from '../kernel/errors';
import { MCP_VAULT_NAMESPACE, transportProblem, type McpServerDeclaration, type McpServerStatus, type McpTestResult, type VaultRef } from '../../protocol/mcp';
import type { DeclaredServer, McpClients } from './mcp-clients';
import type { ServerStore } from './server-store';

export interface ServersAdminDeps {
  /** settings.json `mcp.servers` (frozen). */
  staticServers: readonly McpServerDeclaration[];
  store: Pick<ServerStore, 'list' | 'add' | 'remove'>;
  clients: Pick<McpClients, 'apply' | 'list' | 'get' | 'declaration' | 'test' | 'retryFailed'>;
  vault: Pick<SecretStore, 'set' | 'status'>;
}

/** Duplicate names and transport problems of settings.json's servers, as lines naming the index. */
export function declarationProblems(servers: readonly McpServerDeclaration[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  servers.forEach((d, i) => {
    if (seen.has(d.name)) out.push(`mcp.servers[${i}]: the name ${d.name} is used twice`);
    seen.add(d.name);
    const problem = transportProblem(d);
    if (problem) out.push(`mcp.servers[${i}] (${d.name}): ${problem}`);
  });
  return out;
}

export class ServersAdmin {
  constructor(private readonly deps: ServersAdminDeps) {}

  /** Every declared server: settings.json's first, then those added through the API. */
  declared(): DeclaredServer[] {
    return [...this.deps.staticServers.map((declaration) => ({ declaration, source: 'settings' as const })), ...this.deps.store.list().map((declaration) => ({ declaration, source: 'cli' as const }))];
  }

  /** Connects every declared server (the capability's start). */
  start(): Promise<void> {
    return this.deps.clients.apply(this.declared());
  }

  list(): McpServerStatus[] {
    return this.deps.clients.list();
  }

  async add(declaration: McpServerDeclaration): Promise<McpServerStatus> {
    const problem = transportProblem(declaration);
    if (problem) throw new AppError('BAD_REQUEST', `MCP server ${declaration.name}: ${problem}`, { field: 'command' });
    const clash = this.declared().find((s) => s.declaration.name === declaration.name);
    if (clash) throw new AppError('CONFLICT', `an MCP server named ${declaration.name} is already declared (${clash.source === 'settings' ? 'in settings.json' : 'through svc mcp servers add'})`, { name: declaration.name, source: clash.source });
    if (!(await this.deps.store.add(declaration))) throw new AppError('CONFLICT', `an MCP server named ${declaration.name} was just added`, { name: declaration.name });
    await this.deps.clients.apply(this.declared());
    return this.deps.clients.get(declaration.name)!;
  }

  async remove(name: string): Promise<void> {
    if (this.deps.staticServers.some((d) => d.name === name)) {
      throw new AppError('CONFLICT', `MCP server ${name} is declared in settings.json (mcp.servers); remove it there and restart the brain`, { name, source: 'settings' });
    }
    if (!(await this.deps.store.remove(name))) throw notFound('mcp server', name);
    await this.deps.clients.apply(this.declared());
  }

  async test(name: string): Promise<McpTestResult> {
    const declaration = this.deps.clients.declaration(name) ?? this.declared().find((s) => s.declaration.name === name)?.declaration;
    if (!declaration) throw notFound('mcp server', name);
    return this.deps.clients.test(declaration);
  }

  /** Puts `value` in the vault under mcp/<key>; servers that failed (for lack of it) try again now. */
  setSecret(key: string, value: string): { ref: VaultRef } {
    const state = this.deps.vault.status().state;
    if (state !== 'ok') throw new AppError('UNAVAILABLE', `the vault is ${state}; secrets cannot be stored now`);
    this.deps.vault.set(MCP_VAULT_NAMESPACE, key, value);
    this.deps.clients.retryFailed();
    return { ref: { vault: `${MCP_VAULT_NAMESPACE}/${key}` } };
  }
}
