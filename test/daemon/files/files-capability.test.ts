// The files capability in an assembled brain: its tools, their safety levels and owner, and its
// migration (the grants table) applied under its name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filesBrain } from './files-brain';

void test('the capability registers its tools with their safety levels under its name', async (t) => {
  const { brain } = await filesBrain(t);
  const levels = Object.fromEntries(['read_file', 'list_directory', 'search_files', 'write_file', 'edit_file', 'move_file', 'delete_file'].map((n) => [n, brain.tools.get(n)?.safety]));
  assert.deepEqual(levels, { read_file: 'passive', list_directory: 'passive', search_files: 'passive', write_file: 'active', edit_file: 'active', move_file: 'active', delete_file: 'privileged' });
  assert.equal(brain.tools.ownerOf('read_file'), 'files');
});
