// The offline half of knowledge extraction (spec 1.1 "update the knowledge graph"): a small rule set
// that turns what the user states — "remember my wifi password is X", "my dog is called Rex", "mum's
// birthday is 3 May", "the bins go out on Tuesday", "I put my passport in the drawer" — into
// (subject, predicate, object) triples. It only splits the user's own words: nothing is invented,
// questions and commands yield nothing, and every part stays within the knowledge graph's limits.

export interface StatedTriple {
  subject: string;
  predicate: string;
  object: string;
}

const PREFIX = /^(?:please\s+)?(?:remember|note|don't forget|do not forget|keep in mind|(?:save|make) a note|reminder|memo)(?::\s*|\s+)(?:that\s+)?/i;
const QUESTION_START = /^(?:what|what's|whats|when|when's|where|where's|who|who's|whom|whose|which|why|how|is|are|am|was|were|do|does|did|can|could|would|should|will|shall|may|have|has)\b/i;
const PRONOUN_START = /^(?:it|this|that|there|here|he|she|they|we|you|i|these|those|nothing|everything|something)\b/i;
const PLACE = '(?:in|on|under|behind|at|inside|next to|beside|near|above|below)';

const MAX_SUBJECT_WORDS = 6;
const MAX_OBJECT_WORDS = 12;
/** protocol/memory.ts TripleInput bounds. */
const MAX = { subject: 200, predicate: 100, object: 500 } as const;

type Rule = (s: string) => StatedTriple | null;

const RULES: readonly Rule[] = [
  // "I put my passport in the top drawer" → (user's passport, is in, the top drawer)
  (s) => at(new RegExp(`^i (?:put|left|keep|hid|parked|stored|leave) (.+?) (${PLACE}) (.+)$`, 'i').exec(s), (m) => triple(m[1]!, `is ${m[2]!.toLowerCase()}`, m[3]!)),
  // "I am allergic to cats" → (user, is, allergic to cats)
  (s) => at(/^i(?: am|'m) (.+)$/i.exec(s), (m) => ({ subject: 'user', predicate: 'is', object: m[1]! })),
  // "my dog is called Rex", "my sister's name is Ana" → (user's dog, is called, Rex)
  (s) => at(/^(.+?) (?:is|are|was|were) (?:called|named) (.+)$/i.exec(s) ?? /^(.+?)'s name is (.+)$/i.exec(s), (m) => triple(m[1]!, 'is called', m[2]!)),
  // "the bins go out on Tuesday", "the window cleaner comes on Mondays"
  (s) => at(/^(.+?) ((?:go|goes|come|comes|is collected|are collected)(?: out)?(?: (?:on|every|at|in))?) (.+)$/i.exec(s), (m) => triple(m[1]!, m[2]!.toLowerCase(), m[3]!)),
  // "the spare key is under the blue pot", "mum's birthday is on 3 May"
  (s) => at(new RegExp(`^(.+?) (?:is|are) (${PLACE}|due in|due on|due) (.+)$`, 'i').exec(s), (m) => triple(m[1]!, `is ${m[2]!.toLowerCase()}`, m[3]!)),
  // "my wifi password is hunter2", "Lena is allergic to peanuts"
  (s) => at(/^(.+?) (is|are|was|were) (.+)$/i.exec(s), (m) => triple(m[1]!, m[2]!.toLowerCase(), m[3]!)),
];

/** The triples one user message states; empty for questions, commands and anything the rules do not cover. */
export function statedTriples(text: string): StatedTriple[] {
  const raw = text.replace(/[\u2018\u2019]/g, "'").replace(/\s+/g, ' ').trim();
  if (raw.endsWith('?')) return [];
  const s = raw.replace(PREFIX, '').replace(/[\s.!;,]+$/u, '');
  if (s === '' || QUESTION_START.test(s)) return [];
  for (const rule of RULES) {
    const t = rule(s);
    if (t) return [t];
  }
  return [];
}

const at = <T>(m: RegExpExecArray | null, f: (m: RegExpExecArray) => T | null): T | null => (m ? f(m) : null);

function triple(subjectPhrase: string, predicate: string, objectPhrase: string): StatedTriple | null {
  const subject = entity(subjectPhrase);
  const object = objectPhrase.trim();
  if (subject === null || object === '' || words(object) > MAX_OBJECT_WORDS) return null;
  if (subject.length > MAX.subject || predicate.length > MAX.predicate || object.length > MAX.object) return null;
  return { subject, predicate, object };
}

/** "my dog" → "user's dog"; "the garage code" → "garage code"; "Mum's birthday", "Lena" kept; anything else: not a subject. */
function entity(phrase: string): string | null {
  const p = phrase.trim();
  if (p === '' || words(p) > MAX_SUBJECT_WORDS || PRONOUN_START.test(p)) return null;
  const mine = /^my (.+)$/i.exec(p);
  if (mine) return `user's ${mine[1]!}`;
  const the = /^the (.+)$/i.exec(p);
  if (the) return the[1]!;
  if (/^our /i.test(p) || /^[\p{L}\p{N}-]+'s\b/iu.test(p)) return p;
  // A name: capitalised words only ("Lena", "Dr Patel").
  return /^\p{Lu}[\p{L}.-]*(?: \p{Lu}[\p{L}.-]*){0,2}$/u.test(p) ? p : null;
}

const words = (s: string): number => s.split(' ').filter((w) => w !== '').length;
