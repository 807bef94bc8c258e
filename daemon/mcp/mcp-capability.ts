// The MCP capability (issue 16, spec 1.12; docs/mcp.md): MCP both ways. As a server, the brain's tools
// over Streamable HTTP at /mcp (and over stdio through `svc mcp`, which bridges to /mcp), each call
// through the permission plane and scrubbed of vault secrets; as a client, the external MCP servers of
// settings.json `mcp.servers` and of `svc mcp servers add`, whose tools join the registry as
// `mcp_<server>_<tool>`. The SDK loads on first use (sdk.ts): an idle brain with no server declared
// and no /mcp client never evaluates it.
import { Type } from '@sinclair/typebox';
import { defineCapability } from '../kernel/capability';
import { routes } from '../http/route-kit';
import { McpServerDeclaration } from '../../protocol/mcp';
import { loadClientSdk, loadServerSdk } from './sdk';
import { McpClients } from './mcp-clients';
import { HttpSessions } from './http-sessions';
import { MCP_MIGRATIONS, ServerStore } from './server-store';
import { ServersAdmin, declarationProblems } from './servers-admin';
import { mcpEndpoint, mcpServerRoutes } from './mcp-routes';

export const MCP = 'mcp';

export const McpSettings = Type.Object(
  {
    server: Type.Object(
      {
        enabled: Type.Boolean({ default: true, description: 'Serve the brain\'s tools over MCP at /mcp (and so through `svc mcp`); admin token only' }),
        max_sessions: Type.Integer({ minimum: 1, maximum: 256, default: 16, description: 'MCP sessions kept at once; past it the least recently used is closed' }),
        session_idle_minutes: Type.Integer({ minimum: 1, maximum: 10_080, default: 60, description: 'An MCP session unused this long is closed' }),
      },
      { additionalProperties: false, default: {} },
    ),
    servers: Type.Array(McpServerDeclaration, { maxItems: 64, default: [], description: 'External MCP servers whose tools the brain offers (docs/mcp.md); secrets as {"vault": "<namespace>/<key>"}' }),
    call_timeout_ms: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000, description: 'A call to an external MCP tool fails after this long' }),
    connect_timeout_ms: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000, description: 'Connecting to an external MCP server (initialize, tools/list) fails after this long' }),
  },
  { additionalProperties: false, default: {}, description: 'MCP server and clients (docs/mcp.md)' },
);

export const mcpCapability = defineCapability({
  name: MCP,
  settings: McpSettings,
  create: (context, settings) => {
    const problems = declarationProblems(settings.servers);
    if (problems.length > 0) throw new Error(`settings.json: ${problems.join('; ')}`);
    const clients = new McpClients({ tools: context.tools, vault: context.vault, sdk: loadClientSdk, logger: context.logger, clock: context.clock, callTimeoutMs: settings.call_timeout_ms, connectTimeoutMs: settings.connect_timeout_ms });
    const admin = new ServersAdmin({ staticServers: settings.servers, store: new ServerStore(context.store, () => context.clock.now()), clients, vault: context.vault });
    const plane = { tools: context.tools, permissions: context.permissions, secrets: context.core.secrets, logger: context.logger };
    const sessions = new HttpSessions({ sdk: loadServerSdk, plane, logger: context.logger, now: () => context.clock.now(), maxSessions: settings.server.max_sessions, idleMs: settings.server.session_idle_minutes * 60_000 });
    // One listener for the brain's life (the registry keeps listeners); it tells whichever sessions are open.
    if (settings.server.enabled) context.tools.onChange(() => sessions.toolsChanged());
    return {
      migrations: MCP_MIGRATIONS,
      // Sessions stop first (parts stop in reverse): their streams end before the clients' tools go.
      parts: [
        { name: 'clients', start: () => admin.start(), stop: () => clients.stop() },
        { name: 'sessions', stop: () => sessions.stop() },
      ],
      routes: [routes(mcpServerRoutes(admin)), ...(settings.server.enabled ? [routes(mcpEndpoint({ sessions, sdk: loadServerSdk, logger: context.logger }))] : [])],
    };
  },
});
