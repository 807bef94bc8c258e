#!/usr/bin/env node
// `npm run bench`: builds dist/ (package.json), then runs every section in bench/sections/ and prints
// ONE JSON document on stdout (progress goes to stderr). A section is a module exporting
// `async run(ctx)` that returns JSON-serialisable numbers, each against a baseline measured in the
// same run (ARCHITECTURE.md, bench/). Sections listed in ORDER run first, others alphabetically after.
//   node bench/run.mjs                    all sections
//   node bench/run.mjs --only startup,http
//   node bench/run.mjs --skip memory
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ORDER = ['startup', 'http', 'writes', 'store'];
const root = join(import.meta.dirname, '..');

function option(name) {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`)) ?? (process.argv.includes(`--${name}`) ? `--${name}=${process.argv[process.argv.indexOf(`--${name}`) + 1] ?? ''}` : undefined);
  return arg === undefined ? null : new Set(arg.slice(name.length + 3).split(',').filter(Boolean));
}

function sections() {
  const found = readdirSync(join(import.meta.dirname, 'sections'))
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => f.slice(0, -4));
  const only = option('only');
  const skip = option('skip') ?? new Set();
  const rank = (s) => (ORDER.includes(s) ? ORDER.indexOf(s) : ORDER.length);
  return found
    .filter((s) => (only ? only.has(s) : true) && !skip.has(s))
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return null; // not a checkout
  }
}

/** Every `targets` entry of every section, flattened, so the verdicts are in one place. */
function targets(results) {
  const all = {};
  for (const [section, result] of Object.entries(results)) {
    for (const [name, verdict] of Object.entries(result?.targets ?? {})) all[`${section}.${name}`] = verdict;
  }
  return all;
}

if (!existsSync(join(root, 'dist/svc.mjs'))) {
  process.stderr.write('dist/svc.mjs is missing: run `node build.mjs` first (npm run bench does)\n');
  process.exit(1);
}
const tmpDir = join(root, '.bench-tmp');
mkdirSync(tmpDir, { recursive: true });
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const started = new Date();
const machine = {
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  cpus: cpus().length,
  cpu_model: cpus()[0]?.model ?? null,
  memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  loadavg_at_start: loadavg().map((l) => Math.round(l * 100) / 100),
};
const results = {};
const timings = {};
for (const name of sections()) {
  const log = (m) => process.stderr.write(`[${name}] ${m}\n`);
  const t0 = performance.now();
  try {
    const mod = await import(pathToFileURL(join(import.meta.dirname, 'sections', `${name}.mjs`)).href);
    results[name] = await mod.run({ root, tmpDir, log });
  } catch (err) {
    log(`failed: ${err?.stack ?? err}`);
    results[name] = { error: String(err?.message ?? err) };
  }
  timings[name] = Math.round((performance.now() - t0) / 100) / 10;
}
const report = {
  svc_version: pkg.version,
  git_commit: gitCommit(),
  date: started.toISOString(),
  machine: { ...machine, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
  note: 'Absolute numbers depend on the machine and on what else runs on it (see loadavg); compare each number with the baseline measured next to it in the same run.',
  section_seconds: timings,
  targets: targets(results),
  sections: results,
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
