// USER.md and SOUL.md: their first-start templates and how the brain reads them. Both are plain
// Markdown the user may edit by hand; parsing is forgiving (a missing section is an empty value).
import { createHash } from 'node:crypto';

export const SOUL_TEMPLATE = `# SOUL.md — who the assistant is
The brain reads this file at the start of every turn. Edit it freely, or run \`svc setup\`.

## Name
svc

## Personality
A calm, practical assistant for the home. Helpful, and honest about what it does not know.

## Rules
- Never reveal secrets, keys or tokens.
- Ask before doing anything that cannot be undone.
- Say so plainly when you do not know something.

## Style
Short, plain sentences. No filler.
`;

export const USER_TEMPLATE = `# USER.md — about you
The assistant reads this file at the start of every turn, and the digital twin answers from it.
Write facts as "Key: value" lines or short sentences under any heading.

## About
Name:

## Preferences

## Notes
`;

export interface SoulFields {
  name: string;
  personality: string;
  rules: string[];
  style: string;
}

/** Sections keyed by lower-case `## ` heading; text before the first heading is dropped (it is the preamble). */
export function sections(markdown: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of markdown.split(/\r?\n/)) {
    const heading = /^##\s+(.+?)\s*$/.exec(line);
    if (heading) {
      current = [];
      out.set(heading[1]!.toLowerCase(), current);
    } else if (current && line.trim() !== '') {
      current.push(line.trim());
    }
  }
  return out;
}

const bullet = (line: string): string => line.replace(/^[-*+]\s+/, '');

// A field value written into SOUL.md is one line (protocol/identity.ts refuses line breaks). Where that
// line begins with a character that opens a Markdown block — `#` a heading (which sections() would take
// for a new section), `>` a quote, a fence, an HTML block, a list or a thematic break, a table — the
// character is backslash-escaped (CommonMark 2.4), and reading takes the escape off again, so a value
// reads back as it was written and never becomes structure.
const BLOCK_START = /^[#>`~<\-+*_=|\\]/;
const ESCAPED_BLOCK_START = /^\\([#>`~<\-+*_=|\\])/;
/** One line as a field value in the file: line breaks folded to spaces, block syntax escaped. */
export const escapeLine = (value: string): string => {
  const line = value.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();
  return BLOCK_START.test(line) ? `\\${line}` : line;
};
/** The value a line of the file stands for (escapeLine undone). */
export const unescapeLine = (line: string): string => line.replace(ESCAPED_BLOCK_START, '$1');

export function parseSoul(markdown: string): SoulFields {
  const s = sections(markdown);
  const first = s.get('name')?.[0];
  return {
    name: first === undefined ? 'svc' : unescapeLine(first),
    personality: (s.get('personality') ?? []).map(unescapeLine).join(' '),
    rules: (s.get('rules') ?? []).map((line) => unescapeLine(bullet(line))),
    style: (s.get('style') ?? []).map(unescapeLine).join(' '),
  };
}

export function renderSoul(fields: SoulFields): string {
  const rules = fields.rules.length > 0 ? fields.rules.map((r) => `- ${escapeLine(r)}`).join('\n') : '- Say so plainly when you do not know something.';
  return `# SOUL.md — who the assistant is\nThe brain reads this file at the start of every turn. Edit it freely, or run \`svc setup\`.\n\n## Name\n${escapeLine(fields.name)}\n\n## Personality\n${escapeLine(fields.personality)}\n\n## Rules\n${rules}\n\n## Style\n${escapeLine(fields.style)}\n`;
}

/** The user's name from a `Name: …` line, or null while it is blank. */
export function userName(markdown: string): string | null {
  const m = /^\s*(?:[-*]\s*)?name\s*:[ \t]*(\S[^\n]*)$/im.exec(markdown);
  return m ? m[1]!.trim() : null;
}

/**
 * Sets the `Name:` line of USER.md (adds an About section when there is none). The name is one line
 * (line breaks folded); it is inserted by a function, not a replacement string, so `$'` or `$&` in a
 * name are text and cannot copy the rest of the file (its headings included) into the line.
 */
export function withUserName(markdown: string, name: string): string {
  const line = name.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();
  const existing = /^([ \t]*(?:[-*][ \t]*)?name[ \t]*:)[^\r\n]*$/im;
  if (existing.test(markdown)) return markdown.replace(existing, (_match, key: string) => `${key} ${line}`);
  return `${markdown.trimEnd()}\n\n## About\nName: ${line}\n`;
}

/** Statements the digital twin can draw on: every non-empty line under a heading, minus blank `Key:` lines. */
export function userFacts(markdown: string): string[] {
  const facts: string[] = [];
  for (const lines of sections(markdown).values()) {
    for (const line of lines) {
      const text = bullet(line);
      if (/^[^:]{1,60}:\s*$/.test(text)) continue;
      facts.push(text);
    }
  }
  return facts;
}

/** Revision of a file's content (protocol/identity.ts): a PUT naming an older one is refused. */
export const revisionOf = (content: string): string => createHash('sha256').update(content).digest('hex').slice(0, 16);
