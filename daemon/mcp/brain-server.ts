// The brain's tools as an MCP server (docs/mcp.md "Server"): tools/list offers every tool of the
// registry except those the brain itself takes from external MCP servers (owner `mcp:*`: offering
// them again would let two brains that list each other call in a loop), and tools/call runs one
// through the same permission plane as a turn's calls — with `turnId` `mcp:<client>:<n>`, so an
// approval runs the held call and no turn is continued. A call that needs approval answers (as a
// result, not a protocol error) that it is pending, with the request id; a refused one is isError
// with the reason; every result is scrubbed of vault secrets.
import type { Logger } from 'pino';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { SecretRedactor } from '../kernel/capability';
import type { ToolRegistry } from '../kernel/tool-registry';
import { outsideTurnId, type PermissionHook } from '../kernel/permissions';
import { ToolFailure } from '../kernel/tool';
import { IMPLEMENTATION, type ServerSdk } from './sdk';

export interface ToolPlane {
  tools: Pick<ToolRegistry, 'get' | 'names' | 'ownerOf' | 'problems'>;
  permissions: PermissionHook;
  secrets: SecretRedactor;
  logger: Logger;
}

/** The session the approvals list shows for calls that came over MCP. */
export const MCP_SESSION = 'mcp';
/** Cap on one result's JSON text: a tool cannot flood an MCP client's context either. */
export const MAX_RESULT_CHARS = 64_000;

/** An MCP tools/call result (the fields the brain sets). */
export interface CallResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

const offered = (plane: ToolPlane, name: string): boolean => plane.tools.get(name) !== undefined && !(plane.tools.ownerOf(name) ?? '').startsWith('mcp:');

/** tools/list: every offered tool with its JSON-schema arguments (TypeBox schemas are JSON schema). */
export function listTools(plane: ToolPlane): { name: string; description: string; inputSchema: { type: 'object'; [k: string]: unknown } }[] {
  return plane.tools
    .names()
    .filter((name) => offered(plane, name))
    .sort()
    .map((name) => {
      const spec = plane.tools.get(name)!.spec;
      // Through JSON: TypeBox's kind markers are symbols, which an MCP client has no use for.
      const schema = JSON.parse(JSON.stringify(spec.parameters)) as Record<string, unknown>;
      return { name, description: spec.description, inputSchema: { ...schema, type: 'object' } };
    });
}

const text = (plane: ToolPlane, status: string, summary: string, extra: Record<string, unknown> = {}, isError = false): CallResult => {
  const clean = plane.secrets.scrub(summary);
  const structured = plane.secrets.scrubValue({ status, summary: clean, ...extra });
  let json = JSON.stringify(structured);
  if (json.length > MAX_RESULT_CHARS) json = JSON.stringify({ status, summary: clean.slice(0, 2000), truncated: true });
  return { content: [{ type: 'text', text: clean }, ...(Object.keys(extra).length > 0 ? [{ type: 'text' as const, text: json }] : [])], structuredContent: JSON.parse(json) as Record<string, unknown>, ...(isError ? { isError: true } : {}) };
};

/**
 * Runs one tools/call; `client` names the MCP client in the turn id (`mcp:<client>:<n>`). An unknown
 * tool is the caller's protocol error (`unknown`), everything else a result.
 */
export async function callTool(plane: ToolPlane, request: { name: string; arguments?: Record<string, unknown> | undefined }, ctx: { client: string; call: number; signal: AbortSignal }, unknown: (message: string) => Error): Promise<CallResult> {
  const { name } = request;
  if (!offered(plane, name)) throw unknown(`unknown tool ${JSON.stringify(name)}; tools/list names the tools of this brain`);
  const tool = plane.tools.get(name)!;
  const args = request.arguments ?? {};
  const problems = plane.tools.problems(name, args);
  if (problems.length > 0) return text(plane, 'error', `invalid arguments for ${name}: ${problems.join('; ')}`, {}, true);
  const turnId = outsideTurnId('mcp', ctx.client, ctx.call);
  const decision = await plane.permissions.check({ tool: name, safety: tool.safety, args, sessionId: MCP_SESSION, turnId });
  if (decision.verdict === 'deny') return text(plane, 'denied', decision.reason, {}, true);
  if (decision.verdict === 'pending') return text(plane, 'pending_approval', decision.reason, { approval_request_id: decision.requestId });
  try {
    const outcome = await tool.run(args, { sessionId: MCP_SESSION, turnId, specialist: 'general', signal: ctx.signal });
    return text(plane, 'ok', outcome.summary, outcome.data === undefined ? {} : { data: outcome.data });
  } catch (err) {
    if (err instanceof ToolFailure) return text(plane, err.name === 'ToolDenied' ? 'denied' : 'error', err.message, {}, true);
    plane.logger.error({ err, tool: name, turn_id: turnId }, 'tool failed (MCP call)');
    return text(plane, 'error', `${name} failed: ${(err as Error).message}`, {}, true);
  }
}

/** One MCP server instance (one per HTTP session) answering tools/list and tools/call from `plane`. */
export function createBrainServer(sdk: ServerSdk, plane: ToolPlane, client: string): Server {
  const server = new sdk.Server(IMPLEMENTATION, { capabilities: { tools: { listChanged: true } }, instructions: 'The tools of an svc home-assistant brain. Calls that need approval answer status pending_approval with an approval_request_id; approve them in svc (svc twin approvals) and the call runs there.' });
  let calls = 0;
  server.setRequestHandler(sdk.ListToolsRequestSchema, () => ({ tools: listTools(plane) }));
  server.setRequestHandler(sdk.CallToolRequestSchema, (request, extra) =>
    callTool(plane, request.params, { client, call: ++calls, signal: extra.signal }, (message) => new sdk.McpError(sdk.ErrorCode.InvalidParams, message)),
  );
  return server;
}
