// Shared by the MCP tests (test/e2e/mcp*.test.ts, test/daemon/mcp/): where the reference MCP servers and
// the fixture server are, an official SDK client of a brain's /mcp (Streamable HTTP) or of `svc mcp`
// (stdio), the fixture over HTTP on a loopback port, polling a brain's /api/mcp/servers, and a model
// on the fake OpenAI server that calls the tool a `CALL <tool> <json>` message names.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { SVC, type BrainProcess } from './brain-process';
import { repoRoot } from './external-tools';
import { until } from './poll';
import type { FakeReply, FakeServer, RecordedRequest } from '../fakes/openai-server';
import type { McpServerList, McpServerStatus } from '../../protocol/mcp';

const ROOT = repoRoot();
export const FIXTURE = join(ROOT, 'test', 'helpers', 'mcp-fixture-server.mjs');
export const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const FILESYSTEM = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

/** An SDK client of `url`/mcp with `token` (none: no Authorization header). */
export async function httpClient(url: string, token: string | undefined, onToolsChanged?: () => void): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '1' });
  if (onToolsChanged) client.setNotificationHandler((await import('@modelcontextprotocol/sdk/types.js')).ToolListChangedNotificationSchema, () => onToolsChanged());
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** An SDK client that spawns `svc mcp` for `brain` (its home and URL), as a desktop app would; stderr is collected. */
export async function stdioClient(brain: Pick<BrainProcess, 'home' | 'url'>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [SVC, 'mcp', '--url', brain.url], env: { SVC_HOME: brain.home, PATH: process.env.PATH ?? '' }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'svc-test-stdio', version: '1' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

/** The fixture over Streamable HTTP on a loopback port (a free one by default); `token` is the bearer it requires. */
export async function httpFixture(token: string, port = 0): Promise<{ url: string; port: number; child: ChildProcess; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [FIXTURE, '--http', String(port)], { env: { ...process.env, FIXTURE_TOKEN: token }, stdio: ['ignore', 'pipe', 'inherit'] });
  const bound = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^listening (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the fixture exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    port: bound,
    child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function servers(brain: Pick<BrainProcess, 'api'>): Promise<McpServerStatus[]> {
  return ((await (await brain.api('/api/mcp/servers')).json()) as McpServerList).servers;
}

/** Polls /api/mcp/servers until server `name` satisfies `ok`. */
export function serverWhen(brain: Pick<BrainProcess, 'api'>, name: string, ok: (s: McpServerStatus) => boolean, timeoutMs = 30_000): Promise<McpServerStatus> {
  let last: McpServerStatus | undefined;
  return until(
    () => `MCP server ${name}; last seen ${JSON.stringify(last)}`,
    async () => {
      last = (await servers(brain)).find((s) => s.name === name);
      return last && ok(last) ? last : undefined;
    },
    timeoutMs,
  );
}

type Message = { role: string; content?: unknown };

/**
 * The model: the knowledge extractor gets no triples; `CALL <tool> <json args>` gets that one tool
 * call; after a tool result it answers `done` (the tool messages are kept in `results`).
 */
export function callingModel(fake: FakeServer): { results: string[] } {
  const results: string[] = [];
  let calls = 0;
  fake.reply((req: RecordedRequest): FakeReply => {
    const messages = (Array.isArray(req.body?.messages) ? req.body.messages : []) as Message[];
    if (messages[0]?.role === 'system' && String(messages[0].content).startsWith('Extract the facts')) return { kind: 'text', chunks: ['{"triples":[]}'] };
    const last = messages.at(-1);
    const call = last?.role === 'user' ? /^CALL ([a-z0-9_]+) (.*)$/s.exec(String(last.content)) : null;
    if (call) return { kind: 'tool_calls', calls: [{ id: `call_${++calls}`, name: call[1]!, argumentChunks: [call[2]!] }] };
    if (last?.role === 'tool') {
      results.push(String(last.content));
      return { kind: 'text', chunks: ['done'] };
    }
    return { kind: 'text', chunks: ['Hello from fake'] };
  });
  return { results };
}
