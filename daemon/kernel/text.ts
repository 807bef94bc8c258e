// The brain's shared text helpers: `clip` for display, and the content words of an utterance for
// routing (agent/router), the digital twin's evidence matching (identity/) and the local agent's intents
// and recall answers (providers/local/): lower-cased, stop words dropped, a plural "s" folded.
// Deliberately simple and deterministic (no model needed).
//
// Memory search has a tokenizer of its own (memory/text-terms.ts: FTS5-shaped words, its own stop
// words, stemming and CJK characters, the same on both sides of an index); it is not this one, and
// changing one does not change the other.
export { clip } from '../../protocol/clip';

const STOP = new Set(
  (
    'a an the and or but if of to in on at by for with from as is are was were be been being am do does did have has had ' +
    'i me my mine you your yours we our us he she it its they them their this that these those there here what which who whom ' +
    'whose when where why how can could would should will shall may might must not no yes please tell know about just really ' +
    'some any all more most very so too than then also into over under up down out off again once let lets me give show get ' +
    'go make like want need question thing one'
  ).split(' '),
);

/** Content words of `text`, each once, in order of first appearance. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (raw.length < 2 || STOP.has(raw)) continue;
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
