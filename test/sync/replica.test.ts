// sync/replica.ts against a model: three replicas take random local writes (notes created, edited and
// deleted, the same facts learnt on several brains, facts withdrawn and deleted, episodes written and
// deleted) while a network model between them reorders, duplicates and loses messages, partitions links
// and retransmits from cursors. After every step each replica must equal the sequential model of the
// merge rules applied to the set of ops it has; after healing, all three must be identical and equal
// the model of every op; no acknowledged write may be lost; applying any op again changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { SyncOp } from '../../protocol/sync';
import type { MemorySnapshot } from '../../sync/memory-state';
import { MemoryState } from '../../sync/memory-state';
import type { RegisterState, SourceEntry, Tombstone, TripleParts, TripleState, Version } from '../../sync/merge';
import { Replica } from '../../sync/replica';
import { tripleId } from '../../sync/triple-id';
import { VersionVector } from '../../sync/version-vector';
import { BRAINS, mulberry32, shuffled } from './sync-fixtures';

// ── The model: the merge rules as a function of the set of ops (docs/sync.md, "The model") ────────────
const maxBy = <T extends { hlc: string }>(xs: readonly T[]): T | undefined => xs.reduce<T | undefined>((m, x) => (m === undefined || x.hlc > m.hlc ? x : m), undefined);
const asc = <T extends { hlc: string }>(xs: T[]): T[] => xs.sort((a, b) => (a.hlc < b.hlc ? -1 : 1));
const tombstoneOf = (deletes: readonly SyncOp[]): Tombstone | null => {
  const d = maxBy(deletes);
  return d ? { op_id: d.op_id, origin: d.origin, seq: d.seq, hlc: d.hlc } : null;
};
const above = (t: Tombstone | null) => (x: { hlc: string }) => t === null || x.hlc > t.hlc;

function modelRegister<B>(ops: readonly SyncOp[], revisions: boolean): RegisterState<B> {
  const tombstone = tombstoneOf(ops.filter((o) => o.kind.endsWith('.delete')));
  const puts = ops.filter((o): o is Extract<SyncOp, { kind: 'note.put' | 'episode.put' }> => o.kind === 'note.put' || o.kind === 'episode.put').filter(above(tombstone));
  const superseded = new Map<string, string>();
  for (const p of puts) {
    const base = p.kind === 'note.put' ? p.base : null;
    if (base !== null && (superseded.get(base) ?? '') < p.hlc) superseded.set(base, p.hlc);
  }
  const heads = asc(puts.filter((p) => !superseded.has(p.op_id)).map((p): Version<B> => ({ op_id: p.op_id, hlc: p.hlc, origin: p.origin, base: p.kind === 'note.put' ? p.base : null, body: p.body as B })));
  return { heads: revisions ? heads : heads.slice(-1), superseded: [...superseded.entries()].sort(([a], [b]) => (a < b ? -1 : 1)), tombstone };
}

function modelTriple(ops: readonly SyncOp[]): TripleState {
  const tombstone = tombstoneOf(ops.filter((o) => o.kind === 'triple.delete'));
  const live = ops.filter((o): o is Extract<SyncOp, { kind: 'triple.put' | 'triple.retract' }> => o.kind === 'triple.put' || o.kind === 'triple.retract').filter(above(tombstone));
  const bySource = new Map<string, SourceEntry>();
  for (const o of live) {
    const known = bySource.get(o.body.source);
    if (known === undefined || known.hlc < o.hlc) bySource.set(o.body.source, { confidence: o.kind === 'triple.put' ? o.body.confidence : null, hlc: o.hlc, origin: o.origin, op_id: o.op_id });
  }
  const latest = maxBy(live.filter((o): o is Extract<SyncOp, { kind: 'triple.put' }> => o.kind === 'triple.put'));
  const parts: TripleParts | null = latest ? { subject: latest.body.subject, predicate: latest.body.predicate, object: latest.body.object, hlc: latest.hlc } : null;
  return { parts, sources: [...bySource.entries()].sort(([a], [b]) => (a < b ? -1 : 1)), tombstone };
}

function model(ops: readonly SyncOp[]): MemorySnapshot {
  const byRecord = new Map<string, SyncOp[]>();
  for (const o of ops) byRecord.set(o.record_id, [...(byRecord.get(o.record_id) ?? []), o]);
  const ids = [...byRecord.keys()].sort();
  const of = (prefix: string) => ids.filter((id) => id.startsWith(prefix));
  return {
    notes: Object.fromEntries(of('note_').map((id) => [id, modelRegister(byRecord.get(id)!, true)])),
    episodes: Object.fromEntries(of('ep_').map((id) => [id, modelRegister(byRecord.get(id)!, false)])),
    triples: Object.fromEntries(of('kg_').map((id) => [id, modelTriple(byRecord.get(id)!)])),
  };
}

// ── Commands: local writes and the network ────────────────────────────────────────────────────────────
const FACTS = [
  ['Alice', 'lives in', 'Lisbon'],
  ['alice', 'Lives  In', 'lisbon'], // the same fact, spelt differently on another brain
  ['Bob', 'likes', 'tea'],
  ['the cabin', 'has', 'a wood stove'],
] as const;
const SOURCES = ['user', 'session:s1', 'note:note_x'] as const;

type Command =
  | { t: 'tick'; ms: number }
  | { t: 'create'; r: number; text: number }
  | { t: 'edit'; r: number; pick: number; text: number }
  | { t: 'delete'; r: number; pick: number }
  | { t: 'learn'; r: number; fact: number; source: number; confidence: number }
  | { t: 'withdraw'; r: number; fact: number; source: number }
  | { t: 'forgetFact'; r: number; fact: number }
  | { t: 'episode'; r: number; text: number }
  | { t: 'forgetEpisode'; r: number; pick: number }
  | { t: 'send'; from: number; to: number; max: number; dup: boolean }
  | { t: 'deliver'; from: number; to: number; pick: number }
  | { t: 'lose'; from: number; to: number; pick: number }
  | { t: 'partition'; a: number; b: number }
  | { t: 'heal' };

const r = fc.nat({ max: 2 });
const pick = fc.nat({ max: 1000 });
/** An ordered pair of distinct replicas. */
const pair = fc.tuple(r, fc.nat({ max: 1 })).map(([from, k]) => ({ from, to: (from + 1 + k) % 3 }));
const fact = fc.nat({ max: FACTS.length - 1 });
const source = fc.nat({ max: SOURCES.length - 1 });
const weighted = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
const command: fc.Arbitrary<Command> = fc.oneof(
  weighted(1, fc.record({ t: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 5000 }) })),
  weighted(2, fc.record({ t: fc.constant('create' as const), r, text: fc.nat({ max: 5 }) })),
  weighted(5, fc.record({ t: fc.constant('edit' as const), r, pick, text: fc.nat({ max: 5 }) })),
  weighted(1, fc.record({ t: fc.constant('delete' as const), r, pick })),
  weighted(2, fc.record({ t: fc.constant('learn' as const), r, fact, source, confidence: fc.integer({ min: 1, max: 9 }) })),
  weighted(1, fc.record({ t: fc.constant('withdraw' as const), r, fact, source })),
  weighted(1, fc.record({ t: fc.constant('forgetFact' as const), r, fact })),
  weighted(1, fc.record({ t: fc.constant('episode' as const), r, text: fc.nat({ max: 5 }) })),
  weighted(1, fc.record({ t: fc.constant('forgetEpisode' as const), r, pick })),
  weighted(4, fc.record({ t: fc.constant('send' as const), max: fc.integer({ min: 1, max: 8 }), dup: fc.boolean() }).chain((c) => pair.map((p) => ({ ...c, ...p })))),
  weighted(6, fc.record({ t: fc.constant('deliver' as const), pick }).chain((c) => pair.map((p) => ({ ...c, ...p })))),
  weighted(1, fc.record({ t: fc.constant('lose' as const), pick }).chain((c) => pair.map((p) => ({ ...c, ...p })))),
  weighted(1, fc.record({ t: fc.constant('partition' as const), a: r, b: r })),
  weighted(1, fc.record({ t: fc.constant('heal' as const) })),
);

interface Link {
  up: boolean;
  queue: SyncOp[];
}

class World {
  now = 1_764_000_000_000;
  readonly replicas: Replica[];
  readonly links = new Map<string, Link>();
  /** Every op a local write returned: acknowledged to the user. */
  readonly acknowledged: SyncOp[] = [];
  private created = 0;

  constructor(offsets: readonly number[]) {
    this.replicas = BRAINS.map((brain, i) => new Replica({ brain, physical: () => this.now + offsets[i]! }));
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) if (a !== b) this.links.set(`${a}>${b}`, { up: true, queue: [] });
  }

  link(from: number, to: number): Link | undefined {
    return this.links.get(`${from}>${to}`);
  }

  private write(i: number, change: Parameters<Replica['write']>[0]): void {
    this.acknowledged.push(this.replicas[i]!.write(change));
  }

  private visible(i: number, prefix: 'note_' | 'ep_'): string[] {
    const snap = this.replicas[i]!.state.snapshot();
    const records: Record<string, { heads: readonly unknown[] }> = prefix === 'note_' ? snap.notes : snap.episodes;
    return Object.entries(records).filter(([, s]) => s.heads.length > 0).map(([id]) => id);
  }

  run(c: Command): void {
    switch (c.t) {
      case 'tick':
        this.now += c.ms;
        return;
      case 'create':
        this.write(c.r, { kind: 'note.put', record_id: `note_${(++this.created).toString(36)}`, body: { text: `note ${c.text}`, source: 'user', tags: [], created_at: this.now } });
        return;
      case 'edit': {
        const ids = this.visible(c.r, 'note_');
        const id = ids[c.pick % Math.max(ids.length, 1)];
        const current = id === undefined ? undefined : this.replicas[c.r]!.state.note(id)?.current;
        if (id !== undefined && current) this.write(c.r, { kind: 'note.put', record_id: id, body: { ...current.body, text: `${current.body.text} / edit ${c.text} on ${c.r}` } });
        return;
      }
      case 'delete': {
        const ids = this.visible(c.r, 'note_');
        const id = ids[c.pick % Math.max(ids.length, 1)];
        if (id !== undefined) this.write(c.r, { kind: 'note.delete', record_id: id });
        return;
      }
      case 'learn': {
        const [subject, predicate, object] = FACTS[c.fact]!;
        this.write(c.r, { kind: 'triple.put', record_id: tripleId(subject, predicate, object), body: { subject, predicate, object, source: SOURCES[c.source]!, confidence: c.confidence / 10 } });
        return;
      }
      case 'withdraw': {
        const [subject, predicate, object] = FACTS[c.fact]!;
        this.write(c.r, { kind: 'triple.retract', record_id: tripleId(subject, predicate, object), body: { source: SOURCES[c.source]! } });
        return;
      }
      case 'forgetFact': {
        const [subject, predicate, object] = FACTS[c.fact]!;
        const id = tripleId(subject, predicate, object);
        if (this.replicas[c.r]!.state.triple(id) !== null) this.write(c.r, { kind: 'triple.delete', record_id: id });
        return;
      }
      case 'episode':
        this.write(c.r, {
          kind: 'episode.put',
          record_id: `ep_${(++this.created).toString(36)}`,
          body: { session_id: `s${c.r}`, summary: `talked about ${c.text}`, reason: 'session_end', summariser: 'extractive', message_count: 2, started_at: this.now - 1000, ended_at: this.now, created_at: this.now },
        });
        return;
      case 'forgetEpisode': {
        const ids = this.visible(c.r, 'ep_');
        const id = ids[c.pick % Math.max(ids.length, 1)];
        if (id !== undefined) this.write(c.r, { kind: 'episode.delete', record_id: id });
        return;
      }
      case 'send': {
        // A session resumes from the peer's cursor: what was lost in flight is sent again.
        const link = this.link(c.from, c.to);
        if (!link?.up) return;
        for (const op of this.replicas[c.from]!.opsFor(this.replicas[c.to]!.applied).slice(0, c.max)) link.queue.push(...(c.dup ? [op, op] : [op]));
        return;
      }
      case 'deliver': {
        const link = this.link(c.from, c.to);
        if (!link?.up || link.queue.length === 0) return;
        const [op] = link.queue.splice(c.pick % link.queue.length, 1);
        const result = this.replicas[c.to]!.apply(op);
        assert.notEqual(result.status, 'refused', JSON.stringify(result));
        return;
      }
      case 'lose': {
        const link = this.link(c.from, c.to);
        if (link && link.queue.length > 0) link.queue.splice(c.pick % link.queue.length, 1);
        return;
      }
      case 'partition':
        for (const l of [this.link(c.a, c.b), this.link(c.b, c.a)]) {
          if (l === undefined) continue;
          l.up = false;
          l.queue.length = 0; // in flight when the link went down: lost
        }
        return;
      case 'heal':
        for (const l of this.links.values()) l.up = true;
        return;
    }
  }

  /** Heals every link and delivers until every replica has every op, in a shuffled order with duplicates. */
  settle(seed: number): void {
    const random = mulberry32(seed);
    for (const l of this.links.values()) l.up = true;
    for (let round = 0; round < 10; round++) {
      let sent = 0;
      for (const [key, l] of this.links) {
        const [from, to] = key.split('>').map(Number) as [number, number];
        const ops = this.replicas[from]!.opsFor(this.replicas[to]!.applied);
        sent += ops.length;
        for (const op of shuffled([...l.queue, ...ops, ...ops.filter(() => random() < 0.3)], random)) assert.notEqual(this.replicas[to]!.apply(op).status, 'refused');
        l.queue.length = 0;
      }
      if (sent === 0) return;
    }
    assert.fail('replicas did not converge within 10 rounds of full exchange');
  }
}

const allOps = (replica: Replica): SyncOp[] => replica.opsFor(new VersionVector());

/** Whether a put (or a fact's assertion) survived: shown, kept as a revision, written over, or deleted later. */
function lostWrites(world: World, snap: MemorySnapshot, ops: readonly SyncOp[]): string[] {
  const deletedAfter = (op: SyncOp, kind: string): boolean => ops.some((d) => d.kind === kind && d.record_id === op.record_id && d.hlc > op.hlc);
  const writtenOver = (op: SyncOp): boolean => ops.some((p) => p.kind === 'note.put' && p.base === op.op_id);
  return world.acknowledged.flatMap((op) => {
    switch (op.kind) {
      case 'note.put': {
        const kept = snap.notes[op.record_id]?.heads.some((h) => h.op_id === op.op_id) ?? false;
        return kept || writtenOver(op) || deletedAfter(op, 'note.delete') ? [] : [op.op_id];
      }
      case 'episode.put':
        return snap.episodes[op.record_id]?.heads.some((h) => h.op_id === op.op_id) || deletedAfter(op, 'episode.delete') ? [] : [op.op_id];
      case 'triple.put': {
        const entry = snap.triples[op.record_id]?.sources.find(([s]) => s === op.body.source)?.[1];
        return (entry !== undefined && entry.hlc >= op.hlc) || deletedAfter(op, 'triple.delete') ? [] : [op.op_id];
      }
      default:
        return [];
    }
  });
}

const seen = { histories: 0, mergedFacts: 0, deletedThenEdited: 0, runs: 0 };

void test('model: three replicas under reordering, duplication, loss, partitions and clocks an hour apart converge to the model of all ops, losing no write', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: -3_600_000, max: 3_600_000 }), { minLength: 3, maxLength: 3 }),
      fc.array(command, { minLength: 1, maxLength: 80, size: 'max' }),
      fc.integer(),
      (offsets, commands, seed) => {
        const world = new World(offsets);
        for (const c of commands) {
          world.run(c);
          for (const replica of world.replicas) assert.deepEqual(replica.state.snapshot(), model(allOps(replica)), `replica ${replica.brain} after ${JSON.stringify(c)}`);
        }
        world.settle(seed);
        const [a, b, c] = world.replicas.map((x) => x.state.snapshot()) as [MemorySnapshot, MemorySnapshot, MemorySnapshot];
        assert.deepEqual(b, a);
        assert.deepEqual(c, a);
        const ops = allOps(world.replicas[0]!);
        assert.equal(ops.length, world.acknowledged.length, 'every acknowledged op reached every replica, once');
        assert.deepEqual(a, model(ops));
        assert.deepEqual(lostWrites(world, a, ops), []);
        for (const replica of world.replicas) {
          for (const op of shuffled(ops, mulberry32(seed + 1))) assert.equal(replica.apply(op).status, 'duplicate');
          assert.deepEqual(replica.state.snapshot(), a, 'applying ops again changes nothing');
        }
        // The state itself is idempotent too: every op folded twice, in another order, without a version vector.
        const bare = new MemoryState();
        for (const op of shuffled([...ops, ...ops], mulberry32(seed + 2))) bare.merge(op);
        assert.deepEqual(bare.snapshot(), a);
        seen.runs++;
        if (Object.values(a.notes).some((n) => n.heads.length > 1)) seen.histories++;
        if (Object.values(a.triples).some((t) => new Set(t.sources.map(([, e]) => e.origin)).size > 1)) seen.mergedFacts++;
        if (Object.values(a.notes).some((n) => n.tombstone !== null && n.heads.length > 0)) seen.deletedThenEdited++;
      },
    ),
    { numRuns: 200 },
  );
  // The generator must reach the interesting cases, or the properties above prove little.
  assert.ok(seen.histories > 5, `runs with concurrent edits kept as revisions: ${seen.histories}/${seen.runs}`);
  assert.ok(seen.mergedFacts > 5, `runs with one fact from two brains: ${seen.mergedFacts}/${seen.runs}`);
});

void test('concurrent edits of one note on two brains: the later one is current, the other a revision in the history, on both', () => {
  let now = 1_764_000_000_000;
  const [a, b] = BRAINS.slice(0, 2).map((brain) => new Replica({ brain, physical: () => now })) as [Replica, Replica];
  const created = a.write({ kind: 'note.put', record_id: 'note_1', body: { text: 'wifi is hunter2', source: 'user', tags: [], created_at: now } });
  assert.equal(b.apply(created).status, 'applied');
  now += 10;
  const onA = a.write({ kind: 'note.put', record_id: 'note_1', body: { text: 'wifi is correcthorse', source: 'user', tags: [], created_at: now } });
  now += 10;
  const onB = b.write({ kind: 'note.put', record_id: 'note_1', body: { text: 'wifi is tr0ub4dor', source: 'user', tags: ['home'], created_at: now } });
  assert.equal(onA.kind === 'note.put' && onA.base, created.op_id, 'an edit names the version it was written over');
  a.apply(onB);
  b.apply(onA);
  for (const replica of [a, b]) {
    const view = replica.state.note('note_1')!;
    assert.equal(view.current?.body.text, 'wifi is tr0ub4dor');
    assert.deepEqual(view.history.map((h) => h.body.text), ['wifi is correcthorse'], 'the losing edit is kept, the common ancestor is not');
  }
  // Editing after seeing both writes over the current version only: the revision stays.
  now += 10;
  const resolved = a.write({ kind: 'note.put', record_id: 'note_1', body: { text: 'wifi is tr0ub4dor (new router)', source: 'user', tags: [], created_at: now } });
  b.apply(resolved);
  assert.deepEqual(b.state.note('note_1')!.history.map((h) => h.body.text), ['wifi is correcthorse']);
  assert.deepEqual(a.state.snapshot(), b.state.snapshot());
});

void test('a delete wins over older puts, a later edit brings the note back, and an older put stays deleted', () => {
  let now = 1_764_000_000_000;
  const [a, b] = BRAINS.slice(0, 2).map((brain) => new Replica({ brain, physical: () => now })) as [Replica, Replica];
  const body = { text: 'gate code 1234', source: 'user', tags: [], created_at: now };
  const put = a.write({ kind: 'note.put', record_id: 'note_2', body });
  b.apply(put);
  now += 5;
  const oldEdit = a.write({ kind: 'note.put', record_id: 'note_2', body: { ...body, text: 'gate code 4321' } });
  now += 5;
  const del = b.write({ kind: 'note.delete', record_id: 'note_2' });
  assert.equal(b.apply(oldEdit).status, 'applied');
  assert.equal(b.state.note('note_2')!.deleted, true, 'the edit is older than the delete: it stays deleted');
  a.apply(del);
  assert.equal(a.state.note('note_2')!.deleted, true);
  now += 5;
  const revived = a.write({ kind: 'note.put', record_id: 'note_2', body: { ...body, text: 'gate code 9999' } });
  b.apply(revived);
  for (const x of [a, b]) assert.equal(x.state.note('note_2')!.current?.body.text, 'gate code 9999');
  assert.deepEqual(a.state.snapshot(), b.state.snapshot());
});

void test('the same fact learnt on two brains is one fact with both sources; a delete on one removes it everywhere', () => {
  let now = 1_764_000_000_000;
  const [a, b] = BRAINS.slice(0, 2).map((brain) => new Replica({ brain, physical: () => now })) as [Replica, Replica];
  const id = tripleId('Alice', 'lives in', 'Lisbon');
  assert.equal(tripleId('  alice ', 'LIVES   in', 'lisbon'), id);
  const onA = a.write({ kind: 'triple.put', record_id: id, body: { subject: 'Alice', predicate: 'lives in', object: 'Lisbon', source: 'session:s1', confidence: 0.5 } });
  now += 1;
  const onB = b.write({ kind: 'triple.put', record_id: id, body: { subject: 'alice', predicate: 'lives in', object: 'lisbon', source: 'user', confidence: 0.5 } });
  a.apply(onB);
  b.apply(onA);
  for (const x of [a, b]) {
    const fact = x.state.triple(id)!;
    assert.deepEqual(fact.sources.map((s) => s.source), ['session:s1', 'user']);
    assert.equal(fact.confidence, 0.75, 'noisy-or of both sources');
    assert.equal(fact.subject, 'alice', 'the latest spelling');
  }
  now += 1;
  const withdrawn = a.write({ kind: 'triple.retract', record_id: id, body: { source: 'user' } });
  b.apply(withdrawn);
  assert.deepEqual(b.state.triple(id)!.sources.map((s) => s.source), ['session:s1']);
  now += 1;
  b.apply(a.write({ kind: 'triple.delete', record_id: id }));
  assert.equal(b.state.triple(id), null);
  assert.deepEqual(a.state.snapshot(), b.state.snapshot());
});

void test('apply refuses malformed, forged and far-future ops with a typed result and counts them; the op applies once the clock allows', () => {
  let now = 1_764_000_000_000;
  const hour = 3_600_000;
  const ahead = new Replica({ brain: BRAINS[0], physical: () => now + 2 * hour });
  const here = new Replica({ brain: BRAINS[1], physical: () => now, maxSkewMs: hour });
  const op = ahead.write({ kind: 'note.put', record_id: 'note_3', body: { text: 'from the future', source: 'user', tags: [], created_at: now } });
  assert.deepEqual({ ...here.apply(op), detail: '' }, { status: 'refused', reason: 'clock_skew', detail: '' });
  assert.equal(here.state.note('note_3'), undefined);
  assert.equal(here.applied.has(BRAINS[0], 1), false, 'a refused op is not marked applied: a retransmission can still apply it');
  assert.equal(here.apply({ ...op, body: { text: '' } }).status, 'refused');
  assert.equal(here.apply('not an op').status, 'refused');
  assert.equal(here.apply({ ...op, op_id: `${BRAINS[2]}:1` }).status, 'refused', 'an op id that is not origin:seq');
  assert.equal(here.apply({ ...op, origin: BRAINS[2], op_id: `${BRAINS[2]}:1` }).status, 'refused', 'another brain\'s stamp');
  const fact = ahead.write({ kind: 'triple.put', record_id: tripleId('a', 'b', 'c'), body: { subject: 'a', predicate: 'b', object: 'c', source: 'user', confidence: 0.5 } });
  assert.ok(fact.kind === 'triple.put');
  assert.equal(here.apply({ ...fact, body: { ...fact.body, object: 'd' } }).status, 'refused', 'a fact under another fact\'s id');
  assert.deepEqual(here.refusals, { malformed: 2, forged: 3, clock_skew: 1 });
  now += 2 * hour; // this brain's clock has caught up: the retransmitted op is within the bound
  assert.equal(here.apply(op).status, 'applied');
  assert.equal(here.state.note('note_3')?.current?.body.text, 'from the future');
});
