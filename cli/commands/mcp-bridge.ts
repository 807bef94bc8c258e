// `svc mcp` (docs/mcp.md "Server"): what an MCP client such as a desktop app spawns. It serves the tools
// of the running brain — one tool plane, one permission plane — by relaying MCP messages between its
// stdin/stdout and the brain's /mcp (Streamable HTTP) with the admin token of the CLI's home. stdout is
// the protocol; everything said to people goes to stderr: that the brain is not running (checked
// before any message is relayed), a refused token, a lost brain (each request then answered with a
// JSON-RPC error, so the client does not wait forever).
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Connection } from '../connection';

export interface BridgeIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

/** The JSON-RPC code of a request the bridge answers itself (the brain could not be asked). */
export const BRAIN_UNREACHABLE = -32000;
/** How long answers to the last requests may take once the client has closed stdin. */
const DRAIN_MS = 5000;

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Why the brain cannot be bridged to, or null when it answers /health. */
export async function brainProblem(conn: Connection, timeoutMs = 3000): Promise<string | null> {
  if (!conn.token) return `no API token: none in ${conn.home}/api-token and SVC_API_TOKEN is not set; start the brain once on this home (svc start) or set --home`;
  try {
    const res = await fetch(`${conn.url}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return null;
  } catch (err) {
    return `the svc brain at ${conn.url} is not running (${messageOf((err as { cause?: unknown }).cause ?? err)}); start it with \`svc start\` or \`systemctl start svc-brain\`, then restart this MCP server`;
  }
}

const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: string | number; method: string } => 'method' in m && 'id' in m;

/** Relays until stdin ends (the MCP client went away); 1 when the brain cannot be reached at the start. */
export async function bridge(conn: Connection, io: BridgeIo): Promise<number> {
  const problem = await brainProblem(conn);
  if (problem) {
    io.err.write(`svc mcp: ${problem}\n`);
    return 1;
  }
  const [{ StdioServerTransport }, { StreamableHTTPClientTransport }] = await Promise.all([import('@modelcontextprotocol/sdk/server/stdio.js'), import('@modelcontextprotocol/sdk/client/streamableHttp.js')]);
  // The SDK types its streams as node:stream classes; process.stdin/stdout (and PassThroughs in tests) are.
  const local = new StdioServerTransport(io.stdin as Readable, io.stdout as Writable);
  const brain = new StreamableHTTPClientTransport(new URL(`${conn.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${conn.token}` } } });
  let initializeId: string | number | undefined;
  /** Requests relayed and not answered yet: answered before the relay ends, when they come soon. */
  const pending = new Set<string | number>();
  let settled: (() => void) | undefined;
  let closing = false;
  let sending: Promise<void> = Promise.resolve();
  const say = (text: string): void => {
    if (!closing) io.err.write(`svc mcp: ${text}\n`);
  };

  brain.onmessage = (message) => {
    if ('id' in message && !('method' in message) && message.id !== undefined) pending.delete(message.id);
    // The brain's answer to initialize names the protocol version its later requests must carry.
    if ('result' in message && message.id === initializeId && typeof message.result.protocolVersion === 'string') brain.setProtocolVersion(message.result.protocolVersion);
    void local.send(message).then(() => pending.size === 0 && settled?.());
  };
  brain.onerror = (err) => say(`the brain's MCP stream: ${messageOf(err)}`);
  local.onerror = (err) => say(`a message from the MCP client: ${messageOf(err)}`);
  local.onmessage = (message) => {
    if (isRequest(message)) {
      pending.add(message.id);
      if (message.method === 'initialize') initializeId = message.id;
    }
    // In order, one after another: the session id comes with initialize's answer, and each request
    // is sent once the brain has begun to answer the one before (its answer streams on).
    sending = sending.then(() => brain.send(message)).catch((err: unknown) => {
      const why = `the svc brain at ${conn.url} did not take the message (${messageOf(err)})`;
      say(why);
      if (!isRequest(message) || closing) return;
      pending.delete(message.id);
      void local.send({ jsonrpc: '2.0', id: message.id, error: { code: BRAIN_UNREACHABLE, message: why } });
    });
  };

  const ended = new Promise<void>((resolve) => {
    local.onclose = resolve;
    io.stdin.once('end', resolve);
    io.stdin.once('close', resolve);
  });
  await brain.start();
  await local.start();
  await ended;
  // The client wrote its last message: its answers still go out (for at most DRAIN_MS).
  if (pending.size > 0) await new Promise<void>((resolve) => ((settled = resolve), setTimeout(resolve, DRAIN_MS).unref()));
  closing = true;
  // The session ends with the client: DELETE it rather than leave it to the brain's idle sweep.
  await brain.terminateSession().catch((err: unknown) => io.err.write(`svc mcp: ending the MCP session: ${messageOf(err)}\n`));
  await brain.close();
  await local.close();
  return 0;
}
