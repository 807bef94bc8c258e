// What the bundle must be, beyond working. V8 keeps a script's source in memory for as long as its
// functions live, one byte per character only while every character is Latin-1: a single other
// character (a "…" or "。" in a regular expression literal, which esbuild cannot escape) stores the
// whole chunk at two bytes per character. That cost the brain ~0.9 MiB of idle RSS on its main chunk;
// write such characters as \u escapes in the source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './helpers/external-tools';

void test('every bundled chunk is ASCII, so V8 holds its source at one byte per character', () => {
  const dist = join(repoRoot(), 'dist');
  const files = readdirSync(dist).filter((f) => f.endsWith('.mjs'));
  assert.ok(files.includes('svc.mjs'), 'dist/ is built (npm test builds it first)');
  const offenders = files.flatMap((f) => {
    const text = readFileSync(join(dist, f), 'latin1');
    const at = text.search(/[^\x00-\x7f]/);
    return at < 0 ? [] : [`${f}: ${JSON.stringify(readFileSync(join(dist, f), 'utf8').slice(Math.max(0, at - 40), at + 20))}`];
  });
  assert.deepEqual(offenders, [], 'write non-ASCII characters in regular expressions as \\u escapes');
});
