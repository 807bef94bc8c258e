// The Porter (1980) stemmer, as FTS5's `porter` tokenizer applies it, so query terms can be compared
// with indexed terms (document frequencies, which terms an item contains) without asking SQLite.
// test/daemon/memory/porter-stemmer.test.ts checks it against SQLite's own tokenizer with fast-check.
const MAX_TOKEN = 64; // fts5_porter.c FTS5_PORTER_MAX_TOKEN (bytes): longer tokens pass through unchanged

const isVowelAt = (w: string, i: number): boolean => {
  const c = w[i];
  if (c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u') return true;
  return c === 'y' && i > 0 && !isVowelAt(w, i - 1);
};

/** m: the number of VC sequences in the stem ([C](VC)^m[V]). */
function measure(stem: string): number {
  let m = 0;
  let i = 0;
  const n = stem.length;
  while (i < n && !isVowelAt(stem, i)) i++;
  while (i < n) {
    while (i < n && isVowelAt(stem, i)) i++;
    if (i >= n) break;
    while (i < n && !isVowelAt(stem, i)) i++;
    m++;
  }
  return m;
}

const hasVowel = (stem: string): boolean => [...stem].some((_, i) => isVowelAt(stem, i));
// fts5_porter.c tests the step-1b double consonant with IsVowel(c, 0): `y` is a consonant there
// whatever precedes it, so "yyed" → "y" (found by fast-check against SQLite 3.53).
const endsDoubleConsonant = (w: string): boolean => w.length >= 2 && w[w.length - 1] === w[w.length - 2] && !/[aeiou]/.test(w[w.length - 1]!);
/** *o: ends consonant-vowel-consonant, the last not w, x or y. */
function endsCvc(w: string): boolean {
  const n = w.length;
  if (n < 3) return false;
  if (isVowelAt(w, n - 1) || !isVowelAt(w, n - 2) || isVowelAt(w, n - 3)) return false;
  const c = w[n - 1];
  return c !== 'w' && c !== 'x' && c !== 'y';
}

type Rule = readonly [suffix: string, replacement: string];

/** Replaces the first rule whose suffix matches, if the remaining stem passes `cond`. */
function applyRules(w: string, rules: readonly Rule[], cond: (stem: string) => boolean): string {
  for (const [suffix, replacement] of rules) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    return cond(stem) ? stem + replacement : w;
  }
  return w;
}

const STEP2: readonly Rule[] = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'], ['bli', 'ble'],
  ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'], ['ization', 'ize'], ['ation', 'ate'],
  ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'], ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'],
  ['iviti', 'ive'], ['biliti', 'ble'], ['logi', 'log'],
];
const STEP3: readonly Rule[] = [['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', '']];
const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

const byLongest = <T extends readonly [string, string]>(rules: readonly T[]): T[] => [...rules].sort((a, b) => b[0].length - a[0].length);
const STEP2_SORTED = byLongest(STEP2);
const STEP3_SORTED = byLongest(STEP3);
const STEP4_SORTED = [...STEP4].sort((a, b) => b.length - a.length);

function step1a(w: string): string {
  // fts5_porter.c (SQLite 3.53) only rewrites -sses/-ies when something precedes the suffix; any
  // other -es word just loses its s: "ies" → "ie", "sses" → "sse".
  if (w.endsWith('sses') && w.length > 4) return w.slice(0, -2);
  if (w.endsWith('ies') && w.length > 3) return w.slice(0, -2);
  if (w.endsWith('es')) return w.slice(0, -1);
  if (w.endsWith('ss')) return w;
  if (w.endsWith('s')) return w.slice(0, -1);
  return w;
}

function step1b(w: string): string {
  // fts5_porter.c only tries -eed on words longer than the suffix; "eed" itself takes the -ed rule
  // (found by fast-check against SQLite).
  if (w.length > 3 && w.endsWith('eed')) return measure(w.slice(0, -3)) > 0 ? w.slice(0, -1) : w;
  let stem: string | undefined;
  if (w.endsWith('ed') && hasVowel(w.slice(0, -2))) stem = w.slice(0, -2);
  else if (w.endsWith('ing') && hasVowel(w.slice(0, -3))) stem = w.slice(0, -3);
  if (stem === undefined) return w;
  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
  if (endsDoubleConsonant(stem) && !/[lsz]$/.test(stem)) return stem.slice(0, -1);
  if (measure(stem) === 1 && endsCvc(stem)) return `${stem}e`;
  return stem;
}

const step1c = (w: string): string => (w.endsWith('y') && hasVowel(w.slice(0, -1)) ? `${w.slice(0, -1)}i` : w);

function step4(w: string): string {
  for (const suffix of STEP4_SORTED) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    if (measure(stem) <= 1) return w;
    if (suffix === 'ion' && !/[st]$/.test(stem)) return w;
    return stem;
  }
  return w;
}

function step5(w: string): string {
  if (w.endsWith('e')) {
    const stem = w.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !endsCvc(stem))) w = stem;
  }
  if (measure(w) > 1 && w.endsWith('ll')) w = w.slice(0, -1);
  return w;
}

/** Stem of one lower-case token (as produced by kernel/text.ts words()). */
export function porterStem(token: string): string {
  // Like fts5_porter.c, works on any token (non-ASCII letters and digits count as consonants) and
  // bounds by UTF-8 bytes.
  const ascii = /^[\x00-\x7f]*$/.test(token);
  const bytes = ascii ? token : Buffer.from(token, 'utf8').toString('latin1');
  if (bytes.length < 3 || bytes.length > MAX_TOKEN) return token;
  const stem = stemBytes(bytes);
  return ascii ? stem : Buffer.from(stem, 'latin1').toString('utf8');
}

/** The algorithm over a string of bytes (one char per UTF-8 byte, as the C code sees it). */
function stemBytes(token: string): string {
  let w = step1c(step1b(step1a(token)));
  w = applyRules(w, STEP2_SORTED, (s) => measure(s) > 0);
  w = applyRules(w, STEP3_SORTED, (s) => measure(s) > 0);
  return step5(step4(w));
}
