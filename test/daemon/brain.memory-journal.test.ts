// The memory journal on the kernel seam (daemon/brain.ts): a capability contributes the journal and
// gets core.memoryReplica; a note written through the API is journaled in the capability's own table in
// the note's transaction, a change applied from another brain is stored but not journaled, and a
// second capability offering a journal is refused at assembly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineCapability, type CorePorts } from '../../daemon/kernel/capability';
import type { Store } from '../../daemon/store/store';
import { inProcessBrain } from '../helpers/assembled-brain';

const oplog = (name: string, held: { store?: Store; core?: CorePorts } = {}) =>
  defineCapability({
    name,
    create: ({ store, core }) => {
      held.store = store;
      held.core = core;
      return {
        migrations: [{ version: 1, description: 'journal entries', up: `CREATE TABLE ${name.replace(/-/g, '_')}_entries (revision INTEGER PRIMARY KEY, kind TEXT NOT NULL, id TEXT NOT NULL)` }],
        memoryJournal: { record: (db, e) => void db.run(`INSERT INTO ${name.replace(/-/g, '_')}_entries (revision, kind, id) VALUES (?, ?, ?)`, [e.revision, e.kind, e.id]) },
      };
    },
  });

void test('a capability journals memory changes through the brain and applies remote ones through core.memoryReplica', async (t) => {
  const held: { store?: Store; core?: CorePorts } = {};
  const { brain, token } = await inProcessBrain(t, { capabilities: [oplog('test-oplog', held)] });
  const auth = { authorization: `Bearer ${token}` };
  const posted = await brain.app.inject({ method: 'POST', url: '/api/memory/note', headers: auth, payload: { text: 'The bike lock code is 7391', tags: ['home'] } });
  assert.equal(posted.statusCode, 201, posted.body);
  const note = posted.json<{ id: string }>();
  const logged = (): unknown[] => held.store!.all('SELECT revision, kind, id FROM test_oplog_entries ORDER BY revision');
  assert.deepEqual(logged(), [{ revision: 1, kind: 'note.put', id: note.id }]);

  const remote = { id: 'note_remote1', text: 'Anna likes green tea', source: 'user', tags: [], created_at: 1_750_000_000_000, updated_at: 1_750_000_000_000 };
  assert.equal(await held.core!.memoryReplica.applyRemote({ kind: 'note.put', id: remote.id, record: remote }), true);
  const read = await brain.app.inject({ method: 'GET', url: `/api/memory/notes/${remote.id}`, headers: auth });
  assert.equal(read.statusCode, 200, read.body);
  assert.equal(read.json<{ text: string }>().text, 'Anna likes green tea');
  assert.deepEqual(logged(), [{ revision: 1, kind: 'note.put', id: note.id }], 'a remote change is not journaled as a local one');

  const deleted = await brain.app.inject({ method: 'DELETE', url: `/api/memory/notes/${note.id}`, headers: auth });
  assert.equal(deleted.statusCode, 200, deleted.body);
  assert.deepEqual(logged().at(-1), { revision: 2, kind: 'note.delete', id: note.id });
});

void test('two capabilities offering the memory journal are refused at assembly', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'svc-brain-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  await assert.rejects(inProcessBrain(t, { home, capabilities: [oplog('first-oplog'), oplog('second-oplog')], start: false }), /second-oplog gives the memory journal/);
});
