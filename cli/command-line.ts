// What an svc command line means (docs/cli.md "Command line"). sade registers the commands and prints
// their help; this module reads argv itself, because sade's parser (mri) gets three things wrong here:
// - values must stay text: mri turns `--label 00123` into the number 123 and `--tags ""` into true;
// - `--no-probe` must negate a boolean flag: mri's strict mode knows only the registered name;
// - spec 4.14 `svc '<message>'`: a command word followed by words the command does not take is a
//   message (`svc stop the music` asks the brain; it does not stop it).
import { closestCommand } from './usage';

export interface Positional {
  name: string;
  required: boolean;
  /** The last positional takes every remaining word, joined by spaces (`svc memory note buy milk`). */
  rest: boolean;
}

export interface CommandSpec {
  /** The command words, e.g. ['key', 'add']. */
  path: readonly string[];
  /** sade's usage line, e.g. `key add <provider> [label]`. */
  usage: string;
  positionals: readonly Positional[];
  /** Option names (without dashes) the command accepts besides the global ones. */
  flags: ReadonlySet<string>;
}

export interface Grammar {
  commands: readonly CommandSpec[];
  /** Options every command (and a message) accepts, e.g. url, home. */
  globalFlags: ReadonlySet<string>;
  /** Options that take no value; `--no-<name>` sets them false. Every other option takes one. */
  booleanFlags: ReadonlySet<string>;
  /** Per command (its words, e.g. `sync pair`): options of booleanFlags that take a value there (`--pin 1234`). */
  valueFlagsOf?: ReadonlyMap<string, ReadonlySet<string>>;
}

export type Flags = Record<string, string | boolean>;

export type CommandLine =
  | { kind: 'meta' }
  | { kind: 'chat'; flags: Flags }
  | { kind: 'message'; text: string; flags: Flags }
  | { kind: 'command'; spec: CommandSpec; args: (string | undefined)[]; flags: Flags }
  | { kind: 'usage'; message: string };

const META = new Set(['-h', '--help', '-v', '--version']);

interface Scanned {
  /** Words and unrecognised dash-tokens in their order (a message keeps both). */
  tokens: { text: string; word: boolean }[];
  flags: Flags;
  meta: boolean;
  problem?: string;
}

function scan(args: readonly string[], booleanFlags: ReadonlySet<string>, valueFlags: ReadonlySet<string>): Scanned {
  const out: Scanned = { tokens: [], flags: {}, meta: false };
  let literal = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (literal || a === '-' || !a.startsWith('-')) {
      out.tokens.push({ text: a, word: true }); // a lone `-` is a word: stdin, where a text is expected
      continue;
    }
    if (a === '--') {
      literal = true;
      continue;
    }
    if (META.has(a)) {
      out.meta = true;
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    const inline = eq < 0 ? undefined : a.slice(eq + 1);
    if (!a.startsWith('--')) out.tokens.push({ text: a, word: false });
    else if (booleanFlags.has(name)) {
      if (inline !== undefined && inline !== 'true' && inline !== 'false') out.problem ??= `--${name} takes no value (or =true, =false)`;
      out.flags[name] = inline !== 'false';
    } else if (name.startsWith('no-') && booleanFlags.has(name.slice(3)) && inline === undefined) out.flags[name.slice(3)] = false;
    else if (valueFlags.has(name)) {
      const value = inline ?? args[++i];
      if (value === undefined) out.problem ??= `--${name} needs a value`;
      else out.flags[name] = value;
    } else out.tokens.push({ text: a, word: false });
  }
  return out;
}

/** The command whose words start `words`, the longest such; undefined when the first word names none. */
function match(words: readonly string[], commands: readonly CommandSpec[]): CommandSpec | undefined {
  let best: CommandSpec | undefined;
  for (const c of commands) {
    if (c.path.length > words.length || !c.path.every((w, i) => words[i] === w)) continue;
    if (!best || c.path.length > best.path.length) best = c;
  }
  return best;
}

/** Reads the line with the grammar's option kinds, then again with its command's own, when it has some. */
function scanFor(args: readonly string[], g: Grammar): Scanned {
  const withKinds = (booleans: ReadonlySet<string>): Scanned => {
    const valueFlags = new Set<string>();
    for (const f of [...g.globalFlags, ...g.commands.flatMap((c) => [...c.flags])]) if (!booleans.has(f)) valueFlags.add(f);
    return scan(args, booleans, valueFlags);
  };
  const first = withKinds(g.booleanFlags);
  const spec = match(wordsOf(first), g.commands);
  const own = spec && g.valueFlagsOf?.get(spec.path.join(' '));
  return own ? withKinds(new Set([...g.booleanFlags].filter((f) => !own.has(f)))) : first;
}

const wordsOf = (s: Scanned): string[] => s.tokens.filter((t) => t.word).map((t) => t.text);

export function parseCommandLine(args: readonly string[], g: Grammar): CommandLine {
  const s = scanFor(args, g);
  if (s.meta) return { kind: 'meta' };
  const words = wordsOf(s);
  const strange = s.tokens.filter((t) => !t.word).map((t) => t.text);
  if (words.length === 0) {
    if (strange.length > 0) return { kind: 'usage', message: `unknown option ${strange[0]}` };
    return s.problem ? { kind: 'usage', message: s.problem } : { kind: 'chat', flags: s.flags };
  }
  const message = (): CommandLine => ({ kind: 'message', text: s.tokens.map((t) => t.text).join(' '), flags: pick(s.flags, g.globalFlags) });
  const spec = match(words, g.commands);
  if (!spec) {
    // A lone near-miss of a command is a typo; with more words it reads as a message.
    const hint = words.length === 1 ? closestCommand(words[0]!, [...new Set(g.commands.map((c) => c.path[0]!))]) : undefined;
    return hint ? { kind: 'usage', message: `unknown command '${words[0]}'; did you mean '${hint}'?` } : message();
  }
  const rest = words.slice(spec.path.length);
  const last = spec.positionals.at(-1);
  if (rest.length > spec.positionals.length && !last?.rest) return message();
  if (strange.length > 0) return { kind: 'usage', message: `unknown option ${strange[0]}` };
  if (s.problem) return { kind: 'usage', message: s.problem };
  const foreign = Object.keys(s.flags).find((f) => !spec.flags.has(f) && !g.globalFlags.has(f));
  if (foreign) return { kind: 'usage', message: `svc ${spec.path.join(' ')} takes no option --${foreign}` };
  const missing = spec.positionals.find((p, i) => p.required && rest[i] === undefined);
  if (missing) return { kind: 'usage', message: `missing <${missing.name}>\nUsage: svc ${spec.usage}` };
  const values = spec.positionals.map((p, i) => (p.rest ? (rest.length > i ? rest.slice(i).join(' ') : undefined) : rest[i]));
  return { kind: 'command', spec, args: values, flags: s.flags };
}

function pick(flags: Flags, names: ReadonlySet<string>): Flags {
  return Object.fromEntries(Object.entries(flags).filter(([k]) => names.has(k)));
}

/** sade's registered tree (name → usage and options); aliases are plain strings. */
export interface SadeTree {
  [name: string]: string | { usage: string; options: [string, string, unknown?][] };
}

/**
 * The grammar of a sade program: each command's words, positionals (`<x>` required, `[x]` optional)
 * and options as registered. sade keeps them in its `tree`; `rest` names commands whose last
 * positional takes the remaining words.
 */
export function grammarOf(tree: SadeTree, booleanFlags: ReadonlySet<string>, rest: ReadonlySet<string>, valueFlagsOf?: ReadonlyMap<string, ReadonlySet<string>>): Grammar {
  const names = (options: [string, string, unknown?][]): Set<string> => {
    const out = new Set<string>();
    for (const [spec] of options) {
      for (const m of spec.matchAll(/--([\w-]+)/g)) out.add(m[1]!.startsWith('no-') && booleanFlags.has(m[1]!.slice(3)) ? m[1]!.slice(3) : m[1]!);
    }
    return out;
  };
  const all = tree.__all__;
  const globalFlags = typeof all === 'object' ? names(all.options) : new Set<string>();
  const commands: CommandSpec[] = [];
  for (const [name, node] of Object.entries(tree)) {
    if (typeof node === 'string' || name.startsWith('__')) continue;
    const parts = node.usage.split(/\s+/).filter(Boolean);
    const path = parts.filter((p) => !/^[<[]/.test(p));
    const params = parts.filter((p) => /^[<[]/.test(p));
    const positionals = params.map((p, i) => ({ name: p.slice(1, -1), required: p.startsWith('<'), rest: i === params.length - 1 && rest.has(path.join(' ')) }));
    commands.push({ path, usage: node.usage, positionals, flags: names(node.options) });
  }
  return { commands, globalFlags, booleanFlags, ...(valueFlagsOf ? { valueFlagsOf } : {}) };
}
