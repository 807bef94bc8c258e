// What a test told brains that sync and they acknowledged, and the check that brains converged on it:
// every acknowledged note as last written (unless a later delete removed it), once; every fact once,
// with every source that asserted it; and every brain holding exactly the same.
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { until } from './poll';
import { expectStatus, post, syncedState, type ApiBrain, type NoteItem } from './sync-brains';

/** What the brains were told and acknowledged: each note's text (null once deleted), each fact's sources. */
export class Model {
  readonly notes = new Map<string, string | null>();
  readonly triples = new Map<string, Set<string>>();

  async note(brain: ApiBrain, text: string): Promise<string> {
    const id = (await expectStatus<NoteItem>(brain, 201, '/api/memory/note', post({ text }))).id;
    this.notes.set(id, text);
    return id;
  }

  async edit(brain: ApiBrain, id: string, text: string, wins = true): Promise<void> {
    await expectStatus(brain, 200, `/api/memory/notes/${id}`, post({ text }, 'PATCH'));
    if (wins) this.notes.set(id, text);
  }

  async remove(brain: ApiBrain, id: string): Promise<void> {
    await expectStatus(brain, 200, `/api/memory/notes/${id}`, { method: 'DELETE' });
    this.notes.set(id, null);
  }

  async fact(brain: ApiBrain, source: string, subject: string, predicate: string, object: string): Promise<void> {
    const r = await expectStatus<{ triples: { id: string }[] }>(brain, 201, '/api/memory/knowledge', post({ source, triples: [{ subject, predicate, object }] }));
    const id = r.triples[0]!.id;
    this.triples.set(id, (this.triples.get(id) ?? new Set()).add(source));
  }

  expected(): { notes: NoteItem[]; triples: { id: string; sources: string[] }[] } {
    const notes = [...this.notes].filter((e): e is [string, string] => e[1] !== null).map(([id, text]) => ({ id, text }));
    const triples = [...this.triples].map(([id, sources]) => ({ id, sources: [...sources].sort() }));
    return { notes: notes.sort((a, b) => a.id.localeCompare(b.id)), triples: triples.sort((a, b) => a.id.localeCompare(b.id)) };
  }
}

/** Waits until every brain holds the same notes and facts, then checks they are exactly what was acknowledged. */
export async function converged(brains: readonly (ApiBrain & { label: string })[], model: Model, timeoutMs = 60_000): Promise<void> {
  let last = '';
  const state = await until(
    () => `identical notes and facts on ${brains.map((b) => b.label).join(', ')}; last seen:\n${last}`,
    async () => {
      const states = await Promise.all(brains.map(syncedState));
      last = states.map((s, i) => `${brains[i]!.label}: ${s.notes.length} notes, ${s.triples.length} facts`).join('\n');
      return states.every((s) => isDeepStrictEqual(s, states[0])) ? states[0] : undefined;
    },
    timeoutMs,
  );
  const want = model.expected();
  assert.deepEqual(state.notes, want.notes, 'every acknowledged note, as last written, once; deleted ones gone');
  assert.deepEqual(
    state.triples.map((t) => ({ id: t.id, sources: t.sources.map((s) => s.source) })),
    want.triples,
    'every fact once, with every source that asserted it',
  );
}
