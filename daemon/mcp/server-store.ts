// The external MCP servers added through the API (`svc mcp servers add`): kept in the brain's store, in
// a table of the capability's own, so an addition survives a restart without rewriting settings.json.
// settings.json `mcp.servers` holds the static ones; a name is one server across both. A declaration
// holds only vault references for secrets (protocol/mcp.ts ConfigValue), never their values.
import type { Migration, Store } from '../kernel/capability';
import type { McpServerDeclaration } from '../../protocol/mcp';

export const MCP_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'mcp_servers: external MCP servers added through the API',
    up: `CREATE TABLE mcp_servers (
      name TEXT PRIMARY KEY,
      declaration TEXT NOT NULL,
      created_at INTEGER NOT NULL
    )`,
  },
];

export class ServerStore {
  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  list(): McpServerDeclaration[] {
    return this.store.all<{ declaration: string }>('SELECT declaration FROM mcp_servers ORDER BY created_at, name').map((r) => JSON.parse(r.declaration) as McpServerDeclaration);
  }

  /** False when a server of that name is stored already. */
  async add(declaration: McpServerDeclaration): Promise<boolean> {
    return this.store.write((db) => db.run('INSERT OR IGNORE INTO mcp_servers (name, declaration, created_at) VALUES (?, ?, ?)', [declaration.name, JSON.stringify(declaration), this.now()]).changes === 1);
  }

  /** False when no server of that name is stored. */
  async remove(name: string): Promise<boolean> {
    return this.store.write((db) => db.run('DELETE FROM mcp_servers WHERE name = ?', [name]).changes === 1);
  }
}
