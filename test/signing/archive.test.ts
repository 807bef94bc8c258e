// The archive reader and packer of registry items: a deterministic pack that reads back to the same
// files (property), and every hostile entry refused before anything is written: `..`, absolute paths,
// symlinks and hard links pointing out, devices and FIFOs, oversized entries, too many entries, a gzip
// bomb, duplicates, a file where a directory is needed, a bad checksum, and a destination in use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { Header, type HeaderData } from 'tar';
import { ArchiveError, checkPath, DEFAULT_ARCHIVE_LIMITS, extractArchive, packArchive, readArchive, readArchiveFiles, type ArchiveFile } from '../../signing/archive';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const FILES: ArchiveFile[] = [
  { path: 'manifest.json', bytes: text('{"id":"demo"}') },
  { path: 'skill.js', bytes: text('export default () => 1;\n') },
  { path: 'lib/util.js', bytes: text('export const x = 1;\n') },
];

/** A raw tar built from headers as a hostile packer would write them (no checks), gzipped. */
function rawTar(entries: readonly (HeaderData & { body?: Uint8Array })[]): Uint8Array {
  const blocks: Buffer[] = [];
  for (const { body, ...data } of entries) {
    const block = Buffer.alloc(512);
    new Header({ mode: 0o644, mtime: new Date(0), size: body?.length ?? 0, ...data }).encode(block, 0);
    blocks.push(block);
    if (body) blocks.push(Buffer.from(body), Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

const scratch = (t: { after(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-archive-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

async function refused(bytes: Uint8Array, pattern: RegExp, limits = DEFAULT_ARCHIVE_LIMITS): Promise<void> {
  await assert.rejects(readArchive(bytes, limits), (err: unknown) => err instanceof ArchiveError && pattern.test(err.message));
}

void test('an archive extracts to its files, sorted, with directories made and modes of its own', async (t) => {
  const dest = join(scratch(t), 'out');
  const written = await extractArchive(packArchive(FILES), dest);
  assert.deepEqual(written, ['lib/util.js', 'manifest.json', 'skill.js']);
  assert.equal(readFileSync(join(dest, 'lib/util.js'), 'utf8'), 'export const x = 1;\n');
});

void test('packing is deterministic: the same files in any order give the same bytes', () => {
  const a = packArchive(FILES);
  const b = packArchive([...FILES].reverse());
  assert.deepEqual(Buffer.from(a), Buffer.from(b));
});

const safeSegment = fc.stringMatching(/^[a-z0-9_-][a-z0-9._-]{0,11}$/).filter((s) => s !== '.' && s !== '..');
const fileSet = fc.uniqueArray(fc.record({ path: fc.array(safeSegment, { minLength: 1, maxLength: 3 }).map((s) => s.join('/')), bytes: fc.uint8Array({ maxLength: 2000 }) }), {
  selector: (f) => f.path,
  minLength: 1,
  maxLength: 12,
});
/** No file where another file needs a directory. */
const consistent = (files: readonly ArchiveFile[]): boolean => files.every((f) => !files.some((g) => g.path.startsWith(`${f.path}/`)));

void test('property: pack then read gives back the same files, and packing twice the same bytes', async () => {
  await fc.assert(
    fc.asyncProperty(fileSet.filter(consistent), async (files) => {
      const packed = packArchive(files);
      assert.deepEqual(Buffer.from(packArchive([...files].reverse())), Buffer.from(packed));
      const back = await readArchiveFiles(packed);
      assert.deepEqual(new Map([...back].map(([p, b]) => [p, Buffer.from(b)])), new Map(files.map((f) => [f.path, Buffer.from(f.bytes)])));
    }),
    { numRuns: 60 },
  );
});

void test('paths that leave the destination are refused by the reader', async () => {
  await refused(rawTar([{ path: '../x', type: 'File', body: text('x') }]), /`\.\.` segment/);
  await refused(rawTar([{ path: 'a/../../x', type: 'File', body: text('x') }]), /`\.\.` segment/);
  await refused(rawTar([{ path: '/etc/x', type: 'File', body: text('x') }]), /absolute path/);
  await refused(rawTar([{ path: 'C:/x', type: 'File', body: text('x') }]), /absolute path/);
  await refused(rawTar([{ path: 'a\\..\\x', type: 'File', body: text('x') }]), /backslash/);
  await refused(rawTar([{ path: 'a//b', type: 'File', body: text('x') }]), /empty/);
});

void test('links, devices and FIFOs are refused, whatever they point at', async () => {
  await refused(rawTar([{ path: 'evil', type: 'SymbolicLink', linkpath: '/etc/passwd' }]), /SymbolicLink/);
  await refused(rawTar([{ path: 'evil', type: 'SymbolicLink', linkpath: 'inside.js' }]), /SymbolicLink/);
  await refused(rawTar([{ path: 'evil', type: 'Link', linkpath: '../../outside' }]), /Link entry/);
  await refused(rawTar([{ path: 'dev', type: 'CharacterDevice', devmaj: 1, devmin: 3 }]), /CharacterDevice/);
  await refused(rawTar([{ path: 'blk', type: 'BlockDevice', devmaj: 8, devmin: 0 }]), /BlockDevice/);
  await refused(rawTar([{ path: 'fifo', type: 'FIFO' }]), /FIFO/);
});

void test('sizes and counts past the limits are refused: one entry, the total, the entries, a gzip bomb', async () => {
  const small = { ...DEFAULT_ARCHIVE_LIMITS, maxEntryBytes: 100, maxTotalBytes: 150, maxEntries: 3 };
  await refused(rawTar([{ path: 'big', type: 'File', body: new Uint8Array(101) }]), /more than 100/, small);
  await refused(rawTar([{ path: 'a', type: 'File', body: new Uint8Array(80) }, { path: 'b', type: 'File', body: new Uint8Array(80) }]), /add up to more than 150/, small);
  await refused(rawTar(['a', 'b', 'c', 'd'].map((p) => ({ path: p, type: 'File' as const, body: text(p) }))), /more than 3 entries/, small);
  // 64 MiB of zeros gzip to ~64 KiB; the inflate stops at its bound.
  await refused(gzipSync(Buffer.alloc(64 * 1024 * 1024)), /inflates past/);
});

void test('an entry twice, and a file where a directory is needed, are refused', async () => {
  await refused(rawTar([{ path: 'a', type: 'File', body: text('1') }, { path: 'a', type: 'File', body: text('2') }]), /twice/);
  await refused(rawTar([{ path: 'a', type: 'File', body: text('1') }, { path: 'a/b', type: 'File', body: text('2') }]), /which is a file/);
});

void test('a damaged archive is refused: a changed header byte, garbage, a truncated stream', async () => {
  const plain = Buffer.from(rawTar([{ path: 'a.js', type: 'File', body: text('1') }]));
  const tar = (await import('node:zlib')).gunzipSync(plain);
  tar[10] = 0x41; // inside the name: the checksum no longer matches
  await assert.rejects(readArchive(tar), ArchiveError);
  await assert.rejects(readArchive(gzipSync(Buffer.from('not a tar at all'.repeat(100)))), ArchiveError);
  await assert.rejects(readArchive(plain.subarray(0, plain.length - 20)), ArchiveError);
  await assert.rejects(readArchive(packArchive([])), ArchiveError);
});

void test('a refused archive writes nothing, and a destination in use is refused', async (t) => {
  const root = scratch(t);
  const dest = join(root, 'out');
  const hostile = rawTar([{ path: 'ok.js', type: 'File', body: text('1') }, { path: '../escape.js', type: 'File', body: text('2') }]);
  await assert.rejects(extractArchive(hostile, dest), ArchiveError);
  assert.equal(existsSync(dest), false);
  assert.equal(existsSync(join(root, 'escape.js')), false);
  mkdirSync(dest);
  writeFileSync(join(dest, 'there.txt'), 'x');
  await assert.rejects(extractArchive(packArchive(FILES), dest), /not empty/);
  const empty = join(root, 'empty');
  mkdirSync(empty);
  assert.equal((await extractArchive(packArchive(FILES), empty)).length, 3);
  assert.deepEqual(readdirSync(empty).sort(), ['lib', 'manifest.json', 'skill.js']);
});

void test('checkPath accepts one spelling of a relative path and packing refuses the rest', () => {
  assert.equal(checkPath('./a/b.js'), 'a/b.js');
  assert.throws(() => packArchive([{ path: '../x', bytes: text('x') }]), ArchiveError);
  assert.throws(() => packArchive([{ path: `${'d'.repeat(120)}/${'n'.repeat(101)}`, bytes: text('x') }]), ArchiveError);
});
