// The lexical half of search: FTS5 finds candidates, and scores are the idf-weighted share of the
// query terms an item contains (coverage), so a score means the same in every tier and for every
// query length. Candidates are pruned exactly: an item can only reach the floor by containing one of
// the rarest terms whose weights reach (1 - floor) of the total, so only those are required by the
// MATCH. Which terms an item holds comes from FTS5's highlight() in the same statement (C in WASM),
// not from re-tokenizing the text in JS: measured 4x cheaper at 100k notes (docs/memory.md).
import type { Store } from '../store/store';
import type { Tier } from '../../protocol/memory';
import { documentStems, ftsExpression, type QueryTerm } from './query-terms';
import type { TermStats } from './term-stats';
import { TIERS, type TierTables } from './tier-tables';

export interface CandidateRow {
  seq: number;
  id: string;
  summary: string;
  created_at: number;
  recall_count: number;
  recalled_at: number | null;
}

export interface Scored extends CandidateRow {
  tier: Tier;
  /** idf-weighted share of query terms contained, in [0, 1]. */
  coverage: number;
  /** coverage, nudged by how much of the item is about the query (short focused items first). */
  lexical: number;
}

interface HighlightedRow extends CandidateRow {
  [column: `h${number}`]: string | null;
  /** Fetched by the all-terms MATCH: holds every present term, so it needs no highlight(). */
  complete?: boolean;
}

const FOCUS_WEIGHT = 0.15;
const OPEN = '\u0001';
const MARK = /\u0001([^\u0002]*)\u0002/g;

export interface LexicalOptions {
  floor: number;
  /** Most candidates fetched per tier and per MATCH; beyond it the newest matches are kept. */
  cap: number;
}

type Weighted = { term: QueryTerm; weight: number };

export function weighTerms(terms: readonly QueryTerm[], stats: TermStats): Weighted[] {
  return terms.map((term) => ({ term, weight: stats.idf(term.stem) })).sort((a, b) => b.weight - a.weight);
}

export function lexicalMatches(store: Store, stats: TermStats, terms: readonly QueryTerm[], opts: LexicalOptions): Scored[] {
  if (terms.length === 0) return [];
  const weighted = weighTerms(terms, stats);
  const total = weighted.reduce((s, w) => s + w.weight, 0);
  const out: Scored[] = [];
  for (const tables of TIERS) {
    const present = weighted.filter((w) => (stats.frequency(w.term.stem).perTier[tables.tier] ?? 0) > 0);
    for (const row of candidates(store, stats, tables, weighted, present, total, opts)) {
      const scored = score(row, tables, weighted, present, total);
      if (scored.coverage >= opts.floor) out.push(scored);
    }
  }
  return out;
}

function candidates(store: Store, stats: TermStats, t: TierTables, weighted: Weighted[], present: Weighted[], total: number, opts: LexicalOptions): HighlightedRow[] {
  if (present.length === 0) return [];
  // Rarest-first prefix whose complement cannot reach the floor on its own.
  const needed: QueryTerm[] = [];
  let rest = total;
  for (const w of weighted) {
    if (rest < opts.floor * total) break;
    rest -= w.weight;
    if (present.includes(w)) needed.push(w.term);
  }
  if (needed.length === 0) return [];
  const all = present.map((w) => w.term);
  const rows = new Map<number, HighlightedRow>();
  const highlights = Array.from({ length: t.columns }, (_, i) => `highlight(${t.fts}, ${i}, char(1), char(2)) AS h${i}`).join(', ');
  const pick = (expr: string, limit: number, complete: boolean): void => {
    // Rows already picked are skipped in SQL (highlight() re-tokenizes every row it returns); one
    // JSON parameter keeps the statement text, and so the cached statement, the same. Rows of the
    // all-terms MATCH hold every present term by definition: no highlight() for them.
    const sql = `SELECT f.rowid AS seq, ${complete ? '' : `${highlights}, `}m.id, ${t.summary.replace(/\b(text|summary|subject|predicate|object)\b/g, 'm.$1')} AS summary, m.created_at, m.recall_count, m.recalled_at
      FROM ${t.fts} f JOIN ${t.table} m ON m.seq = f.rowid WHERE ${t.fts} MATCH ? AND f.rowid NOT IN (SELECT value FROM json_each(?)) ORDER BY f.rowid DESC LIMIT ?`;
    for (const r of store.all<HighlightedRow>(sql, [expr, JSON.stringify([...rows.keys()]), limit])) {
      if (complete) r.complete = true;
      rows.set(r.seq, r);
    }
  };
  const neededDocs = needed.reduce((s, term) => s + (stats.frequency(term.stem).perTier[t.tier] ?? 0), 0);
  // When the OR would be cut by the cap, the items holding every present term are fetched first, and
  // the OR only fills what room they leave: a tier yields at most `cap` candidates.
  if (neededDocs > opts.cap && all.length > 1) pick(ftsExpression(all, 'AND'), opts.cap, true);
  const room = opts.cap - rows.size;
  if (room <= 0) return [...rows.values()];
  // The second clause is always true; it is there so highlight() marks the commoner terms too.
  const or = ftsExpression(needed, 'OR');
  pick(all.length > needed.length ? `(${or}) AND (${ftsExpression(all, 'OR')})` : or, room, false);
  return [...rows.values()];
}

/**
 * coverage: the idf-weighted share of the query's terms the item holds. focus: how much of the item
 * is about the query — twice the distinct query terms it holds over its word count, capped at 1 —
 * nudges short, focused items up by at most FOCUS_WEIGHT.
 */
function score(row: HighlightedRow, t: TierTables, weighted: Weighted[], present: Weighted[], total: number): Scored {
  let got = 0;
  let held = 0;
  if (row.complete) {
    for (const w of present) got += w.weight;
    held = present.length;
  } else {
    const stems = new Set<string>();
    for (let i = 0; i < t.columns; i++) {
      const h = row[`h${i}`];
      if (!h?.includes(OPEN)) continue;
      for (const m of h.matchAll(MARK)) for (const s of documentStems(m[1]!)) stems.add(s);
    }
    for (const w of weighted) {
      if (!stems.has(w.term.stem)) continue;
      got += w.weight;
      held++;
    }
  }
  const coverage = total > 0 ? got / total : 0;
  const focus = Math.min(1, (2 * held) / Math.max(1, wordCount(row.summary)));
  const { seq, id, summary, created_at, recall_count, recalled_at } = row;
  return { seq, id, summary, created_at, recall_count, recalled_at, tier: t.tier, coverage, lexical: coverage * (1 - FOCUS_WEIGHT + FOCUS_WEIGHT * focus) };
}

/** Space-separated words, counted without allocating. */
function wordCount(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = text.charCodeAt(i) <= 32;
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

/** Rows for ids found only by vector search. */
export function rowsByIds(store: Store, tier: Tier, ids: readonly string[]): CandidateRow[] {
  if (ids.length === 0) return [];
  const t = TIERS.find((x) => x.tier === tier)!;
  return store.all<CandidateRow>(`SELECT seq, id, ${t.summary} AS summary, created_at, recall_count, recalled_at FROM ${t.table} WHERE id IN (SELECT value FROM json_each(?))`, [JSON.stringify(ids)]);
}
