// Loads the labelled set (test/fixtures/memory-eval.json) into a memory and measures search quality.
// Shared by memory-search.quality.test.ts (asserts floors) and bench/sections/memory.mjs (reports numbers).
//   precision@5: of the results in the top 5 (a floor may return fewer), the share that is expected
//   recall@10:   of the expected items, the share found in the top 10
//   empty-answer accuracy: of the queries about things never stored (or stored and forgotten), the
//                          share answered with nothing
//   answer-first accuracy: of the queries whose note is repeated by a newer episode, the share whose
//                          first result is the note
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MemoryCapability } from '../../../daemon/memory/create-memory';

export interface EvalItem {
  id: string;
  /** 'chat': a session transcript, written through recordEpisode like the agent does. */
  tier: 'note' | 'episode' | 'chat';
  text: string;
  age_days: number;
  messages?: { role: 'user' | 'assistant'; content: string }[];
  /** Forgotten (deleted as a note) once everything is loaded. */
  forget?: boolean;
}
export interface EvalSet {
  items: EvalItem[];
  queries: { q: string; expected: string[]; first?: string }[];
}

export interface EvalMetrics {
  queries: number;
  positive_queries: number;
  empty_queries: number;
  precision_at_5: number;
  recall_at_10: number;
  empty_answer_accuracy: number;
  answer_first_accuracy: number;
  /** Positive queries answered with nothing (the floor was too strict for them). */
  missed_positive: number;
  failures: { q: string; expected: string[]; got: string[] }[];
}

export function loadEvalSet(root: string): EvalSet {
  return JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'memory-eval.json'), 'utf8')) as EvalSet;
}

/** Inserts the items with their ages (the clock is moved per item); returns eval id → memory id. */
export async function loadItems(cap: MemoryCapability, set: EvalSet, clock: { now: number }): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  const start = clock.now;
  for (const item of set.items) {
    clock.now = start - item.age_days * 86_400_000;
    const id =
      item.tier === 'note'
        ? (await cap.memory.remember(item.text)).id
        : item.tier === 'chat'
          ? (await cap.memory.recordEpisode({ sessionId: item.id, messages: item.messages ?? [], reason: 'session_end' }))?.id
          : (await cap.memory.parts.episodes.addEpisode({ sessionId: null, summary: item.text, reason: 'session_end', summariser: 'eval', messageCount: 2, startedAt: null, endedAt: null })).id;
    if (id) ids.set(item.id, id);
  }
  clock.now = start;
  for (const item of set.items) if (item.forget) await cap.memory.forget(ids.get(item.id)!);
  cap.stats.invalidate();
  return ids;
}

export async function evaluate(cap: MemoryCapability, set: EvalSet, ids: Map<string, string>): Promise<EvalMetrics> {
  const back = new Map([...ids].map(([k, v]) => [v, k]));
  let p5 = 0;
  let r10 = 0;
  let positives = 0;
  let empties = 0;
  let emptyRight = 0;
  let missed = 0;
  let firsts = 0;
  let firstRight = 0;
  const failures: EvalMetrics['failures'] = [];
  for (const { q, expected, first } of set.queries) {
    const res = await cap.memory.search(q, { limit: 10 });
    const got = res.results.map((r) => back.get(r.id) ?? r.id);
    if (expected.length === 0) {
      empties++;
      if (got.length === 0) emptyRight++;
      else failures.push({ q, expected, got });
      continue;
    }
    positives++;
    if (first !== undefined) {
      firsts++;
      if (got[0] === first) firstRight++;
      else failures.push({ q, expected: [first], got });
    }
    const top5 = got.slice(0, 5);
    const hits5 = top5.filter((g) => expected.includes(g)).length;
    p5 += top5.length === 0 ? 0 : hits5 / top5.length;
    r10 += got.filter((g) => expected.includes(g)).length / expected.length;
    if (got.length === 0) missed++;
    if (!expected.every((e) => got.slice(0, 10).includes(e)) || hits5 < top5.length) failures.push({ q, expected, got });
  }
  const r = (x: number): number => Math.round(x * 1000) / 1000;
  return {
    queries: set.queries.length,
    positive_queries: positives,
    empty_queries: empties,
    precision_at_5: r(p5 / positives),
    recall_at_10: r(r10 / positives),
    empty_answer_accuracy: r(emptyRight / empties),
    answer_first_accuracy: firsts === 0 ? 1 : r(firstRight / firsts),
    missed_positive: missed,
    failures,
  };
}
