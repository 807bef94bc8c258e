// A search query as terms: content words (stopwords dropped), stemmed like the FTS5 index, each kept
// with the word it came from, because FTS5 stems query words itself and Porter is not idempotent
// ("agreed" → "agre" → "agr"): the index is asked with the original word, JS compares stems.
import { porterStem } from './porter-stemmer';
import { contentWords, words } from './text-terms';

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

export function queryTerms(q: string): QueryTerm[] {
  const seen = new Map<string, QueryTerm>();
  for (const word of contentWords(q)) {
    const s = stem(word);
    if (!seen.has(s)) seen.set(s, { stem: s, word });
    if (seen.size >= MAX_TERMS) break;
  }
  return [...seen.values()];
}

/** FTS5 MATCH expression: the terms' words, quoted, joined by OR or AND. */
export function ftsExpression(terms: readonly QueryTerm[], op: 'OR' | 'AND'): string {
  return terms.map((t) => `"${t.word.replace(/"/g, '""')}"`).join(` ${op} `);
}

/** The stems of a document's words (all words: a stopword in a query never reaches this). */
export function documentStems(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of words(text)) out.add(stem(w));
  return out;
}
