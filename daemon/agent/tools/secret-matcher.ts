// Finds vault secrets in text in every form a provider or a library may echo them (issue 8 §4):
// literal, percent-encoded (encodeURIComponent, form encoding with + for space, either hex case,
// double encoding), JSON-string escaped (\" \\ \/ \uXXXX, nested), HTML entities, base64 and
// base64url at any byte alignment, and any run of RUN or more consecutive characters of a secret,
// which covers partial echoes and masks such as "first 8 + last 4" (sk-proj-…wxyz).
//
// Built once per set of secrets; a scan is linear in the text: a rolling hash over RUN-character
// windows, looked up in one table of every window of every secret form. Encoded text is scanned
// through decoded "views" whose characters map back to spans of the original text, so the span
// removed is the encoded form itself, whatever mix of encodings it used.

/** Characters of a secret that, seen in a row, count as the secret. */
export const RUN = 8;
/** How far a masked form's visible prefix and suffix are looked for around a mask. */
const MASK_REACH = 32;
/** How many characters of a mask run may belong to the secret itself, at either end. */
const MASK_OVERLAP = 3;
/** Decoding passes over encoded text (percent-encoded JSON escapes, doubly encoded strings). */
const MAX_DECODE_PASSES = 3;
const BASE = 0x01000193;
const BASE_POW = powInt(BASE, RUN - 1);

/** A decoded form of the text: view[i] came from original[start[i], end[i]). Raw text has no maps. */
interface View {
  text: string;
  start: Int32Array | null;
  end: Int32Array | null;
}

export type Span = [start: number, end: number];

export class SecretMatcher {
  /** Every form of every secret, space folded to '+' (form encoding writes a space as '+'). */
  private readonly needles: string[] = [];
  /** Needles [0, literalCount) are the secrets themselves, searched for around masks too. */
  private readonly literalCount: number;
  private readonly windows = new Map<number, number[]>();

  constructor(secrets: Iterable<string>) {
    const unique = [...new Set([...secrets].filter((s) => s.length >= RUN))];
    for (const s of unique) this.needles.push(fold(s));
    this.literalCount = this.needles.length;
    for (const s of unique) this.needles.push(...base64Forms(s));
    this.needles.forEach((needle, n) => {
      for (let p = 0; p + RUN <= needle.length; p++) {
        const h = hashAt(needle, p);
        const list = this.windows.get(h);
        if (list) list.push(n, p);
        else this.windows.set(h, [n, p]);
      }
    });
  }

  get empty(): boolean {
    return this.needles.length === 0;
  }

  /** Spans of `text` (sorted, merged) that carry a secret in some form. */
  find(text: string): Span[] {
    if (this.empty || text.length < RUN) return [];
    const spans: Span[] = [];
    let view: View | null = { text, start: null, end: null };
    for (let pass = 0; view !== null && pass <= MAX_DECODE_PASSES; pass++) {
      this.scanRuns(view, spans);
      this.scanMasks(view, spans);
      // A secret may itself hold escape-like text: "AéA%00--" JSON-escaped is "A\\u00e9A%00--", and
      // decoding every kind at once turns its "%00" into NUL. With more than one kind of escape in
      // the text, each kind is also decoded on its own.
      for (const kind of mixedEscapes(view.text)) {
        const single = decodeView(view, kind);
        if (single === null) continue;
        this.scanRuns(single, spans);
        this.scanMasks(single, spans);
      }
      view = decodeView(view);
    }
    return merge(spans);
  }

  /** Maximal runs of RUN or more characters of any needle. */
  private scanRuns(view: View, spans: Span[]): void {
    const t = view.text;
    let i = 0;
    let h = t.length >= RUN ? hashAt(t, 0) : 0;
    while (i + RUN <= t.length) {
      const length = this.windows.has(h) ? this.longestRun(t, i, this.windows.get(h)!) : 0;
      if (length > 0) {
        spans.push(mapSpan(view, i, i + length));
        i += length;
        if (i + RUN <= t.length) h = hashAt(t, i);
        continue;
      }
      if (i + RUN < t.length) h = (Math.imul(h - Math.imul(fc(t, i), BASE_POW), BASE) + fc(t, i + RUN)) | 0;
      i++;
    }
  }

  /** The longest run starting at t[i] among the needle windows whose hash matched; 0 for none. */
  private longestRun(t: string, i: number, candidates: number[]): number {
    let best = 0;
    for (let k = 0; k < candidates.length; k += 2) {
      const needle = this.needles[candidates[k]!]!;
      const p = candidates[k + 1]!;
      let length = 0;
      while (p + length < needle.length && i + length < t.length && fc(t, i + length) === needle.charCodeAt(p + length)) length++;
      if (length >= RUN && length > best) best = length;
    }
    return best;
  }

  /**
   * A visible prefix and suffix of a secret around a mask (sk-pro…wxyz, ab12****yz89), RUN characters
   * together. The secret may itself end or begin with mask characters, so the boundaries are also
   * tried a few characters inside the mask run.
   */
  private scanMasks(view: View, spans: Span[]): void {
    const t = view.text;
    for (const m of t.matchAll(/[*\u2022\u2026]+|\.{2,}/g)) {
      const ms = m.index;
      const me = ms + m[0].length;
      for (let n = 0; n < this.literalCount; n++) {
        const s = this.needles[n]!;
        for (let a = ms; a < Math.min(me, ms + MASK_OVERLAP); a++) {
          const p = visiblePrefix(t, a, s);
          if (p === 0) continue;
          for (let b = Math.max(a + 1, me - MASK_OVERLAP); b <= me; b++) {
            const q = visibleSuffix(t, b, s);
            if (q > 0 && p + q >= RUN) spans.push(mapSpan(view, a - p, b + q));
          }
        }
      }
    }
  }
}

/** Longest p such that t[ms-p, ms) is the first p characters of s. */
function visiblePrefix(t: string, ms: number, s: string): number {
  for (let p = Math.min(ms, s.length - 1, MASK_REACH); p > 0; p--) if (foldedEquals(t, ms - p, s, 0, p)) return p;
  return 0;
}

/** Longest q such that t[me, me+q) is the last q characters of s. */
function visibleSuffix(t: string, me: number, s: string): number {
  for (let q = Math.min(t.length - me, s.length - 1, MASK_REACH); q > 0; q--) if (foldedEquals(t, me, s, s.length - q, q)) return q;
  return 0;
}

function foldedEquals(t: string, ti: number, s: string, si: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (fc(t, ti + k) !== s.charCodeAt(si + k)) return false;
  return true;
}

/** Char code with space folded to '+'. */
const fc = (t: string, i: number): number => {
  const c = t.charCodeAt(i);
  return c === 32 ? 43 : c;
};

const fold = (s: string): string => s.replaceAll(' ', '+');

function hashAt(t: string, i: number): number {
  let h = 0;
  for (let k = 0; k < RUN; k++) h = (Math.imul(h, BASE) + fc(t, i + k)) | 0;
  return h;
}

function powInt(base: number, exp: number): number {
  let r = 1;
  for (let k = 0; k < exp; k++) r = Math.imul(r, base);
  return r;
}

/**
 * Base64 and base64url of the secret's UTF-8 bytes at each of the three byte alignments it can have
 * inside a longer encoded value (Basic auth "user:key", a JSON blob): the characters that depend on
 * the secret's bytes alone. Alignment 0 is the standalone encoding without padding.
 */
export function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms: string[] = [];
  for (let k = 0; k < 3; k++) {
    const padded = Buffer.concat([Buffer.alloc(k), bytes]);
    const std = padded.toString('base64');
    const whole = (k + bytes.length) % 3 === 0;
    const core = k === 0 ? std.replace(/=+$/, '') : std.slice(4, whole ? std.length : std.length - 4);
    if (core.length >= RUN) forms.push(core, core.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return forms;
}

function mapSpan(view: View, a: number, b: number): Span {
  return view.start === null ? [a, b] : [view.start[a]!, view.end![b - 1]!];
}

function merge(spans: Span[]): Span[] {
  if (spans.length < 2) return spans;
  spans.sort((x, y) => x[0] - y[0]);
  const out: Span[] = [spans[0]!];
  for (const s of spans.slice(1)) {
    const last = out[out.length - 1]!;
    if (s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
    else out.push(s);
  }
  return out;
}

const JSON_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const ENTITIES: Record<string, string> = { quot: '"', amp: '&', lt: '<', gt: '>', apos: "'" };
const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(quot|amp|lt|gt|apos));/y;

/** One decoding pass (percent, JSON and HTML escapes); null when the view has nothing to decode. */
type EscapeKind = '%' | '\\' | '&';
const ESCAPE_KINDS: readonly EscapeKind[] = ['%', '\\', '&'];

/** The escape kinds in `t` when there are two or more of them (else none: the full decoding is the same). */
function mixedEscapes(t: string): EscapeKind[] {
  const present = ESCAPE_KINDS.filter((k) => t.includes(k));
  return present.length > 1 ? present : [];
}

/** The text with one pass of escapes decoded: every kind, or only `only`. */
function decodeView(view: View, only?: EscapeKind): View | null {
  const t = view.text;
  // A fresh expression each call: a shared global one would carry its lastIndex into test().
  const special = only === undefined ? /[%\\&]/g : only === '%' ? /%/g : only === '&' ? /&/g : /\\/g;
  if (!special.test(t)) return null;
  // Decoding never lengthens: every escape stands for at most as many UTF-16 units as it spans.
  const start = new Int32Array(t.length);
  const end = new Int32Array(t.length);
  const parts: string[] = [];
  let n = 0;
  let changed = false;
  const emit = (chars: string, i: number, used: number): void => {
    const a = view.start === null ? i : view.start[i]!;
    const b = view.end === null ? i + used : view.end[i + used - 1]!;
    for (let k = 0; k < chars.length; k++, n++) {
      start[n] = a;
      end[n] = b;
    }
  };
  for (let i = 0; i < t.length; ) {
    special.lastIndex = i;
    const next = special.exec(t)?.index ?? t.length;
    if (next > i) {
      parts.push(t.slice(i, next));
      for (let j = i; j < next; j++) emit('.', j, 1);
      i = next;
      continue;
    }
    const [chars, used] = decodeUnit(t, i);
    changed ||= used > 1;
    parts.push(chars);
    emit(chars, i, used);
    i += used;
  }
  return changed ? { text: parts.join(''), start: start.subarray(0, n), end: end.subarray(0, n) } : null;
}

/** The characters the escape at t[i] stands for and how many source characters it used. */
function decodeUnit(t: string, i: number): [string, number] {
  const c = t[i]!;
  if (c === '%') return decodePercent(t, i) ?? [c, 1];
  if (c === '\\') {
    const e = t[i + 1];
    if (e !== undefined && e in JSON_ESCAPES) return [JSON_ESCAPES[e]!, 2];
    if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(t.slice(i + 2, i + 6))) return [String.fromCharCode(parseInt(t.slice(i + 2, i + 6), 16)), 6];
    return [c, 1];
  }
  if (c === '&') {
    ENTITY.lastIndex = i;
    const m = ENTITY.exec(t);
    if (m) {
      const code = m[1] !== undefined ? Number(m[1]) : m[2] !== undefined ? parseInt(m[2], 16) : -1;
      if (code < 0) return [ENTITIES[m[3]!]!, m[0].length];
      if (code <= 0x10ffff) return [String.fromCodePoint(code), m[0].length];
    }
  }
  return [c, 1];
}

/** One UTF-8 character written as %XX escapes (either hex case); null when it is not one. */
function decodePercent(t: string, i: number): [string, number] | null {
  const byteAt = (j: number): number => (t[j] === '%' && /^[0-9a-fA-F]{2}$/.test(t.slice(j + 1, j + 3)) ? parseInt(t.slice(j + 1, j + 3), 16) : -1);
  const lead = byteAt(i);
  if (lead < 0) return null;
  if (lead < 0x80) return [String.fromCharCode(lead), 3];
  const extra = lead >= 0xf0 && lead < 0xf8 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : -1;
  if (extra < 0) return null;
  let code = lead & (0x3f >> extra);
  for (let k = 1; k <= extra; k++) {
    const b = byteAt(i + 3 * k);
    if (b < 0x80 || b >= 0xc0) return null;
    code = (code << 6) | (b & 0x3f);
  }
  return code <= 0x10ffff ? [String.fromCodePoint(code), 3 * (extra + 1)] : null;
}
