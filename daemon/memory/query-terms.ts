// A search query as terms: content words (stopwords dropped), stemmed like the FTS5 index, each kept
// with the word it came from, because FTS5 stems query words itself and Porter is not idempotent
// ("agreed" → "agre" → "agr"): the index is asked with the original word, JS compares stems.
// CJK runs become character and bigram units (cjk-segmenter.ts), which no stemmer touches.
import { cjkQuery, cjkUnits } from './cjk-segmenter';
import { porterStem } from './porter-stemmer';
import { contentWords, words } from '../kernel/text';

export interface QueryTerm {
  stem: string;
  /** The first query word with this stem, as sent to FTS5 (quoted, so OR/NOT/NEAR are plain words). */
  word: string;
}

const MAX_TERMS = 16;
const memo = new Map<string, string>();
const MEMO_MAX = 50_000;
const MEMO_WORD_MAX = 64;

/** porterStem with a bounded memo: documents repeat words, and search stems every candidate. */
export function stem(word: string): string {
  // A run of letters without spaces (CJK, a pasted blob) is one "word" of up to a message's length;
  // memoised, 50,000 of them would hold gigabytes. Only word-sized words are worth remembering.
  if (word.length > MEMO_WORD_MAX) return porterStem(word);
  let s = memo.get(word);
  if (s === undefined) {
    if (memo.size >= MEMO_MAX) memo.clear();
    s = porterStem(word);
    memo.set(word, s);
  }
  return s;
}

/** Content words first (a query without CJK gives exactly these), then CJK units; at most MAX_TERMS. */
export function queryTerms(q: string): QueryTerm[] {
  const seen = new Map<string, QueryTerm>();
  const { units, rest } = cjkQuery(q);
  for (const word of contentWords(rest)) {
    if (seen.size >= MAX_TERMS) break;
    const s = stem(word);
    if (!seen.has(s)) seen.set(s, { stem: s, word });
  }
  for (const unit of units) {
    if (seen.size >= MAX_TERMS) break;
    if (!seen.has(unit)) seen.set(unit, { stem: unit, word: unit });
  }
  return [...seen.values()];
}

/** FTS5 MATCH expression: the terms' words, quoted, joined by OR or AND. */
export function ftsExpression(terms: readonly QueryTerm[], op: 'OR' | 'AND'): string {
  return terms.map((t) => `"${t.word.replace(/"/g, '""')}"`).join(` ${op} `);
}

/**
 * The stems of a document's words (all words: a stopword in a query never reaches this) and its CJK
 * units: every term a query could hold that the text holds.
 */
export function documentStems(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of words(text)) out.add(stem(w));
  for (const u of cjkUnits(text)) out.add(u);
  return out;
}
