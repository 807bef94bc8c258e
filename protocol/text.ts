// Strings that arrive from outside (request bodies, query strings, path parameters). Every input schema
// in protocol/ builds its strings from these, so one rule holds everywhere (docs/api.md "Input rules"):
// - no NUL: node-sqlite3-wasm binds text NUL-terminated, so "a\u0000b" would be stored as "a" while
//   the 201 echoed all of it;
// - no other control characters where they mean nothing (tab and line breaks stay in multi-line text);
// - no unpaired UTF-16 surrogates: they cannot be encoded as UTF-8, so what is stored would differ
//   from what was sent.
// The patterns hold with and without the regular-expression `u` flag: ajv compiles them with it (a
// surrogate pair is then one code point above U+FFFF), TypeBox's own checker (frame parser, tool
// registry) without it (a pair is then two code units, matched by the second alternative). Either way
// only an unpaired surrogate is left unmatched. Alternatives are disjoint, so the scan is linear.
import { Type, type StringOptions, type TString } from '@sinclair/typebox';

/** Longest id in a path or body; the router's path-parameter limit is the same (daemon/http/request-parsing.ts). */
export const MAX_ID_LENGTH = 200;

const CONTROLS_BUT_TAB_AND_BREAKS = '\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F';
const LINE_BREAKS_AND_TAB = '\\u0009\\u000A\\u000D\\u2028\\u2029';
const SURROGATES = '\\uD800-\\uDFFF';
const PAIR = '[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]';
const NOT_BLANK = '(?=[\\s\\S]*\\S)'; // anchored at the start: one linear scan
const chars = (refused: string): string => `(?:[^${refused}${SURROGATES}]|${PAIR})*`;

/** Multi-line text: tab, LF and CR allowed; other C0/C1 controls, DEL and unpaired surrogates refused. */
export const TEXT_PATTERN = `^${chars(CONTROLS_BUT_TAB_AND_BREAKS)}$`;
/** One line: no control character at all, no line or paragraph separator. */
export const LINE_PATTERN = `^${chars(CONTROLS_BUT_TAB_AND_BREAKS + LINE_BREAKS_AND_TAB)}$`;
/** The same with at least one non-space character (a blank note or question is refused like a blank search). */
export const TEXT_NOT_BLANK_PATTERN = `^${NOT_BLANK}${chars(CONTROLS_BUT_TAB_AND_BREAKS)}$`;
export const LINE_NOT_BLANK_PATTERN = `^${NOT_BLANK}${chars(CONTROLS_BUT_TAB_AND_BREAKS + LINE_BREAKS_AND_TAB)}$`;

/** What a refused string is told, instead of ajv's `must match pattern "<regex>"`. */
export const PATTERN_MESSAGES: Readonly<Record<string, string>> = {
  [TEXT_PATTERN]: 'must not contain control characters other than tab and line breaks (U+0000 included), or unpaired surrogates',
  [LINE_PATTERN]: 'must be one line without control characters (U+0000 included) or unpaired surrogates',
  [TEXT_NOT_BLANK_PATTERN]: 'must contain a non-space character and no control characters other than tab and line breaks (U+0000 included), or unpaired surrogates',
  [LINE_NOT_BLANK_PATTERN]: 'must be one line with a non-space character and without control characters (U+0000 included) or unpaired surrogates',
};

type Options = Omit<StringOptions, 'pattern' | 'format'> & { blank?: boolean };

function text(patterns: { any: string; notBlank: string }, options: Options): TString {
  const { blank = true, ...rest } = options;
  return Type.String({ ...rest, pattern: blank ? patterns.any : patterns.notBlank });
}

/** Multi-line text written by a person (a note, a question, a file). `blank: false` also refuses whitespace only. */
export const Text = (options: Options = {}): TString => text({ any: TEXT_PATTERN, notBlank: TEXT_NOT_BLANK_PATTERN }, options);

/** A single-line value: a name, tag, label, source, triple part. */
export const Line = (options: Options = {}): TString => text({ any: LINE_PATTERN, notBlank: LINE_NOT_BLANK_PATTERN }, options);

/** An id as a client sends it in a path or a body: one line, 1 to MAX_ID_LENGTH characters. */
export const Id = (options: Omit<Options, 'blank'> = {}): TString => Line({ minLength: 1, maxLength: MAX_ID_LENGTH, ...options, blank: false });
