// The memory journal (daemon/memory/memory-journal.ts, issue 15): every change of notes, episodes and
// facts is recorded in its own transaction with a revision that never repeats, and a second brain that
// applies the recorded changes in order (Memory.applyRemote) ends with the same synced tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { memoryFixture, type MemoryFixture } from './memory-fixture';
import { currentRevision, type JournalEntry, type MemoryJournal } from '../../../daemon/memory/memory-journal';
import { tripleId } from '../../../daemon/memory/knowledge-graph';
import { MEMORY_MIGRATIONS } from '../../../daemon/memory/memory-schema';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import type { Db } from '../../../daemon/store/store';
import type { ChatMessage } from '../../../daemon/kernel/conversation';
import type { MemoryChange } from '../../../daemon/memory/memory-events';
import { repoRoot } from '../../helpers/external-tools';

/** A journal that keeps its entries in a table of the brain's own database, as an op log would. */
class TableJournal implements MemoryJournal {
  constructor(private readonly refuse: (entry: JournalEntry) => boolean = () => false) {}

  record(db: Db, entry: JournalEntry): void {
    db.run('INSERT INTO test_journal (revision, entry) VALUES (?, ?)', [entry.revision, JSON.stringify(entry)]);
    if (this.refuse(entry)) throw new Error(`journal refused revision ${entry.revision}`);
  }
}

const brain = (journal: MemoryJournal, dir?: string): MemoryFixture => {
  let now = 1_750_000_000_000;
  const mem = memoryFixture({ journal, clock: () => (now += 1000), ...(dir ? { dir } : {}) });
  mem.store.run('CREATE TABLE IF NOT EXISTS test_journal (revision INTEGER PRIMARY KEY, entry TEXT NOT NULL)');
  return mem;
};

const entries = (mem: MemoryFixture): JournalEntry[] => mem.store.all<{ entry: string }>('SELECT entry FROM test_journal ORDER BY revision').map((r) => JSON.parse(r.entry) as JournalEntry);

/** The synced tiers as rows, without what is local (seq, recall statistics). */
const synced = (mem: MemoryFixture): Record<string, unknown[]> => ({
  notes: mem.store.all('SELECT id, text, source, tags, created_at, updated_at, text_key, cjk FROM memory_notes ORDER BY id'),
  episodes: mem.store.all('SELECT id, session_id, summary, reason, summariser, message_count, started_at, ended_at, created_at, searchable, cjk FROM memory_episodes ORDER BY id'),
  triples: mem.store.all('SELECT id, subject, predicate, object, subject_key, predicate_key, object_key, confidence, created_at, updated_at, cjk FROM memory_triples ORDER BY id'),
  sources: mem.store.all('SELECT triple_id, source, confidence, at FROM memory_triple_sources ORDER BY triple_id, source'),
});

const chat = (...turns: string[]): ChatMessage[] => turns.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content }));

const SENTENCES = [
  'My wifi password is hunter2',
  'The dentist is Dr Kowalski on Tuesday',
  'The boiler service is booked for March',
  'Anna likes green tea from Graz',
  'The bike lock code is 7391',
  'the dentist is dr kowalski on tuesday.',
];
const TAGS = ['home', 'health', 'family'];
const FACTS = [
  { subject: 'home wifi', predicate: 'has password', object: 'hunter2' },
  { subject: 'Anna', predicate: 'likes', object: 'green tea' },
  { subject: 'dentist', predicate: 'is', object: 'Dr Kowalski' },
  { subject: 'bike lock', predicate: 'has code', object: '7391' },
  { subject: 'anna', predicate: 'lives in', object: 'Graz' },
];

type Op =
  | { op: 'remember'; s: number; tags: string[] }
  | { op: 'edit'; n: number; s: number | null; tags: string[] | null }
  | { op: 'forgetNote'; n: number }
  | { op: 'episode'; a: number; b: number }
  | { op: 'facts'; f: number[]; source: 'user' | 'session:s1' | 'note'; n: number; confidence: number }
  | { op: 'annotate'; k: number; confidence: number }
  | { op: 'deleteEpisode'; k: number }
  | { op: 'deleteFact'; k: number };

const sentence = fc.nat(SENTENCES.length - 1);
const pick = fc.nat(20);
const confidence = fc.integer({ min: 0, max: 100 }).map((c) => c / 100);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('remember' as const), s: sentence, tags: fc.subarray(TAGS) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('edit' as const), n: pick, s: fc.option(sentence), tags: fc.option(fc.subarray(TAGS)) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('forgetNote' as const), n: pick }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('episode' as const), a: sentence, b: sentence }) },
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('facts' as const), f: fc.subarray([0, 1, 2, 3, 4], { minLength: 1 }), source: fc.constantFrom('user' as const, 'session:s1' as const, 'note' as const), n: pick, confidence }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('annotate' as const), k: pick, confidence }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteEpisode' as const), k: pick }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteFact' as const), k: pick }) },
);

const ids = (mem: MemoryFixture, table: string): string[] => mem.store.all<{ id: string }>(`SELECT id FROM ${table} ORDER BY seq`).map((r) => r.id);
const nth = (list: readonly string[], n: number): string | undefined => (list.length === 0 ? undefined : list[n % list.length]);

async function run(mem: MemoryFixture, o: Op): Promise<void> {
  const { memory } = mem;
  switch (o.op) {
    case 'remember':
      await memory.remember(SENTENCES[o.s]!, { tags: o.tags });
      return;
    case 'edit': {
      const id = nth(ids(mem, 'memory_notes'), o.n);
      if (id && (o.s !== null || o.tags !== null)) await memory.parts.notes.update(id, { ...(o.s !== null ? { text: `${SENTENCES[o.s]!} (edited)` } : {}), ...(o.tags ? { tags: o.tags } : {}) });
      return;
    }
    case 'forgetNote': {
      const id = nth(ids(mem, 'memory_notes'), o.n);
      if (id) await memory.forget(id);
      return;
    }
    case 'episode':
      await memory.recordEpisode({ sessionId: `s${o.a}`, reason: 'session_end', messages: chat(`Remember: ${SENTENCES[o.a]!}.`, `I'll remember that ${SENTENCES[o.a]!}.`, `Also ${SENTENCES[o.b]!}?`, `Noted, ${SENTENCES[o.b]!}.`) });
      return;
    case 'facts': {
      const note = nth(ids(mem, 'memory_notes'), o.n);
      const source = o.source === 'note' ? note : o.source;
      if (source) await memory.addTriples(o.f.map((i) => ({ ...FACTS[i]!, confidence: o.confidence })), source);
      return;
    }
    case 'annotate': {
      const id = nth(ids(mem, 'memory_triples'), o.k);
      if (id) await memory.parts.knowledge.setConfidence(id, o.confidence);
      return;
    }
    case 'deleteEpisode': {
      const id = nth(ids(mem, 'memory_episodes'), o.k);
      if (id) await memory.forget(id);
      return;
    }
    case 'deleteFact': {
      const id = nth(ids(mem, 'memory_triples'), o.k);
      if (id) await memory.forget(id);
      return;
    }
  }
}

void test('replaying brain A’s journal into an empty brain B with applyRemote gives B the same notes, episodes and facts (fast-check)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 24 }), async (ops) => {
      const a = brain(new TableJournal());
      const b = brain(new TableJournal());
      try {
        for (const o of ops) await run(a, o);
        const log = entries(a);
        const revisions = log.map((e) => e.revision);
        assert.ok(revisions.every((r, i) => i === 0 || r > revisions[i - 1]!), `revisions increase: ${revisions.join(',')}`);
        assert.equal(currentRevision(a.store), revisions.at(-1) ?? 0);
        for (const e of log) {
          await b.memory.applyRemote(e);
          assert.equal(await b.memory.applyRemote(e), false, `applying revision ${e.revision} (${e.kind}) again changes nothing`);
        }
        assert.deepEqual(synced(b), synced(a));
        // Applied changes are not B's own: nothing journaled, no revision used.
        assert.deepEqual(entries(b), []);
        assert.equal(currentRevision(b.store), 0);
        // The full-text indexes followed every applied change.
        for (const fts of ['memory_notes_fts', 'memory_episodes_fts', 'memory_triples_fts']) b.store.run(`INSERT INTO ${fts}(${fts}) VALUES ('integrity-check')`);
      } finally {
        await a.close();
        await b.close();
      }
    }),
    { numRuns: 40 },
  );
});

void test('each kind of change is journaled with the whole record after it; forgetting journals its cascade in the same revision run', async (t) => {
  const a = brain(new TableJournal());
  t.after(() => a.close());
  const note = await a.memory.remember('My wifi password is hunter2', { tags: ['home'] });
  await a.memory.remember('my wifi password is hunter2.', { tags: ['secrets'] });
  const episode = await a.memory.recordEpisode({ sessionId: 's1', reason: 'session_end', messages: chat('Remember my wifi password is hunter2.', "I'll remember that. Also the boiler is booked for March.") });
  assert.ok(episode);
  const [fact] = await a.memory.addTriples([{ subject: 'home wifi', predicate: 'has password', object: 'hunter2', confidence: 0.5 }], note.id);
  await a.memory.addTriples([{ subject: 'Home  Wifi', predicate: 'has password', object: 'hunter2', confidence: 0.6 }], 'user');
  await a.memory.parts.knowledge.setConfidence(fact!.id, 0.9);
  await a.memory.forget(note.id);

  const log = entries(a);
  assert.deepEqual(
    log.map((e) => [e.revision, e.kind, e.id]),
    [
      [1, 'note.put', note.id],
      [2, 'note.put', note.id],
      [3, 'episode.put', episode.id],
      [4, 'triple.put', fact!.id],
      [5, 'triple.put', fact!.id],
      [6, 'triple.put', fact!.id],
      [7, 'note.delete', note.id],
      [8, 'episode.put', episode.id],
      [9, 'triple.put', fact!.id],
    ],
  );
  const refreshed = log[1]!;
  assert.equal(refreshed.kind, 'note.put');
  if (refreshed.kind === 'note.put') assert.deepEqual(refreshed.record.tags, ['home', 'secrets'], 'the same sentence again is a put of the merged note');
  const both = log[4]!;
  assert.equal(both.kind, 'triple.put');
  if (both.kind === 'triple.put') {
    assert.equal(both.record.id, tripleId('home wifi', 'has password', 'hunter2'));
    assert.deepEqual(both.record.sources.map((s) => [s.source, s.confidence]), [[`note:${note.id}`, 0.5], ['user', 0.6]]);
    assert.equal(both.record.confidence, 1 - 0.5 * 0.4);
  }
  const annotated = log[5]!;
  if (annotated.kind === 'triple.put') assert.equal(annotated.record.confidence, 0.9);
  const redacted = log[7]!;
  assert.equal(redacted.kind, 'episode.put');
  if (redacted.kind === 'episode.put') assert.doesNotMatch(redacted.record.summary, /hunter2/);
  const left = log[8]!;
  if (left.kind === 'triple.put') assert.deepEqual(left.record.sources.map((s) => s.source), ['user'], 'the forgotten note’s share is taken out');
  assert.ok(log.every((e, i) => i === 0 || e.at >= log[i - 1]!.at));
});

void test('revisions keep increasing after the store is closed and reopened', async () => {
  const first = brain(new TableJournal());
  await first.memory.remember('The dentist is Dr Kowalski on Tuesday');
  await first.memory.addTriples([{ subject: 'dentist', predicate: 'is', object: 'Dr Kowalski' }], 'user');
  const before = entries(first).map((e) => e.revision);
  await first.close({ keep: true });

  const again = brain(new TableJournal(), first.dir);
  try {
    await again.memory.remember('The boiler service is booked for March');
    const after = entries(again).map((e) => e.revision);
    assert.deepEqual(before, [1, 2]);
    assert.deepEqual(after, [1, 2, 3]);
    assert.equal(currentRevision(again.store), 3);
  } finally {
    await again.close();
  }
});

void test('a change whose transaction fails leaves no journal entry and uses no revision', async (t) => {
  let refuse = false;
  const a = brain(new TableJournal((e) => refuse && e.kind === 'episode.put'));
  t.after(() => a.close());
  const note = await a.memory.remember('My wifi password is hunter2');
  const episode = await a.memory.recordEpisode({ sessionId: 's1', reason: 'session_end', messages: chat('Remember my wifi password is hunter2.', "I'll remember that. Also the boiler is booked for March.") });
  assert.ok(episode);
  const committed = entries(a);

  // The delete's cascade fails on its second entry (the redacted episode): the whole forget rolls back.
  refuse = true;
  await assert.rejects(a.memory.forget(note.id), /journal refused/);
  assert.deepEqual(entries(a), committed);
  assert.equal(currentRevision(a.store), committed.length);
  assert.ok(a.memory.parts.notes.get(note.id), 'the note is still there');
  assert.equal(a.memory.parts.episodes.get(episode.id)?.summary, episode.summary);

  refuse = false;
  assert.equal(await a.memory.forget(note.id), true);
  assert.deepEqual(
    entries(a).slice(committed.length).map((e) => [e.revision, e.kind]),
    [
      [committed.length + 1, 'note.delete'],
      [committed.length + 2, 'episode.put'],
    ],
  );
});

void test('a remotely applied note is found by search and followed by the wiki; the same change twice is one change', async (t) => {
  const a = brain(new TableJournal());
  const b = brain(new TableJournal());
  t.after(async () => {
    await a.close();
    await b.close();
  });
  const seen: MemoryChange[] = [];
  b.events.on('test', (c) => seen.push(c));
  await a.memory.remember('The bike lock code is 7391', { tags: ['home'] });
  await a.memory.addTriples([{ subject: 'Anna', predicate: 'likes', object: 'green tea' }, { subject: 'Anna', predicate: 'lives in', object: 'Graz' }], 'user');
  for (const e of entries(a)) {
    assert.equal(await b.memory.applyRemote(e), true);
    assert.equal(await b.memory.applyRemote(e), false);
  }
  assert.deepEqual(
    seen.map((c) => [c.kind, c.tier]),
    [
      ['upsert', 'note'],
      ['upsert', 'knowledge'],
      ['upsert', 'knowledge'],
    ],
  );
  const hits = (await b.memory.search('bike lock code', { limit: 5 })).results;
  assert.deepEqual(
    hits.map((h) => h.id),
    [entries(a)[0]!.id],
  );
  assert.deepEqual(b.wiki.list().map((p) => p.slug).sort(), ['anna', 'topic-home']);

  // An edit and a delete from A follow; the note's words leave B's index.
  const noteId = entries(a)[0]!.id;
  await a.memory.parts.notes.update(noteId, { text: 'The bike lock code is 1234' });
  await a.memory.forget(noteId);
  for (const e of entries(a).slice(3)) await b.memory.applyRemote(e);
  assert.deepEqual((await b.memory.search('bike lock code', { limit: 5 })).results, []);
  assert.deepEqual(b.wiki.list().map((p) => p.slug), ['anna']);
  assert.deepEqual(entries(b), []);
});

void test('a remote fact whose id is not the hash of its parts is refused', async (t) => {
  const b = brain(new TableJournal());
  t.after(() => b.close());
  const forged = { id: tripleId('Anna', 'likes', 'tea'), subject: 'Anna', predicate: 'likes', object: 'coffee', confidence: 1, sources: [{ source: 'user', confidence: 1, at: 1 }], created_at: 1, updated_at: 1 };
  await assert.rejects(b.memory.applyRemote({ kind: 'triple.put', id: forged.id, record: forged }), /not the id of the fact/);
  assert.equal(b.memory.parts.knowledge.get(forged.id), undefined);
});

void test('a database written before the journal existed starts its revisions at 1 (migration 7)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-memory-'));
  const old = new SqliteStore(join(dir, 'brain.db'), { groupCommit: false });
  old.migrate('memory', MEMORY_MIGRATIONS.filter((m) => m.version <= 6));
  old.run("INSERT INTO memory_notes (id, text, source, tags, created_at, updated_at, text_key) VALUES ('note_old', 'The bike lock code is 7391', 'user', '', 1, 1, 'k')");
  old.close();
  const mem = brain(new TableJournal(), dir);
  try {
    assert.equal(currentRevision(mem.store), 0);
    await mem.memory.parts.notes.update('note_old', { tags: ['home'] });
    assert.deepEqual(
      entries(mem).map((e) => [e.revision, e.kind, e.id]),
      [[1, 'note.put', 'note_old']],
    );
  } finally {
    await mem.close();
  }
});

void test('every change event carries the revision of its journal entry; a change applied from another brain carries the revision the brain was at', async (t) => {
  const a = brain(new TableJournal());
  const b = brain(new TableJournal());
  t.after(async () => {
    await a.close();
    await b.close();
  });
  const seen: MemoryChange[] = [];
  a.events.on('test', (c) => seen.push(c));
  const note = await a.memory.remember('My wifi password is hunter2', { tags: ['home'] });
  await a.memory.remember('my wifi password is hunter2.', { tags: ['secrets'] });
  const episode = await a.memory.recordEpisode({ sessionId: 's1', reason: 'session_end', messages: chat('Remember my wifi password is hunter2.', "I'll remember that.", 'When is the boiler service?', 'It is booked for March.') });
  assert.ok(episode);
  const [fact] = await a.memory.addTriples([{ subject: 'home wifi', predicate: 'has password', object: 'hunter2', confidence: 0.5 }], note.id);
  await a.memory.addTriples([{ subject: 'home wifi', predicate: 'has password', object: 'hunter2', confidence: 0.6 }], 'user');
  const [other] = await a.memory.addTriples([{ subject: 'Anna', predicate: 'likes', object: 'green tea' }], 'user');
  await a.memory.parts.knowledge.setConfidence(fact!.id, 0.9);
  await a.memory.parts.notes.update(note.id, { tags: ['home', 'network'] });
  await a.memory.forget(note.id);
  await a.memory.forget(other!.id);
  await a.memory.forget(episode.id);

  const journal = new Map(entries(a).map((e) => [e.revision, e]));
  assert.deepEqual(
    seen.map((c) => [c.revision, c.kind, c.tier, c.id]),
    [
      [1, 'upsert', 'note', note.id],
      [2, 'upsert', 'note', note.id],
      [3, 'upsert', 'episode', episode.id],
      [4, 'upsert', 'knowledge', fact!.id],
      [5, 'upsert', 'knowledge', fact!.id],
      [6, 'upsert', 'knowledge', other!.id],
      [7, 'annotate', 'knowledge', fact!.id],
      [8, 'upsert', 'note', note.id],
      // The forget's cascade: each redacted or re-weighted record with its own entry's revision.
      [9, 'delete', 'note', note.id],
      [10, 'upsert', 'episode', episode.id],
      [11, 'annotate', 'knowledge', fact!.id],
      [12, 'delete', 'knowledge', other!.id],
      [13, 'delete', 'episode', episode.id],
    ],
  );
  for (const c of seen) assert.equal(journal.get(c.revision)?.id, c.id, `revision ${c.revision} is the journal entry of ${c.id}`);

  // B applies A's changes before writing anything itself: no revision of its own is used, events say 0.
  const applied: MemoryChange[] = [];
  b.events.on('test', (c) => applied.push(c));
  for (const e of entries(a).slice(0, 6)) await b.memory.applyRemote(e);
  assert.deepEqual(
    applied.map((c) => c.revision),
    [0, 0, 0, 0, 0, 0],
  );
  const own = await b.memory.remember('The boiler service is booked for March');
  assert.deepEqual([applied.at(-1)?.id, applied.at(-1)?.revision], [own.id, 1]);
  applied.length = 0;
  for (const e of entries(a).slice(6)) await b.memory.applyRemote(e);
  assert.deepEqual(
    applied.map((c) => c.revision),
    [1, 1, 1, 1, 1, 1, 1],
    'after its own change (revision 1), applied changes carry 1: none is above the last local change',
  );
  assert.equal(currentRevision(b.store), 1);
});

/**
 * Where the synced tables are written (docs/memory.md "The journal"): only the repositories that
 * journal, the migrations (derived columns) and decay's recall statistics. A write anywhere else would
 * change content no other brain hears of.
 */
const SYNCED_TABLE_WRITERS: Readonly<Record<string, string>> = {
  'daemon/memory/note-repository.ts': 'journals every local write; putRemote/deleteRemote apply what the op log already holds',
  'daemon/memory/episode-repository.ts': 'the same',
  'daemon/memory/knowledge-graph.ts': 'the same',
  'daemon/memory/forgetting.ts': "inside the note delete's transaction, journaling each record it redacts or removes",
  'daemon/memory/memory-schema.ts': 'migrations filling derived columns (text_key, cjk)',
  'daemon/memory/decay.ts': 'recall statistics only (checked below)',
};
const WRITE = /\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+(memory_notes|memory_episodes|memory_triples|memory_triple_sources|\$\{[^}]*\})(?=[\s(]|$)/g;

function sourceFiles(dir: string, root: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(`${dir}/${e.name}`, root) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : []));
}

void test('only the journaling repositories write the synced tables; decay writes recall statistics only', () => {
  const root = repoRoot();
  const writers = new Map<string, string[]>();
  for (const file of sourceFiles('daemon', root)) {
    const text = readFileSync(join(root, file), 'utf8');
    // A write whose table is computed counts where the file names a synced table at all.
    const namesSynced = /memory_(notes|episodes|triples)\b|tierTables\(/.test(text);
    for (const m of text.matchAll(WRITE)) {
      if (m[1]!.startsWith('${') && !namesSynced) continue;
      writers.set(file, [...(writers.get(file) ?? []), m[0]]);
    }
  }
  const stray = [...writers.keys()].filter((f) => !(f in SYNCED_TABLE_WRITERS));
  assert.deepEqual(stray, [], `synced tables written outside the journaling repositories: ${stray.map((f) => `${f} (${writers.get(f)!.join('; ')})`).join(', ')}`);
  const decay = readFileSync(join(root, 'daemon/memory/decay.ts'), 'utf8');
  const sets = [...decay.matchAll(/UPDATE \$\{[^}]*\} SET ([^`]*?) WHERE/g)].map((m) => m[1]);
  assert.deepEqual(sets, ['recall_count = recall_count + ?, recalled_at = ?']);
});
