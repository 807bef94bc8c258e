// Provider chain benchmark (issue 4): the failover chain's own overhead per call, against a
// zero-latency in-process provider consumed directly in the same run (the baseline), plus the skip
// path (first member cooling), the failover path (first member fails at once) and, for scale, the
// OpenAI adapter through the real SDK against the fake server on loopback.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), calls, loopbackCalls }
import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

async function harness(root, outDir) {
  const outfile = join(outDir, 'providers-harness.mjs');
  await build({ entryPoints: [join(root, 'test/daemon/providers/bench-harness.ts')], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[providers] ${m}\n`));
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base ?? tmpdir(), 'providers-'));
  try {
    const h = await harness(root, dir);
    log('chain overhead against a zero-latency provider');
    return await h.measure({ calls: ctx.calls ?? 20_000, loopbackCalls: ctx.loopbackCalls ?? 300 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const small = process.argv.includes('--small');
  console.log(JSON.stringify(await run(small ? { calls: 2000, loopbackCalls: 50 } : {}), null, 2));
}
