// Words of a text the way FTS5's `porter unicode61 remove_diacritics 2` tokenizer sees them: runs of
// letters and digits, case-folded, diacritics removed. Stopwords carry no meaning for matching (a
// query whose only overlap with a note is "the" must find nothing), so queries drop them.
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
