// The table of servers added through the API: kept across a reopen, one per name, removed by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { MCP_MIGRATIONS, ServerStore } from '../../../daemon/mcp/server-store';

void test('add, list in order of addition, refuse a second of a name, remove; kept across a reopen', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mcp-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const open = () => {
    const sqlite = new SqliteStore(join(dir, 'brain.db'));
    sqlite.migrate('mcp', MCP_MIGRATIONS);
    return sqlite;
  };
  let sqlite = open();
  let n = 0;
  let store = new ServerStore(sqlite, () => ++n);
  assert.equal(await store.add({ name: 'b', command: 'srv', env: { T: { vault: 'mcp/t' } } }), true);
  assert.equal(await store.add({ name: 'a', url: 'http://127.0.0.1:1/mcp' }), true);
  assert.equal(await store.add({ name: 'a', command: 'other' }), false);
  sqlite.close();
  sqlite = open();
  t.after(() => sqlite.close());
  store = new ServerStore(sqlite, () => ++n);
  assert.deepEqual(store.list(), [
    { name: 'b', command: 'srv', env: { T: { vault: 'mcp/t' } } },
    { name: 'a', url: 'http://127.0.0.1:1/mcp' },
  ]);
  assert.equal(await store.remove('b'), true);
  assert.equal(await store.remove('b'), false);
  assert.deepEqual(store.list().map((d) => d.name), ['a']);
});
