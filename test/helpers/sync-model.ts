// What a test told brains that sync and they acknowledged, and the check that brains converged on it:
// every acknowledged note as last written (unless a later delete removed it), once; every episode
// not deleted, once; every fact once, with every source that asserted it; and every brain holding
// exactly the same. An episode is written the way a brain writes one: a chat session, closed; what
// its turns themselves remembered (notes, facts) is taken into the model too.
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import type { WebSocket } from 'ws';
import type { BrainMessage, BrainMessageOf } from '../../protocol/session';
import { until } from './poll';
import { expectStatus, post, syncedState, type ApiBrain, type NoteItem, type SyncedState } from './sync-brains';

/** A brain a chat session can be opened on (/v1/session, as an admin client). */
export interface SessionBrain extends ApiBrain {
  session(): WebSocket;
}

/** The next frame of `type` the brain sends on `ws`. */
function frame<T extends 'session_opened' | 'text_response' | 'session_closed'>(ws: WebSocket, type: T): Promise<BrainMessageOf<T>> {
  return new Promise((resolve) => {
    const on = (data: Buffer): void => {
      const m = JSON.parse(data.toString('utf8')) as BrainMessage;
      if (m.type !== type) return;
      ws.off('message', on);
      resolve(m as BrainMessageOf<T>);
    };
    ws.on('message', on);
  });
}

/** Opens a session, says each of `turns` in turn, closes it: resolves with the episode the brain wrote. */
async function chatEpisode(ws: WebSocket, turns: readonly string[]): Promise<string> {
  await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
  const opened = frame(ws, 'session_opened');
  ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  const sid = (await opened).session_id;
  for (const text of turns) {
    const answered = frame(ws, 'text_response');
    ws.send(JSON.stringify({ type: 'text_command', session_id: sid, payload: { text } }));
    await answered;
  }
  const closed = frame(ws, 'session_closed');
  ws.send(JSON.stringify({ type: 'session_close', session_id: sid, payload: {} }));
  const episode = (await closed).payload.episode_id;
  ws.close();
  assert.ok(episode !== null, 'closing a session with a turn writes an episode');
  return episode;
}

/** What the brains were told and acknowledged: each note's text (null once deleted), each fact's sources. */
export class Model {
  readonly notes = new Map<string, string | null>();
  readonly triples = new Map<string, Set<string>>();
  readonly episodes = new Set<string>();

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

  /** A chat session on `brain` with these turns, closed: its episode, and whatever the turns remembered. */
  async episode(brain: SessionBrain, turns: readonly string[]): Promise<string> {
    const before = await syncedState(brain);
    const id = await chatEpisode(brain.session(), turns);
    this.episodes.add(id);
    this.adopt(before, await syncedState(brain));
    return id;
  }

  async removeEpisode(brain: ApiBrain, id: string): Promise<void> {
    await expectStatus(brain, 200, `/api/memory/episodes/${id}`, { method: 'DELETE' });
    this.episodes.delete(id);
  }

  /** Notes and fact sources that appeared on a brain between two readings and that the model does not know: the brain wrote them itself. */
  private adopt(before: SyncedState, after: SyncedState): void {
    const known = new Set(before.notes.map((n) => n.id));
    for (const n of after.notes) if (!known.has(n.id) && !this.notes.has(n.id)) this.notes.set(n.id, n.text);
    for (const t of after.triples) for (const { source } of t.sources) this.triples.set(t.id, (this.triples.get(t.id) ?? new Set()).add(source));
  }

  expected(): { notes: NoteItem[]; episodes: string[]; triples: { id: string; sources: string[] }[] } {
    const notes = [...this.notes].filter((e): e is [string, string] => e[1] !== null).map(([id, text]) => ({ id, text }));
    const triples = [...this.triples].map(([id, sources]) => ({ id, sources: [...sources].sort() }));
    return { notes: notes.sort((a, b) => a.id.localeCompare(b.id)), episodes: [...this.episodes].sort(), triples: triples.sort((a, b) => a.id.localeCompare(b.id)) };
  }
}

/** Waits until every brain holds the same notes, episodes and facts, then checks they are exactly what was acknowledged. */
export async function converged(brains: readonly (ApiBrain & { label: string })[], model: Model, timeoutMs = 60_000): Promise<void> {
  let last = '';
  const state = await until(
    () => `identical notes, episodes and facts on ${brains.map((b) => b.label).join(', ')}; last seen:\n${last}`,
    async () => {
      const states = await Promise.all(brains.map(syncedState));
      last = states.map((s, i) => `${brains[i]!.label}: ${s.notes.length} notes, ${s.episodes.length} episodes, ${s.triples.length} facts`).join('\n');
      return states.every((s) => isDeepStrictEqual(s, states[0])) ? states[0] : undefined;
    },
    timeoutMs,
  );
  const want = model.expected();
  assert.deepEqual(state.notes, want.notes, 'every acknowledged note, as last written, once; deleted ones gone');
  assert.deepEqual(
    state.episodes.map((e) => e.id),
    want.episodes,
    'every episode written and not deleted, once',
  );
  assert.deepEqual(
    state.triples.map((t) => ({ id: t.id, sources: t.sources.map((s) => s.source) })),
    want.triples,
    'every fact once, with every source that asserted it',
  );
}
