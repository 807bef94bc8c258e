// The lexical half of search: FTS5 finds candidates, JS scores them by the idf-weighted share of the
// query terms they contain (coverage), so a score means the same in every tier and for every query
// length. Candidates are pruned exactly: an item can only reach the floor by containing one of the
// rarest terms whose weights reach (1 - floor) of the total, so only those are ORed into the MATCH.
import type { Store } from '../store/store';
import type { Tier } from '../../protocol/memory';
import { documentStems, ftsExpression, type QueryTerm } from './query-terms';
import type { TermStats } from './term-stats';
import { TIERS, type TierTables } from './tier-tables';
import { isStopword, words } from './text-terms';

export interface CandidateRow {
  seq: number;
  id: string;
  text: string;
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

const FOCUS_WEIGHT = 0.15;

export interface LexicalOptions {
  floor: number;
  /** Most candidates fetched per tier and per MATCH; beyond it the newest matches are kept. */
  cap: number;
}

export function weighTerms(terms: readonly QueryTerm[], stats: TermStats): { term: QueryTerm; weight: number }[] {
  return terms.map((term) => ({ term, weight: stats.idf(term.stem) })).sort((a, b) => b.weight - a.weight);
}

export function lexicalMatches(store: Store, stats: TermStats, terms: readonly QueryTerm[], opts: LexicalOptions): Scored[] {
  if (terms.length === 0) return [];
  const weighted = weighTerms(terms, stats);
  const total = weighted.reduce((s, w) => s + w.weight, 0);
  const out: Scored[] = [];
  for (const tables of TIERS) {
    const rows = candidates(store, stats, tables, weighted, total, opts);
    for (const row of rows) {
      const scored = score(row, tables.tier, weighted, total);
      if (scored.coverage >= opts.floor) out.push(scored);
    }
  }
  return out;
}

function candidates(store: Store, stats: TermStats, t: TierTables, weighted: { term: QueryTerm; weight: number }[], total: number, opts: LexicalOptions): CandidateRow[] {
  const present = weighted.filter((w) => (stats.frequency(w.term.stem).perTier[t.tier] ?? 0) > 0);
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
  const seqs = new Set<number>();
  const pick = (expr: string): void => {
    for (const r of store.all<{ rowid: number }>(`SELECT rowid FROM ${t.fts} WHERE ${t.fts} MATCH ? ORDER BY rowid DESC LIMIT ?`, [expr, opts.cap])) seqs.add(r.rowid);
  };
  const neededDocs = needed.reduce((s, term) => s + (stats.frequency(term.stem).perTier[t.tier] ?? 0), 0);
  // When the OR would be cut by the cap, the items holding every present term are fetched first.
  if (neededDocs > opts.cap && present.length > 1) pick(ftsExpression(present.map((w) => w.term), 'AND'));
  pick(ftsExpression(needed, 'OR'));
  if (seqs.size === 0) return [];
  return store.all<CandidateRow>(
    `SELECT seq, id, ${t.text} AS text, ${t.summary} AS summary, created_at, recall_count, recalled_at FROM ${t.table} WHERE seq IN (${[...seqs].join(',')})`,
  );
}

function score(row: CandidateRow, tier: Tier, weighted: { term: QueryTerm; weight: number }[], total: number): Scored {
  const stems = documentStems(row.text);
  let got = 0;
  const matched = new Set<string>();
  for (const w of weighted) {
    if (stems.has(w.term.stem)) {
      got += w.weight;
      matched.add(w.term.stem);
    }
  }
  const coverage = total > 0 ? got / total : 0;
  const content = words(row.text).filter((w) => !isStopword(w)).length;
  const focus = Math.min(1, (2 * matched.size) / Math.max(1, content));
  return { ...row, tier, coverage, lexical: coverage * (1 - FOCUS_WEIGHT + FOCUS_WEIGHT * focus) };
}

/** Rows for ids found only by vector search. */
export function rowsByIds(store: Store, tier: Tier, ids: readonly string[]): CandidateRow[] {
  if (ids.length === 0) return [];
  const t = TIERS.find((x) => x.tier === tier)!;
  return store.all<CandidateRow>(
    `SELECT seq, id, ${t.text} AS text, ${t.summary} AS summary, created_at, recall_count, recalled_at FROM ${t.table} WHERE id IN (${ids.map(() => '?').join(',')})`,
    ids,
  );
}
