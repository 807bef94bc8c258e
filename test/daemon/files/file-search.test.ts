// readHead and searchTree on real files: the cap, binary detection, and a walk that stays bounded
// (files, bytes, results) and does not follow links out of the tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { readHead, searchTree } from '../../../daemon/files/file-search';
import { ToolFailure } from '../../../daemon/kernel/tool';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-search-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

void test('readHead: any UTF-8 text round-trips under the cap, is cut on a character boundary over it, and pages back whole', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'f.txt');
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }).filter((s) => !s.includes('\0')), fc.integer({ min: 1, max: 64 }), (text, cap) => {
      writeFileSync(file, text);
      const head = readHead(file, cap);
      const bytes = Buffer.byteLength(text);
      assert.equal(head.binary, false);
      assert.equal(head.size, bytes);
      assert.ok(text.startsWith(head.text));
      assert.ok(Buffer.byteLength(head.text) <= cap && Buffer.byteLength(head.text) > Math.min(cap, bytes) - 4);
      if (bytes <= cap) assert.equal(head.text, text);
    }),
  );
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }).filter((s) => !s.includes('\0')), fc.integer({ min: 4, max: 32 }), fc.nat(8), (text, cap, skip) => {
      writeFileSync(file, text);
      let paged = '';
      let offset: number | null = 0;
      for (let calls = 0; offset !== null && calls < 300; calls++) {
        const chunk = readHead(file, cap, offset);
        paged += chunk.text;
        offset = chunk.end < chunk.size ? chunk.end : null;
      }
      assert.equal(paged, text, 'paging by end reads every character once');
      const bytes = Buffer.from(text);
      const mid = readHead(file, cap, Math.min(skip, bytes.length));
      assert.ok(bytes.subarray(mid.start).toString().startsWith(mid.text), 'an offset inside a character starts at the next one');
    }),
  );
  writeFileSync(file, Buffer.from([0x61, 0xff, 0xfe, 0x62]));
  assert.equal(readHead(file, 100).binary, true, 'invalid UTF-8 is binary');
});

void test('searchTree stops at its limits and says which, and does not follow symlinks', (t) => {
  const dir = tempDir(t);
  const outside = tempDir(t);
  writeFileSync(join(outside, 'needle.txt'), 'needle');
  symlinkSync(outside, join(dir, 'link'));
  mkdirSync(join(dir, 'd'));
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, 'd', `f${String(i).padStart(2, '0')}.txt`), `line\nneedle ${i}\n`);
  const limits = { maxFiles: 1000, maxBytes: 1 << 20, maxFileBytes: 1 << 20, maxResults: 1000 };
  const all = searchTree(dir, { content: 'NEEDLE' }, limits);
  assert.equal(all.matches.length, 20);
  assert.equal(all.stopped, null);
  assert.ok(all.matches.every((m) => m.path.startsWith(join(dir, 'd'))), 'nothing through the link');
  assert.equal(searchTree(dir, { content: 'needle' }, { ...limits, maxResults: 3 }).stopped, 'max_results');
  const files = searchTree(dir, { content: 'needle' }, { ...limits, maxFiles: 5 });
  assert.deepEqual([files.stopped, files.files_scanned], ['max_files', 5]);
  const bytes = searchTree(dir, { content: 'needle' }, { ...limits, maxBytes: 30 });
  assert.equal(bytes.stopped, 'max_bytes');
  assert.ok(bytes.bytes_scanned <= 30);
  const aborted = new AbortController();
  aborted.abort();
  assert.equal(searchTree(dir, { name: 'f' }, limits, aborted.signal).stopped, 'cancelled');
});

// The guard checked the path before; these stand for what may have replaced it since.
void test('readHead opens only a regular file: a FIFO is refused without blocking, a symlink is not followed', { timeout: 20_000 }, (t) => {
  const dir = tempDir(t);
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  assert.throws(() => readHead(join(dir, 'pipe'), 100), (e: unknown) => e instanceof ToolFailure && /not a regular file/.test(e.message));
  writeFileSync(join(dir, 'target.txt'), 'x');
  symlinkSync(join(dir, 'target.txt'), join(dir, 'link'));
  assert.throws(() => readHead(join(dir, 'link'), 100), (e: unknown) => e instanceof ToolFailure && /symbolic link/.test(e.message));
});
