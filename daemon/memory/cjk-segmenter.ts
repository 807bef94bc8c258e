// CJK text as searchable units, without ICU or a dictionary (issue 9 item 16; docs/memory.md "CJK").
// FTS5's unicode61 tokenizer keeps a whole run of Han, kana or hangul as one token ("我的密码是"), so
// a word inside it could never match. Each CJK run is indexed instead as its single characters and
// its overlapping character pairs (bigrams), in an extra FTS column; a query asks for the character
// when its run is one character long and for the run's bigrams otherwise, so one character, a word
// and a phrase all match what holds them, and the bigrams, being ordinary FTS terms, get exact
// document frequencies for the idf weights. Korean words are space-separated but carry particles
// ("비밀번호는"): bigrams find "비밀번호" in them too.
//
// Both sides normalise the same way (NFKC: half-width katakana and composed kana as FTS5 keeps them,
// lower case, combining marks dropped as FTS5's remove_diacritics drops them), so every unit written
// here is a term FTS5 stores verbatim (checked against fts5vocab in cjk-segmenter.test.ts).

const CJK_CLASS = '\\p{scx=Han}\\p{scx=Hiragana}\\p{scx=Katakana}\\p{scx=Hangul}\\p{scx=Bopomofo}';
/** A CJK letter or number (punctuation such as 、。「 shares these scripts but separates words). */
const CJK_CHAR = new RegExp(`(?=[\\p{L}\\p{N}])[${CJK_CLASS}]`, 'u');
/** A CJK run with the combining marks inside or after it (dakuten written as separate characters). */
const CJK_RUN = new RegExp(`(?:(?=[\\p{L}\\p{N}])[${CJK_CLASS}]\\p{M}*)+`, 'gu');
/** A token as unicode61 sees it: letters, digits and the marks on them. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const MARKS = /\p{M}+/gu;

export const hasCjk = (text: string): boolean => CJK_CHAR.test(text);

/** NFKC, lower case, no combining marks: the form FTS5 stores CJK units in. */
const fold = (run: string): string => run.normalize('NFKC').toLowerCase().replace(MARKS, '');

/** Characters of a folded run (code points, never UTF-16 halves), keeping only CJK ones. */
const chars = (run: string): string[] => [...fold(run)].filter((c) => CJK_CHAR.test(c));

/** The text split into its CJK runs (folded, non-empty) and the rest (CJK runs blanked out). */
export function splitCjk(text: string): { runs: string[]; rest: string } {
  if (!hasCjk(text)) return { runs: [], rest: text };
  const runs: string[] = [];
  const rest = text.replace(CJK_RUN, (run) => {
    const cs = chars(run).join('');
    if (cs !== '') runs.push(cs);
    return ' ';
  });
  return { runs, rest };
}

/** Every unit of a run that the index holds: each character and each adjacent pair. */
export function runUnits(run: string): string[] {
  const cs = [...run];
  const out = [...cs];
  for (let i = 0; i + 1 < cs.length; i++) out.push(cs[i]! + cs[i + 1]!);
  return out;
}

/** The units a query run asks for: the character itself, or the run's bigrams. */
export function queryUnits(run: string): string[] {
  const cs = [...run];
  if (cs.length === 1) return cs;
  const out: string[] = [];
  for (let i = 0; i + 1 < cs.length; i++) out.push(cs[i]! + cs[i + 1]!);
  return out;
}

/**
 * The extra FTS column of a text: the units of every CJK run, and the non-CJK parts of tokens that
 * hold CJK ("wifi密码" is one unicode61 token; "wifi" must still match it). '' for text without CJK,
 * so Latin-only items index exactly as before.
 */
export function cjkIndexText(text: string): string {
  if (!hasCjk(text)) return '';
  const out: string[] = [];
  for (const [token] of text.matchAll(WORD)) {
    if (!hasCjk(token)) continue;
    const { runs, rest } = splitCjk(token);
    const latin = rest.trim();
    if (latin !== '') out.push(latin);
    for (const run of runs) out.push(...runUnits(run));
  }
  return out.join(' ');
}

/** Every CJK unit of a text (what cjkIndexText indexes for its runs). */
export function cjkUnits(text: string): string[] {
  return splitCjk(text).runs.flatMap(runUnits);
}

// Function words at the edges of a query run carry no meaning for matching, like English stopwords:
// "我的密码是什么" asks for 密码, "パスワードは何ですか" for パスワード, "비밀번호가" for 비밀번호. Only
// the edges are cut, and a single character only when two or more remain, so a word that merely
// contains one (目的, 고양이 → 고양 still inside 고양이) keeps matching what holds it. A run that is
// nothing but a function word asks for nothing, as "the" does.
const STOP_RUNS = new Set(
  `什么 是什么 的 是 我 你 吗 呢 吧 了 在 有 哪里 哪儿 多少 请 请问 怎么 几点 我的
  は の が を に で と も か です ですか 何 何ですか どこ いつ 私 私の 教えて
  내 나의 제 저의 뭐 뭐야 뭐예요 무엇 무엇인가요 어디 어디야 언제 알려줘 알려주세요 좀 은 는 이 가 을 를 의 에`.split(/\s+/),
);
const PREFIXES = ['请问', '请', '告诉我', '我的', '我们的', '私の', '僕の'];
const SUFFIXES = [
  '是什么时候', '什么时候', '是什么', '是多少', '是哪个', '在哪里', '在哪儿', '在哪', '什么', '多少', '哪里', '哪儿', '几点', '吗', '呢', '吧', '了', '的', '是',
  'はなんですか', 'は何ですか', 'はどこですか', 'はいつですか', 'を教えて', 'ですか', 'は何', 'はどこ', 'はいつ', 'って', 'か', 'は', 'の', 'を', 'が', 'に', 'で', 'も',
  '이에요', '입니다', '예요', '이야', '에서', '은', '는', '이', '가', '을', '를', '의', '에', '도', '야', '요',
].sort((a, b) => b.length - a.length);
const MAX_CUTS = 8;

/** A folded query run without its edge function words; '' when it is only a function word. */
export function trimQueryRun(run: string): string {
  let r = run;
  for (let i = 0; i < MAX_CUTS; i++) {
    if (STOP_RUNS.has(r)) return '';
    const keep = (affix: string): boolean => {
      const left = [...r].length - [...affix].length;
      return left >= ([...affix].length === 1 ? 2 : 1);
    };
    const pre = PREFIXES.find((p) => r.startsWith(p) && keep(p));
    if (pre) {
      r = r.slice(pre.length);
      continue;
    }
    const suf = SUFFIXES.find((s) => r.endsWith(s) && keep(s));
    if (!suf) break;
    r = r.slice(0, r.length - suf.length);
  }
  return r;
}

/** A query's CJK units (trimmed runs, in order, repeats kept) and its text with CJK blanked out. */
export function cjkQuery(q: string): { units: string[]; rest: string } {
  const { runs, rest } = splitCjk(q);
  const units: string[] = [];
  for (const run of runs) {
    const r = trimQueryRun(run);
    if (r !== '') units.push(...queryUnits(r));
  }
  return { units, rest };
}
