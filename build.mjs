#!/usr/bin/env node
// Bundles the CLI (which contains the brain) and the node-agent with esbuild, and compiles tests.
//   node build.mjs             dist/svc.mjs, dist/node-agent.mjs, dist/phone-bridge.mjs, dist/sandbox-worker.mjs, dist/*.wasm, dist/builtin-skills/
//   node build.mjs --if-stale  the same, only when a source is newer than dist/svc.mjs
//   node build.mjs --tests     every test/**/*.test.ts to .test-build/**/*.test.mjs
// Native modules (serialport, node-ble, noble) are never bundled: they load at run time in node-agent.
import { build } from 'esbuild';
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, statSync, existsSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = import.meta.dirname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const sourceDirs = ['protocol', 'daemon', 'node-agent', 'phone-bridge', 'mesh', 'sync', 'skills', 'cli', 'web'];
const native = ['serialport', '@serialport/*', 'node-ble', '@abandonware/noble', 'dbus-next', 'bufferutil', 'utf-8-validate'];
const define = { __SVC_VERSION__: JSON.stringify(pkg.version) };
// CommonJS dependencies inside an ESM bundle need require/__dirname; node-sqlite3-wasm finds its .wasm via __dirname.
const banner = [
  '#!/usr/bin/env node',
  "import { createRequire as __svcCreateRequire } from 'node:module';",
  "import { fileURLToPath as __svcFileURLToPath } from 'node:url';",
  "import { dirname as __svcDirname } from 'node:path';",
  'const require = __svcCreateRequire(import.meta.url);',
  'const __filename = __svcFileURLToPath(import.meta.url);',
  'const __dirname = __svcDirname(__filename);',
].join('\n');

function walk(dir, accept, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) walk(p, accept, out);
    else if (accept(p)) out.push(p);
  }
  return out;
}

function newestSourceMtime() {
  let newest = statSync(join(root, 'package.json')).mtimeMs;
  for (const dir of sourceDirs) {
    for (const f of walk(join(root, dir), () => true)) newest = Math.max(newest, statSync(f).mtimeMs);
  }
  return newest;
}

async function buildDist() {
  const dist = join(root, 'dist');
  mkdirSync(dist, { recursive: true });
  // Chunk names carry a content hash: drop the previous build's before writing this one's.
  for (const f of readdirSync(dist)) if (f.startsWith('chunk-')) rmSync(join(dist, f));
  // What every bundle of dist/ shares.
  // No keepNames: it re-defines `name` on every named function expression each time one is created,
  // including closures fastify makes per request (its hook runner's next()); that cost GET /health
  // ~25% of its throughput. Nothing in svc depends on function names; stack traces map through
  // dist/svc.mjs.map.
  const common = {
    outdir: dist,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    external: native,
    define,
    banner: { js: banner },
    logLevel: 'warning',
  };
  await build({
    ...common,
    // The skill sandbox's worker thread (skills/sandbox-pool.ts finds it next to the chunks).
    entryPoints: { svc: join(root, 'cli/main.ts'), 'node-agent': join(root, 'node-agent/main.ts'), 'sandbox-worker': join(root, 'skills/sandbox-worker.ts') },
    // Code loaded with import() gets chunks of its own (dist/chunk-*.mjs): `svc serve` never evaluates
    // the CLI's prompts, and the LLM SDKs load when a provider is first called (~3.6 MiB of idle RSS).
    // Chunks sit next to the entries, so __dirname (node-sqlite3-wasm's .wasm lookup) is dist/ in all.
    splitting: true,
    chunkNames: 'chunk-[hash]',
  });
  copyFileSync(join(root, 'node_modules/node-sqlite3-wasm/dist/node-sqlite3-wasm.wasm'), join(dist, 'node-sqlite3-wasm.wasm'));
  // QuickJS's loader (bundled into a chunk) reads new URL('emscripten-module.wasm', import.meta.url): dist/.
  copyFileSync(join(root, 'node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm'), join(dist, 'emscripten-module.wasm'));
  // The first-party skills (skills/builtin/<id>/), which a packaged brain loads from dist/builtin-skills/
  // (daemon/skills/skills-capability.ts builtinSkillsDir); replaced whole, so a skill dropped from the source goes.
  rmSync(join(dist, 'builtin-skills'), { recursive: true, force: true });
  cpSync(join(root, 'skills/builtin'), join(dist, 'builtin-skills'), { recursive: true });
  // The reference phone-bridge client is one self-contained file (no chunks shared with svc), so an app
  // developer can copy dist/phone-bridge.mjs anywhere Node runs.
  await build({ ...common, entryPoints: { 'phone-bridge': join(root, 'phone-bridge/main.ts') } });
}

async function buildTests() {
  const out = join(root, '.test-build');
  const entries = walk(join(root, 'test'), (p) => p.endsWith('.test.ts'));
  // Drop compiled tests whose source is gone; never wipe the folder (helpers may run tests meanwhile).
  for (const built of walk(join(out, 'test'), (p) => p.endsWith('.test.mjs'))) {
    if (!existsSync(join(root, relative(out, built)).replace(/\.mjs$/, '.ts'))) rmSync(built);
  }
  if (entries.length === 0) return;
  // Packages load from node_modules, as in the repository.
  const testBuild = { bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', sourcemap: 'inline', define, logLevel: 'warning' };
  await build({ ...testBuild, entryPoints: entries, outdir: out, outbase: root, outExtension: { '.js': '.mjs' } });
  // The sandbox worker for tests that start a SandboxPool: a few folders above every compiled test,
  // where skills/sandbox-pool.ts looks for it.
  await build({ ...testBuild, entryPoints: [join(root, 'skills/sandbox-worker.ts')], outfile: join(out, 'sandbox-worker.mjs') });
}

const args = new Set(process.argv.slice(2));
if (args.has('--tests')) {
  await buildTests();
} else if (args.has('--if-stale') && existsSync(join(root, 'dist/svc.mjs')) && statSync(join(root, 'dist/svc.mjs')).mtimeMs >= newestSourceMtime()) {
  // dist is current
} else {
  await buildDist();
  if (!args.has('--quiet')) console.error(`built ${relative(process.cwd(), join(root, 'dist/svc.mjs'))} (svc ${pkg.version})`);
}
