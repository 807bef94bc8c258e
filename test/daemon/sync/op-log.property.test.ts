// A property over random interleavings: two homes take random writes through the memory service
// (remember, edit, forget, facts from several sources, episodes) while ops travel between them at
// random — from stale cursors (duplicates), in batches of random size — and one clock may be an hour off. After settling, the synced tier
// tables of both are identical and equal the merge rules folded over every op in any order
// (sync/memory-state.ts, the sequential model), and both brains hold the same note revisions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { SyncOp } from '../../../protocol/sync';
import type { ChatMessage } from '../../../daemon/kernel/conversation';
import { noteRevisions } from '../../../daemon/sync/op-log';
import { MemoryState } from '../../../sync/memory-state';
import { BRAINS, mulberry32, shuffled } from '../../sync/sync-fixtures';
import { exchange, syncBrain, syncedTables, type SyncBrain } from './sync-brain';

const SENTENCES = ['The dentist is Dr Kowalski on Tuesday', 'The boiler service is booked for March', 'Anna likes green tea from Graz', 'The bike lock code is 7391', 'The cabin key is under the blue pot'];
const FACTS = [
  { subject: 'Anna', predicate: 'likes', object: 'green tea' },
  { subject: 'anna', predicate: 'Likes', object: 'Green tea' },
  { subject: 'home wifi', predicate: 'has password', object: 'hunter2' },
];
const SOURCES = ['turn:1', 'turn:2', 'user'];

type Command =
  | { kind: 'remember'; who: number; text: number }
  | { kind: 'edit'; who: number; note: number; text: number }
  | { kind: 'forget'; who: number; note: number }
  | { kind: 'fact'; who: number; fact: number; source: number; confidence: number }
  | { kind: 'forget-fact'; who: number; fact: number }
  | { kind: 'episode'; who: number; a: number; b: number }
  | { kind: 'sync'; from: number; maxBytes: number; stale: boolean };

const who = fc.integer({ min: 0, max: 1 });
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant('remember' as const), who, text: fc.nat(SENTENCES.length - 1) }),
  fc.record({ kind: fc.constant('edit' as const), who, note: fc.nat(9), text: fc.nat(SENTENCES.length - 1) }),
  fc.record({ kind: fc.constant('forget' as const), who, note: fc.nat(9) }),
  fc.record({ kind: fc.constant('fact' as const), who, fact: fc.nat(FACTS.length - 1), source: fc.nat(SOURCES.length - 1), confidence: fc.constantFrom(0.3, 0.5, 0.9) }),
  fc.record({ kind: fc.constant('forget-fact' as const), who, fact: fc.nat(FACTS.length - 1) }),
  fc.record({ kind: fc.constant('episode' as const), who, a: fc.nat(SENTENCES.length - 1), b: fc.nat(SENTENCES.length - 1) }),
  fc.record({ kind: fc.constant('sync' as const), from: who, maxBytes: fc.integer({ min: 1, max: 8192 }), stale: fc.boolean() }),
);

const chat = (...turns: string[]): ChatMessage[] => turns.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content }));

async function run(brains: [SyncBrain, SyncBrain], c: Command, edits: number): Promise<void> {
  if (c.kind === 'sync') {
    const [from, to] = c.from === 0 ? brains : [brains[1], brains[0]];
    if (c.stale) for await (const batch of from.data.ops({}, c.maxBytes)) await to.data.apply(batch, from.id);
    else await exchange(from, to, c.maxBytes);
    return;
  }
  const { memory } = brains[c.who]!.mem;
  const notes = memory.parts.notes.list({ limit: 100 }).items;
  switch (c.kind) {
    case 'remember':
      return void (await memory.remember(SENTENCES[c.text]!));
    case 'edit': {
      const note = notes[c.note % Math.max(1, notes.length)];
      if (note) await memory.parts.notes.update(note.id, { text: `${SENTENCES[c.text]!} (edit ${edits})` });
      return;
    }
    case 'forget': {
      const note = notes[c.note % Math.max(1, notes.length)];
      if (note) await memory.forget(note.id);
      return;
    }
    case 'fact':
      return void (await memory.addTriples([{ ...FACTS[c.fact]!, confidence: c.confidence }], SOURCES[c.source]!));
    case 'forget-fact': {
      const [t] = memory.knowledge({ subject: FACTS[c.fact]!.subject, predicate: FACTS[c.fact]!.predicate, object: FACTS[c.fact]!.object, depth: 0 }).triples;
      if (t) await memory.forget(t.id);
      return;
    }
    case 'episode':
      return void (await memory.recordEpisode({ sessionId: `s${c.a}${c.b}`, reason: 'session_end', messages: chat(`Remember: ${SENTENCES[c.a]!}.`, 'Noted.', `Also ${SENTENCES[c.b]!}?`, 'Noted, that too.') }));
  }
}

/** The sequential model: every op folded into the pure merge state, in a shuffled order. */
function model(b: SyncBrain, seed: number): MemoryState {
  const state = new MemoryState();
  const ops = b.mem.store.all<{ op: string }>('SELECT op FROM sync_ops').map((r) => JSON.parse(r.op) as SyncOp);
  for (const op of shuffled(ops, mulberry32(seed))) state.merge(op);
  return state;
}

test('random writes and deliveries on two homes converge to the merge rules applied to every op', async () => {
  await fc.assert(
    // The second home's clock is right, or an hour ahead or behind (within the skew bound).
    fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 25 }), fc.nat(), fc.constantFrom(700, 3_600_000, -3_600_000), async (commands, seed, offset) => {
      const brains: [SyncBrain, SyncBrain] = [syncBrain(BRAINS[0]), syncBrain(BRAINS[1], { start: 1_750_000_000_000 + offset })];
      try {
        for (const [i, c] of commands.entries()) await run(brains, c, i);
        for (let i = 0; i < 10; i++) if ((await exchange(brains[0], brains[1])) + (await exchange(brains[1], brains[0])) === 0) break;
        const [a, b] = brains;
        assert.deepEqual(syncedTables(a), syncedTables(b));
        const m = model(a, seed);
        const tables = syncedTables(a);
        const snapshot = m.snapshot();
        const shownNotes = Object.keys(snapshot.notes).flatMap((id) => {
          const v = m.note(id);
          return v?.current ? [{ id, text: v.current.body.text }] : [];
        });
        assert.deepEqual((tables.notes as { id: string; text: string }[]).map(({ id, text }) => ({ id, text })), shownNotes);
        for (const id of Object.keys(snapshot.notes)) {
          const view = m.note(id)!;
          assert.deepEqual(noteRevisions(a.mem.store, id), view);
          assert.deepEqual(noteRevisions(b.mem.store, id), view);
        }
        const shownEpisodes = Object.keys(snapshot.episodes).flatMap((id) => {
          const e = m.episode(id);
          return e ? [{ id, summary: e.summary }] : [];
        });
        assert.deepEqual((tables.episodes as { id: string; summary: string }[]).map(({ id, summary }) => ({ id, summary })), shownEpisodes);
        const shownFacts = Object.keys(snapshot.triples).flatMap((id) => {
          const t = m.triple(id);
          return t ? t.sources.map((s) => ({ triple_id: id, source: s.source, confidence: s.confidence })) : [];
        });
        assert.deepEqual(tables.sources, shownFacts);
        assert.equal(a.mem.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM sync_pending')!.n, 0);
      } finally {
        for (const b of brains) await b.mem.close();
      }
    }),
    { numRuns: 25 },
  );
});
