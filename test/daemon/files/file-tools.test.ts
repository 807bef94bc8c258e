// The file tools through an assembled brain's registry, on real files: each refuses paths outside the
// grants with the guard's reason, and each keeps to its limits and its contract (edit_file's exactly
// once, move_file's no overwrite, delete_file's files and empty folders only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FILE_LIMITS } from '../../../daemon/files/file-tools';
import { ToolDenied, ToolFailure } from '../../../daemon/kernel/tool';
import { filesBrain } from './files-brain';

const refused = (why: RegExp) => (e: unknown) => e instanceof ToolFailure && why.test(e.message);
/** A grant refusal is a denial of the permission plane (counted in svc_tool_denials_total), not a bad path. */
const denied = (why: RegExp) => (e: unknown) => e instanceof ToolDenied && why.test(e.message);

void test('every tool refuses a path outside the grants, and one reached through a link to outside', async (t) => {
  const { dir, call, grant } = await filesBrain(t);
  const docs = join(dir, 'docs');
  await grant(docs, { write: true });
  writeFileSync(join(dir, 'private/secret.txt'), 'secret');
  symlinkSync(join(dir, 'private'), join(docs, 'door'));
  for (const path of [join(dir, 'private/secret.txt'), join(docs, 'door/secret.txt'), `${docs}/../private/secret.txt`]) {
    const calls: Array<[string, Record<string, unknown>]> = [
      ['read_file', { path }],
      ['list_directory', { path: join(path, '..') }],
      ['search_files', { path: join(path, '..'), name: 'secret' }],
      ['write_file', { path, content: 'x' }],
      ['edit_file', { path, old_text: 'secret', new_text: 'x' }],
      ['move_file', { from: path, to: join(docs, 'taken.txt') }],
      ['move_file', { from: join(docs, 'door'), to: join(dir, 'private/moved') }],
      ['delete_file', { path }],
    ];
    for (const [name, args] of calls) await assert.rejects(call(name, args), denied(/outside every granted folder/), `${name} ${JSON.stringify(args)}`);
  }
  assert.equal(readFileSync(join(dir, 'private/secret.txt'), 'utf8'), 'secret');
  assert.ok(!existsSync(join(docs, 'taken.txt')));
  // A bad path inside a grant is a failure of the call, not a denial.
  await assert.rejects(call('read_file', { path: join(docs, 'missing.txt') }), (e: unknown) => e instanceof ToolFailure && !(e instanceof ToolDenied) && /does not exist/.test(e.message));
});

void test('read_file pages text by next_offset and describes binary files; list_directory pages; search_files finds what is there', async (t) => {
  const { dir, call, grant } = await filesBrain(t);
  const docs = join(dir, 'docs');
  await grant(docs);
  writeFileSync(join(docs, 'big.txt'), 'é'.repeat(FILE_LIMITS.readBytes));
  writeFileSync(join(docs, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
  mkdirSync(join(docs, 'notes'));
  writeFileSync(join(docs, 'notes/todo.md'), 'buy milk\ncall the Plumber\n');
  type Chunk = { content: string; size: number; offset: number; next_offset: number | null };
  const first = (await call('read_file', { path: join(docs, 'big.txt') })).data as Chunk;
  assert.deepEqual([first.size, first.offset, first.next_offset, first.content], [FILE_LIMITS.readBytes * 2, 0, FILE_LIMITS.readBytes, 'é'.repeat(FILE_LIMITS.readBytes / 2)]);
  const second = (await call('read_file', { path: join(docs, 'big.txt'), offset: FILE_LIMITS.readBytes + 1 })).data as Chunk;
  assert.equal(second.offset, FILE_LIMITS.readBytes + 2, 'an offset inside a character moves to the next one');
  let text = '';
  for (let offset: number | null = 0, calls = 0; offset !== null && calls < 10; calls++) {
    const chunk = (await call('read_file', { path: join(docs, 'big.txt'), offset })).data as Chunk;
    text += chunk.content;
    offset = chunk.next_offset;
  }
  assert.equal(text, 'é'.repeat(FILE_LIMITS.readBytes), 'paging with next_offset reads the whole file');
  const png = await call('read_file', { path: join(docs, 'image.png') });
  assert.deepEqual(png.data, { path: join(docs, 'image.png'), binary: true, size: 7 });
  const listing = (await call('list_directory', { path: docs })).data as { entries: Array<{ name: string; kind: string }> };
  assert.deepEqual(listing.entries.map((e) => `${e.name}:${e.kind}`), ['big.txt:file', 'image.png:file', 'notes:directory']);
  mkdirSync(join(docs, 'many'));
  const many = Array.from({ length: FILE_LIMITS.listEntries + 7 }, (_, i) => `f${String(i).padStart(4, '0')}`);
  for (const name of many) writeFileSync(join(docs, 'many', name), '');
  type Page = { entries: Array<{ name: string }>; total: number; next_offset: number | null };
  const page1 = (await call('list_directory', { path: join(docs, 'many') })).data as Page;
  assert.deepEqual([page1.entries.length, page1.total, page1.next_offset], [FILE_LIMITS.listEntries, many.length, FILE_LIMITS.listEntries]);
  const page2 = (await call('list_directory', { path: join(docs, 'many'), offset: page1.next_offset })).data as Page;
  assert.deepEqual([...page1.entries, ...page2.entries].map((e) => e.name), many);
  assert.equal(page2.next_offset, null);
  const found = (await call('search_files', { path: docs, content: 'plumber' })).data as { matches: unknown[]; stopped: null };
  assert.deepEqual(found.matches, [{ path: join(docs, 'notes/todo.md'), line: 2, text: 'call the Plumber' }]);
  const byName = (await call('search_files', { path: docs, name: 'TODO' })).data as { matches: unknown[] };
  assert.deepEqual(byName.matches, [{ path: join(docs, 'notes/todo.md') }]);
  await assert.rejects(call('search_files', { path: docs }), refused(/needs a name or a content/));
});

void test('write, edit, move and delete keep their contracts and need a write grant', async (t) => {
  const { dir, call, grant } = await filesBrain(t);
  const docs = join(dir, 'docs');
  await grant(docs);
  await assert.rejects(call('write_file', { path: join(docs, 'a.txt'), content: 'x' }), denied(/granted read-only/));
  await grant(docs, { write: true });
  await call('write_file', { path: join(docs, 'a.txt'), content: 'one two two' });
  await assert.rejects(call('write_file', { path: join(docs, 'b.txt'), content: 'x'.repeat(FILE_LIMITS.writeBytes + 1) }), refused(/exceeds/));
  assert.ok(!existsSync(join(docs, 'b.txt')));
  await assert.rejects(call('edit_file', { path: join(docs, 'a.txt'), old_text: 'two', new_text: '2' }), refused(/more than once/));
  await assert.rejects(call('edit_file', { path: join(docs, 'a.txt'), old_text: 'three', new_text: '3' }), refused(/not in the file/));
  await call('edit_file', { path: join(docs, 'a.txt'), old_text: 'one', new_text: '1' });
  assert.equal(readFileSync(join(docs, 'a.txt'), 'utf8'), '1 two two');
  writeFileSync(join(docs, 'c.txt'), 'c');
  await assert.rejects(call('move_file', { from: join(docs, 'a.txt'), to: join(docs, 'c.txt') }), refused(/already exists/));
  mkdirSync(join(docs, 'sub'));
  await call('move_file', { from: join(docs, 'a.txt'), to: join(docs, 'sub/a.txt') });
  assert.equal(readFileSync(join(docs, 'sub/a.txt'), 'utf8'), '1 two two');
  await assert.rejects(call('move_file', { from: join(docs, 'sub'), to: join(docs, 'sub/inner') }), refused(/into itself/));
  await assert.rejects(call('delete_file', { path: join(docs, 'sub') }), refused(/not empty/));
  await assert.rejects(call('delete_file', { path: docs }), refused(/granted folder itself/));
  symlinkSync(join(docs, 'c.txt'), join(docs, 'link'));
  await assert.rejects(call('delete_file', { path: join(docs, 'link') }), refused(/symbolic link/));
  await call('delete_file', { path: join(docs, 'sub/a.txt') });
  await call('delete_file', { path: join(docs, 'sub') });
  assert.ok(!existsSync(join(docs, 'sub')));
  assert.ok(existsSync(join(docs, 'c.txt')));
});
