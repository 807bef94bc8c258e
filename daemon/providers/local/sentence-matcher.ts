// Sentence templates → regular expressions, in the spirit of Home Assistant's local intent
// templates (hassil): `[optional words]`, `(one|of|these)`, `{slot}`. Matching is on whole
// utterances, case-insensitive, with whitespace collapsed and trailing punctuation ignored.
// Compilation happens once at start; a bad template is an error at start, not at match time.
// The slot name `utterance` is reserved: it always holds the whole normalised request.

export interface IntentTemplate {
  intent: string;
  /** Tool to call; none for intents answered directly (help). */
  tool?: string;
  /** Tool arguments; "{slot}" values are filled from the utterance ("{utterance}": all of it). */
  args?: Record<string, string>;
  /** The answer of an intent without a tool (greetings, thanks), filled like the arguments. */
  reply?: string;
  sentences: string[];
}

export interface IntentMatch {
  intent: string;
  tool?: string;
  arguments: Record<string, string>;
  reply?: string;
}

interface Compiled {
  template: IntentTemplate;
  patterns: RegExp[];
}

/** A word `glued` to the slot before it ("{owner}'s") follows it without a space. */
type Token = { kind: 'word'; text: string; glued?: boolean } | { kind: 'group'; alts: string[]; optional: boolean } | { kind: 'slot'; name: string };

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Lower-case-insensitive form used for matching: single spaces, straight apostrophes, no trailing
 * punctuation, and no colon after a leading word ("Remember: …" reads as "Remember …").
 */
export const normalise = (text: string): string =>
  text
    .replace(/[\u2018\u2019]/g, "'")
    .trim()
    .replace(/[\s.!?,;:]+$/u, '')
    .replace(/^([\p{L}']+):\s+/u, '$1 ')
    .replace(/\s+/g, ' ');

export function tokenise(sentence: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sentence.length) {
    const c = sentence[i]!;
    if (c === ' ') {
      i++;
    } else if (c === '[' || c === '(') {
      const close = sentence.indexOf(c === '[' ? ']' : ')', i);
      if (close < 0) throw new Error(`unclosed ${c} in template "${sentence}"`);
      const alts = sentence.slice(i + 1, close).split('|').map((a) => normalise(a).toLowerCase());
      if (alts.some((a) => a === '' || /[[\](){}]/.test(a))) throw new Error(`empty or nested alternative in template "${sentence}"`);
      tokens.push({ kind: 'group', alts, optional: c === '[' });
      i = close + 1;
    } else if (c === '{') {
      const close = sentence.indexOf('}', i);
      const name = close < 0 ? '' : sentence.slice(i + 1, close);
      if (!/^[a-z_][a-z0-9_]*$/.test(name) || name === 'utterance') throw new Error(`bad slot in template "${sentence}"`);
      tokens.push({ kind: 'slot', name });
      i = close + 1;
    } else {
      let end = i;
      while (end < sentence.length && !' [({'.includes(sentence[end]!)) end++;
      const glued = i > 0 && sentence[i - 1] === '}';
      tokens.push({ kind: 'word', text: sentence.slice(i, end).toLowerCase(), ...(glued ? { glued } : {}) });
      i = end;
    }
  }
  return tokens;
}

/**
 * Each token consumes its text plus one following space (a slot followed by a glued word, none); the
 * input gets a trailing space to match.
 */
export function compileSentence(sentence: string): RegExp {
  const tokens = tokenise(sentence);
  const body = tokens
    .map((t, i) => {
      if (t.kind === 'word') return `${escape(t.text)} `;
      const next = tokens[i + 1];
      if (t.kind === 'slot') return `(?<${t.name}>\\S.*?)${next?.kind === 'word' && next.glued ? '' : ' '}`;
      const alt = `(?:${t.alts.map(escape).join('|')}) `;
      return t.optional ? `(?:${alt})?` : alt;
    })
    .join('');
  return new RegExp(`^${body}$`, 'i');
}

export class SentenceMatcher {
  private readonly compiled: Compiled[];

  constructor(templates: readonly IntentTemplate[]) {
    this.compiled = templates.map((template) => ({ template, patterns: template.sentences.map(compileSentence) }));
  }

  match(utterance: string): IntentMatch | null {
    const input = `${normalise(utterance)} `;
    if (input.trim() === '') return null;
    for (const { template, patterns } of this.compiled) {
      for (const re of patterns) {
        const m = re.exec(input);
        if (!m) continue;
        const slots = { ...m.groups, utterance: input.trim() };
        const reply = template.reply === undefined ? {} : { reply: capitalise(fill({ reply: template.reply }, slots).reply!) };
        return { intent: template.intent, ...(template.tool ? { tool: template.tool } : {}), arguments: fill(template.args ?? {}, slots), ...reply };
      }
    }
    return null;
  }
}

const capitalise = (s: string): string => (s === '' ? s : `${s[0]!.toUpperCase()}${s.slice(1)}`);

function fill(args: Record<string, string>, slots: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    out[key] = value.replace(/\{([a-z_][a-z0-9_]*)\}/g, (_, name: string) => (slots[name] ?? '').trim());
  }
  return out;
}
