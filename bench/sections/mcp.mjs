// The brain's tools over MCP (docs/mcp.md): the round trip of one tools/call of the `identity` tool by
// the official SDK client, over Streamable HTTP to /mcp and over stdio through `svc mcp` (which relays
// to /mcp), N calls each, interleaved call by call, after a warm-up; p50/p99. Baseline in the same run: the same tool
// called in-process through the same code the MCP server runs for a call (daemon/mcp/brain-server.ts
// callTool: argument check, permission hook, run, scrub), bundled here with esbuild, on a home with
// the same identity files — what is left is the transport (and, for stdio, the relay's extra hop).
// Also the brain's RSS before the first /mcp request and after the calls: the SDK loads on first use.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), calls }
import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { brainRuntime, freePort, latency, memoryOf, percentile, round, startBrain } from '../lib/brain.mjs';

const TOKEN = 'bench-token-mcp-0123456789abcdef';
const CALL = { name: 'identity', arguments: { about: 'assistant' } };

/** The in-process baseline: the identity tool in a registry, called through brain-server's callTool. */
async function inProcess(root, dir, home) {
  const entry = join(dir, 'mcp-direct.ts');
  writeFileSync(
    entry,
    [
      `import { pino } from 'pino';`,
      `import { ToolRegistry } from ${JSON.stringify(join(root, 'daemon/kernel/tool-registry'))};`,
      `import { identityTool } from ${JSON.stringify(join(root, 'daemon/identity/identity-tool'))};`,
      `import { IdentityFiles } from ${JSON.stringify(join(root, 'daemon/identity/identity-files'))};`,
      `import { SecretScrubber } from ${JSON.stringify(join(root, 'daemon/agent/tools/secret-scrubber'))};`,
      `import { callTool } from ${JSON.stringify(join(root, 'daemon/mcp/brain-server'))};`,
      `export function direct(home, token) {`,
      `  const files = new IdentityFiles(home);`,
      `  files.start();`,
      `  const tools = new ToolRegistry().register('identity', identityTool(files));`,
      `  const plane = { tools, permissions: { check: () => ({ verdict: 'allow' }) }, secrets: new SecretScrubber(() => [token]), logger: pino({ level: 'silent' }) };`,
      `  let n = 0;`,
      `  const signal = new AbortController().signal;`,
      `  return (call) => callTool(plane, call, { client: 'bench', call: ++n, signal }, (m) => new Error(m));`,
      `}`,
    ].join('\n'),
  );
  const outfile = join(dir, 'mcp-direct.mjs');
  await build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
  return (await import(pathToFileURL(outfile).href)).direct(home, TOKEN);
}

/** `n` calls of each, interleaved (A B C A B C …) so a change of load on the machine hits all; after a warm-up. */
async function timedCalls(cases, n) {
  const out = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let i = 0; i < Math.min(50, n); i++) for (const call of Object.values(cases)) await call();
  for (let i = 0; i < n; i++) {
    for (const [name, call] of Object.entries(cases)) {
      const t0 = performance.now();
      const r = await call();
      out[name].push(performance.now() - t0);
      if (r.isError) throw new Error(`identity failed (${name}): ${JSON.stringify(r)}`);
    }
  }
  return out;
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[mcp] ${m}\n`));
  const calls = ctx.calls ?? 500;
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'mcp-'));
  const home = join(dir, 'home');
  mkdirSync(home);
  const runtime = await brainRuntime(root);
  let brain = null;
  const clients = [];
  try {
    brain = await startBrain(root, { home, port: await freePort(), runtime, token: TOKEN });
    const idle = memoryOf(brain.child.pid);
    const direct = await inProcess(root, dir, home);

    log(`${calls} calls each in-process, over HTTP, over stdio (svc mcp), interleaved`);
    const http = new Client({ name: 'bench-http', version: '1' });
    await http.connect(new StreamableHTTPClientTransport(new URL(`${brain.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    clients.push(http);
    const stdio = new Client({ name: 'bench-stdio', version: '1' });
    await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [join(root, 'dist/svc.mjs'), 'mcp', '--url', brain.url], env: { SVC_HOME: home, SVC_API_TOKEN: TOKEN } }));
    clients.push(stdio);

    const { directMs, httpMs, stdioMs } = await timedCalls({ directMs: () => direct(CALL), httpMs: () => http.callTool(CALL), stdioMs: () => stdio.callTool(CALL) }, calls);
    const after = memoryOf(brain.child.pid);
    const ratio = (ms) => round(percentile(ms, 50) / percentile(directMs, 50), 1);
    return {
      setup: { calls, tool: 'identity {about: assistant}', client: '@modelcontextprotocol/sdk Client in the bench process, one call at a time, interleaved, same machine, unpinned', permission: 'allow (a passive tool)' },
      in_process: latency(directMs),
      http: latency(httpMs),
      stdio_via_svc_mcp: latency(stdioMs),
      p50_over_in_process: { http: ratio(httpMs), stdio: ratio(stdioMs) },
      brain_rss_mib: { before_first_mcp_request: idle.rss_mib, after_calls: after.rss_mib, rss_anon_before: idle.rss_anon_mib, rss_anon_after: after.rss_anon_mib },
    };
  } finally {
    for (const c of clients) await c.close();
    if (brain) await brain.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${JSON.stringify(await run(), null, 2)}\n`);
}
