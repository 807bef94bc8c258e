// How the local agent answers a recall question ("what is my wifi password", "where's the bicycle
// pump") from search_memory's hits without a model: the same evidence test the digital twin uses
// (share of the question's content words a hit contains, daemon/identity/digital-twin.ts), then the
// best hit spoken back in the second person ("My dog is called Biscuit" → "Your dog is called
// Biscuit."). Extractive only: it never says more than a stored note or fact says.
import { overlap, terms } from '../../kernel/text';

export interface RecallHit {
  id: string;
  tier: string;
  summary: string;
  relevance: number;
}

/** Share of the question's content words a hit must hold to answer an explicit recall question. */
export const RECALL_MIN_OVERLAP = 0.5;
/** The stricter bar for a request the agent did not understand at all (answering it from memory is a guess). */
export const GUESS_MIN_OVERLAP = 0.6;
const MAX_ANSWERS = 2;

export interface RecallAnswer {
  text: string;
  ids: string[];
}

/**
 * The notes and facts that answer `question`, best first, as one or two sentences; null when none
 * holds enough of the question's content words. Episodes never answer: they are conversation
 * transcripts that mostly repeat an earlier question or the exchange that stored a note.
 */
export function recallAnswer(question: string, hits: readonly RecallHit[], minOverlap = RECALL_MIN_OVERLAP): RecallAnswer | null {
  const q = terms(question);
  if (q.length === 0) return null;
  const scored = hits
    .map((h) => ({ h, score: overlap(q, terms(h.summary)) }))
    .filter((x) => x.h.tier !== 'episode' && x.score >= minOverlap && x.h.summary.trim() !== '')
    .sort((a, b) => b.score - a.score || tierRank(a.h) - tierRank(b.h) || b.h.relevance - a.h.relevance);
  const best = scored[0];
  if (!best) return null;
  const picked: { text: string; id: string; terms: Set<string> }[] = [];
  for (const x of scored) {
    if (x.score < best.score || picked.length >= MAX_ANSWERS) break;
    // A fact extracted from a note says nothing the note does not: its words are all in the note.
    const text = secondPerson(x.h.summary);
    const own = terms(text);
    if (picked.some((p) => own.every((w) => p.terms.has(w)))) continue;
    picked.push({ text, id: x.h.id, terms: new Set(own) });
  }
  return { text: picked.map((p) => p.text).join(' '), ids: picked.map((p) => p.id) };
}

/** Notes first on a tie: a knowledge fact is usually extracted from a note and says less. */
const tierRank = (h: RecallHit): number => (h.tier === 'note' ? 0 : 1);

const SWAPS: readonly [RegExp, string][] = [
  [/\b(?:the )?user's\b/gi, 'your'],
  [/\bI'm\b/gi, "you're"],
  [/\bI am\b/gi, 'you are'],
  [/\bI was\b/gi, 'you were'],
  [/\bI've\b/gi, "you've"],
  [/\bmyself\b/gi, 'yourself'],
  [/\bmine\b/gi, 'yours'],
  [/\bmy\b/gi, 'your'],
  [/\bme\b/gi, 'you'],
  [/\bI\b/gi, 'you'],
];

/** What the user told the brain, said back to them: "I put my passport in the drawer." → "You put your passport in the drawer." */
export function secondPerson(text: string): string {
  let out = text.trim().replace(/[.!?;,\s]+$/u, '');
  for (const [re, to] of SWAPS) out = out.replace(re, to);
  return out === '' ? '' : `${out[0]!.toUpperCase()}${out.slice(1)}.`;
}
