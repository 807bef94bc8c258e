// The brain's one text module. `words` is the one tokenizer: runs of letters and digits, case-folded,
// diacritics removed — the way FTS5's `porter unicode61 remove_diacritics 2` tokenizer sees them, so
// memory search treats a query like the index it searches (memory adds stemming and CJK units on top:
// memory/query-terms.ts, memory/cjk-segmenter.ts). `STOPWORDS` is the one stop-word list: function
// words and the filler every request to an assistant carries ("please", "remember"). `terms` gives the
// content words of an utterance for routing (agent/router), the digital twin's evidence matching
// (identity/) and the local agent's intents and recall answers (providers/local/): the same words,
// each once, minus the words that say what kind of request it is rather than what it is about
// ("show", "want", "like"), with a plural "s" folded. `clip` cuts text for display. No model needed.
export { clip } from '../../protocol/clip';

const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}+/gu;

export function words(text: string): string[] {
  const folded = text.normalize('NFKD').replace(MARKS, '').toLowerCase();
  return folded.match(WORD) ?? [];
}

// English function words plus conversational filler ("remember", "please") that every query to an
// assistant carries; kept short on purpose: a word here can never be searched for on its own.
export const STOPWORDS: ReadonlySet<string> = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers herself him
  himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
  our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
  these they this those through to too under until up very was we were what when where which while who whom why will
  with would you your yours yourself yourselves s t d ll m re ve y
  please remember recall tell know anything something thing things did does ever said say says ask asked me my mine
  wait ok okay yes yeah hey hi hello thanks thank also get got`.split(/\s+/),
);

export const isStopword = (w: string): boolean => STOPWORDS.has(w);

/** Content words of a text (stopwords and single characters dropped), in order, with repeats. */
export function contentWords(text: string): string[] {
  return words(text).filter((w) => !isStopword(w) && (w.length > 1 || /\p{N}/u.test(w)));
}

/** Words that say what kind of request an utterance is, not what it is about. Search keeps them (a note may be about what someone likes). */
const REQUEST_WORDS: ReadonlySet<string> = new Set('us whose shall may might must really let lets give show go make like want need question one'.split(' '));

/** Content words of an utterance, each once, in order of first appearance, a plural "s" folded. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const raw of words(text)) {
    if (raw.length < 2 || STOPWORDS.has(raw) || REQUEST_WORDS.has(raw)) continue;
    const word = raw.length > 3 && raw.endsWith('s') && !raw.endsWith('ss') ? raw.slice(0, -1) : raw;
    if (!out.includes(word)) out.push(word);
  }
  return out;
}

/** Share of `query` terms that occur in `candidate` (0..1). */
export function overlap(query: readonly string[], candidate: readonly string[]): number {
  if (query.length === 0) return 0;
  const set = new Set(candidate);
  let hits = 0;
  for (const t of query) if (set.has(t)) hits++;
  return hits / query.length;
}
