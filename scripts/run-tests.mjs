#!/usr/bin/env node
// Runs the compiled tests (.test-build) with node's test runner. Node 20 does not expand globs itself.
//   node scripts/run-tests.mjs [unit|e2e] [filter]
import { spawnSync } from 'node:child_process';
import { readdirSync, existsSync } from 'node:fs';
import { join, sep } from 'node:path';

const root = join(import.meta.dirname, '..');
const [kind = 'all', filter = ''] = process.argv.slice(2);
const files = [];
(function walk(dir) {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (p.endsWith('.test.mjs')) files.push(p);
  }
})(join(root, '.test-build', 'test'));
const isE2e = (p) => p.includes(`${sep}e2e${sep}`);
const selected = files
  .filter((p) => kind === 'all' || (kind === 'e2e' ? isE2e(p) : !isE2e(p)))
  .filter((p) => p.includes(filter))
  .sort();
if (selected.length === 0) {
  console.error(`no test files for "${kind}" ${filter}`);
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...selected], { stdio: 'inherit', cwd: root });
process.exit(r.status ?? 1);
