// The MCP SDK, loaded on first use (kernel/lazy-module.ts): it and what it pulls in (zod, ajv, hono's
// node adapter) are ~MiBs an idle brain with no MCP server declared and no /mcp client never needs.
// The client half loads when a server is declared (or tested), the server half on the first /mcp
// request; esbuild puts each import() in a chunk of its own (build.mjs, splitting).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolRequestSchema, ErrorCode, isInitializeRequest, ListToolsRequestSchema, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { lazyModule } from '../kernel/lazy-module';

export interface ClientSdk {
  Client: typeof Client;
  StdioClientTransport: typeof StdioClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
  McpError: typeof McpError;
}

export interface ServerSdk {
  Server: typeof Server;
  StreamableHTTPServerTransport: typeof StreamableHTTPServerTransport;
  ListToolsRequestSchema: typeof ListToolsRequestSchema;
  CallToolRequestSchema: typeof CallToolRequestSchema;
  McpError: typeof McpError;
  ErrorCode: typeof ErrorCode;
  isInitializeRequest: typeof isInitializeRequest;
}

export const loadClientSdk = lazyModule(async (): Promise<ClientSdk> => {
  const [client, stdio, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Client: client.Client, StdioClientTransport: stdio.StdioClientTransport, StreamableHTTPClientTransport: http.StreamableHTTPClientTransport, ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema, McpError: types.McpError };
});

export const loadServerSdk = lazyModule(async (): Promise<ServerSdk> => {
  const [server, http, types] = await Promise.all([import('@modelcontextprotocol/sdk/server/index.js'), import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('@modelcontextprotocol/sdk/types.js')]);
  return {
    Server: server.Server,
    StreamableHTTPServerTransport: http.StreamableHTTPServerTransport,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    CallToolRequestSchema: types.CallToolRequestSchema,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    isInitializeRequest: types.isInitializeRequest,
  };
});

/** The name and version the brain gives as an MCP client and server. */
export const IMPLEMENTATION = { name: 'svc', version: '1' } as const;
