// /mcp (the brain's tools over MCP Streamable HTTP) and /api/mcp (the external servers; docs/mcp.md).
// Both take the admin token only (the default of daemon/http/auth.ts): a paired phone or browser holds
// a device token for its own session, and MCP would hand it every tool of the brain. Authentication,
// the 503 while stopping, the body limit and malformed JSON are answered by the HTTP layer in the
// error envelope before MCP takes over; from there the SDK's transport owns the raw request and
// response (reply.hijack()), answering in JSON-RPC.
import type { TypedRoutes } from '../http/route-kit';
import { ErrorEnvelope } from '../../protocol/errors';
import { McpSecretBody, McpSecretParams, McpSecretSaved, McpServerDeclaration, McpServerList, McpServerParams, McpServerRemoved, McpServerStatus, McpTestResult } from '../../protocol/mcp';
import type { HttpSessions } from './http-sessions';
import type { ServersAdmin } from './servers-admin';
import type { ServerSdk } from './sdk';
import type { Logger } from 'pino';

const errors = { 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, 503: ErrorEnvelope };

export interface McpEndpointDeps {
  sessions: Pick<HttpSessions, 'handle'>;
  /** Loaded before the request is taken over, so a failed load is still a 500 in the envelope. */
  sdk: () => Promise<ServerSdk>;
  logger: Logger;
}

export const mcpEndpoint =
  (deps: McpEndpointDeps): TypedRoutes =>
  async (app) => {
    app.route({
      method: ['GET', 'POST', 'DELETE'],
      url: '/mcp',
      handler: async (request, reply) => {
        await deps.sdk();
        reply.hijack();
        const res = reply.raw;
        try {
          await deps.sessions.handle(request.raw, res, request.body);
        } catch (err) {
          deps.logger.error({ err, method: request.method }, 'MCP request failed');
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: { code: 'INTERNAL', message: 'the MCP request failed; the brain logged why', details: null } }));
          else res.end();
        }
      },
    });
  };

export const mcpServerRoutes =
  (admin: ServersAdmin): TypedRoutes =>
  async (app) => {
    app.get('/api/mcp/servers', { schema: { response: { 200: McpServerList } } }, async () => ({ servers: admin.list() }));
    app.post('/api/mcp/servers', { schema: { body: McpServerDeclaration, response: { 201: McpServerStatus, ...errors } } }, async (request, reply) => reply.status(201).send(await admin.add(request.body)));
    app.delete('/api/mcp/servers/:name', { schema: { params: McpServerParams, response: { 200: McpServerRemoved, ...errors } } }, async (request) => {
      await admin.remove(request.params.name);
      return { removed: request.params.name };
    });
    app.post('/api/mcp/servers/:name/test', { schema: { params: McpServerParams, response: { 200: McpTestResult, ...errors } } }, async (request) => admin.test(request.params.name));
    app.put('/api/mcp/secrets/:key', { schema: { params: McpSecretParams, body: McpSecretBody, response: { 200: McpSecretSaved, ...errors } } }, async (request) => admin.setSecret(request.params.key, request.body.value));
  };
