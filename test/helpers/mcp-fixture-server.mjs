#!/usr/bin/env node
// An MCP server for the MCP tests (test/e2e/mcp*.test.ts, test/daemon/mcp/), built on the official SDK's
// low-level Server: tools that echo, change the tool list (tools/list_changed), hang, crash the
// process, and report an environment variable as its SHA-256 (to show a vault secret arrived without
// the test printing it). Over stdio by default; `--http <port>` serves Streamable HTTP on 127.0.0.1,
// requiring `Authorization: Bearer $FIXTURE_TOKEN` when that is set. FIXTURE_PID_FILE: its pid is
// appended there at start (one line per start). FIXTURE_SLOW_START_MS: it starts reading stdin that late.
import { appendFileSync } from 'node:fs';
import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

if (process.env.FIXTURE_PID_FILE) appendFileSync(process.env.FIXTURE_PID_FILE, `${process.pid}\n`);

const object = (properties = {}, required = []) => ({ type: 'object', properties, required, additionalProperties: false });
const BASE = [
  { name: 'echo', description: 'Echoes text', inputSchema: object({ text: { type: 'string' } }, ['text']) },
  { name: 'Add-Tool', description: 'Adds a tool named `tool` (announced with tools/list_changed)', inputSchema: object({ tool: { type: 'string' } }, ['tool']) },
  { name: 'remove_tool', description: 'Removes an added tool', inputSchema: object({ tool: { type: 'string' } }, ['tool']) },
  { name: 'hang', description: 'Never answers', inputSchema: object() },
  { name: 'crash', description: 'Ends the server process', inputSchema: object() },
  { name: 'env_digest', description: 'The SHA-256 of an environment variable', inputSchema: object({ variable: { type: 'string' } }, ['variable']) },
];
const added = new Set();
const text = (t) => ({ content: [{ type: 'text', text: t }] });

function makeServer() {
  const server = new Server({ name: 'fixture', version: '1' }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...BASE, ...[...added].map((name) => ({ name, description: `added ${name}`, inputSchema: object() }))] }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const args = params.arguments ?? {};
    switch (params.name) {
      case 'echo':
        return text(`echo: ${args.text}`);
      case 'Add-Tool':
        added.add(String(args.tool));
        await server.sendToolListChanged();
        return text(`added ${args.tool}`);
      case 'remove_tool':
        added.delete(String(args.tool));
        await server.sendToolListChanged();
        return text(`removed ${args.tool}`);
      case 'hang':
        return new Promise(() => {});
      case 'crash':
        process.stderr.write('fixture: crashing on request\n');
        setTimeout(() => process.exit(3), 10);
        return new Promise(() => {});
      case 'env_digest': {
        const value = process.env[String(args.variable)];
        return value === undefined ? { ...text(`${args.variable} is not set`), isError: true } : text(`sha256 ${createHash('sha256').update(value).digest('hex')}`);
      }
      default:
        if (added.has(params.name)) return text(`ran ${params.name}`);
        return { ...text(`unknown tool ${params.name}`), isError: true };
    }
  });
  return server;
}

const httpAt = process.argv.indexOf('--http');
if (httpAt < 0) {
  // FIXTURE_SLOW_START_MS: read nothing for that long (a server stuck before its handshake).
  if (process.env.FIXTURE_SLOW_START_MS) await new Promise((resolve) => setTimeout(resolve, Number(process.env.FIXTURE_SLOW_START_MS)));
  await makeServer().connect(new StdioServerTransport());
} else {
  const sessions = new Map();
  const token = process.env.FIXTURE_TOKEN;
  const http = createServer(async (req, res) => {
    if (token && req.headers.authorization !== `Bearer ${token}`) return res.writeHead(401).end('no');
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const id = req.headers['mcp-session-id'];
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => sessions.set(sid, transport) });
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  http.listen(Number(process.argv[httpAt + 1] ?? 0), '127.0.0.1', () => process.stdout.write(`listening ${http.address().port}\n`));
}
