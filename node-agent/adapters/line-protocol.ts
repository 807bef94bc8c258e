// Text line framing for serial devices (docs/node-agent.md "Serial devices"). Pure: bytes in, lines
// out; a line in, a reading or a reply out; an action and its params in, the line to write out.
//   - A declared line protocol: each action has a command template ("SET {celsius}") and optionally a
//     reply pattern and an error pattern (regexes whose named groups become the result); telemetry
//     parsers are regexes whose named groups become a reading's fields.
//   - Values: a group listed in `types` is converted to that type; any other becomes a number when it
//     reads as one and stays a string otherwise. A listed conversion that fails means "no match".
//   - A parameter is written only as a finite number, a boolean or a string without control
//     characters: a value can never smuggle a line ending (a second command) onto the wire.
// Nothing here throws on any input line: a line either matches something or is reported unmatched.
import { Type, type Static } from '@sinclair/typebox';
import { ACTION_NAME_PATTERN } from '../../protocol/node';

// ── the framing as the config file declares it (config.ts SerialDevice.framing) ──────────────────
const Strict = { additionalProperties: false } as const;
const FieldTypeSchema = Type.Union([Type.Literal('number'), Type.Literal('integer'), Type.Literal('string'), Type.Literal('boolean')]);
/** How named groups become values: listed groups get that type, others become a number when they read as one. */
const FieldTypes = Type.Record(Type.String({ minLength: 1, maxLength: 64 }), FieldTypeSchema);

export const LineCommand = Type.Object(
  {
    /** What to write, with {param} placeholders: "SET {celsius}". The line ending is appended unless the template ends with one. */
    send: Type.String({ minLength: 1, maxLength: 512 }),
    /** A regex a reply line must match; its named groups are the action's result. Absent: the action does not wait for a reply. */
    reply: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    /** A regex for a reply that means failure (its `message` group, else the line, is the error). */
    error: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    types: Type.Optional(FieldTypes),
  },
  Strict,
);
export type LineCommand = Static<typeof LineCommand>;

export const TelemetryParser = Type.Object(
  {
    /** A regex with named groups: "^TEMP (?<celsius>-?\\d+(\\.\\d+)?)$". */
    match: Type.String({ minLength: 1, maxLength: 512 }),
    /** The device_event's event_type (temperature, humidity, …). */
    event: Type.String({ minLength: 1, maxLength: 64 }),
    types: Type.Optional(FieldTypes),
  },
  Strict,
);
export type TelemetryParser = Static<typeof TelemetryParser>;

export const LineProtocolFraming = Type.Object(
  {
    /** Written after each command (default "\n"); received lines may end in \n or \r\n. */
    line_ending: Type.Optional(Type.Union([Type.Literal('\n'), Type.Literal('\r\n'), Type.Literal('\r')])),
    /** Action name → the line that runs it. Every action of the device needs one. */
    commands: Type.Record(Type.String({ pattern: ACTION_NAME_PATTERN, maxLength: 64 }), LineCommand),
    telemetry: Type.Array(TelemetryParser, { maxItems: 64, default: [] }),
  },
  Strict,
);
export type LineProtocolFraming = Static<typeof LineProtocolFraming>;

/** Longer lines are dropped (a device spewing binary or a wrong baud rate), with a count. */
export const MAX_LINE_CHARS = 4096;

type FieldType = 'number' | 'integer' | 'string' | 'boolean';
type Types = Readonly<Record<string, FieldType>> | undefined;

/** Splits a byte stream into lines (\n, \r\n or \r); empty lines are skipped, overlong ones dropped. */
export class LineSplitter {
  private partial = '';
  private skipping = false;
  /** Lines dropped for being longer than MAX_LINE_CHARS. */
  dropped = 0;

  push(chunk: string): string[] {
    const parts = (this.partial + chunk).split(/\r\n|\n|\r/);
    this.partial = parts.pop() ?? '';
    const lines: string[] = [];
    for (const part of parts) {
      if (this.skipping) this.skipping = false;
      else if (part.length > MAX_LINE_CHARS) this.dropped++;
      else if (part !== '') lines.push(part);
    }
    if (this.partial.length > MAX_LINE_CHARS) {
      this.partial = '';
      if (!this.skipping) this.dropped++;
      this.skipping = true;
    }
    return lines;
  }

  reset(): void {
    this.partial = '';
    this.skipping = false;
  }
}

const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

function convert(text: string, type: FieldType | undefined): string | number | boolean | undefined {
  switch (type) {
    case 'string':
      return text;
    case 'number':
      return NUMBER.test(text.trim()) ? Number(text) : undefined;
    case 'integer':
      return /^[-+]?\d{1,15}$/.test(text.trim()) ? Number(text) : undefined;
    case 'boolean': {
      const t = text.trim().toLowerCase();
      if (['true', '1', 'on', 'yes'].includes(t)) return true;
      if (['false', '0', 'off', 'no'].includes(t)) return false;
      return undefined;
    }
    case undefined:
      return NUMBER.test(text.trim()) && Number.isFinite(Number(text)) ? Number(text) : text;
  }
}

/** The named groups of a match as values, or null when a typed group does not convert. */
function groupsOf(match: RegExpExecArray, types: Types): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(match.groups ?? {})) {
    if (text === undefined) continue;
    const value = convert(text, types?.[name]);
    if (value === undefined) return null;
    out[name] = value;
  }
  return out;
}

// ── templates ────────────────────────────────────────────────────────────────────────────────────
type Piece = { text: string } | { param: string };

/** "SET {celsius}" → pieces; `{{` and `}}` are literal braces. A problem string when malformed. */
export function parseTemplate(template: string): Piece[] | string {
  const pieces: Piece[] = [];
  let text = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if ((c === '{' || c === '}') && template[i + 1] === c) {
      text += c;
      i++;
    } else if (c === '{') {
      const end = template.indexOf('}', i);
      const name = end < 0 ? '' : template.slice(i + 1, end);
      if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) return `a placeholder at character ${i} is not {param_name}`;
      if (text !== '') pieces.push({ text });
      text = '';
      pieces.push({ param: name });
      i = end;
    } else if (c === '}') return `an unmatched "}" at character ${i} (write "}}" for a literal one)`;
    else text += c;
  }
  if (text !== '') pieces.push({ text });
  return pieces;
}

/** A parameter as it may appear on the wire, or why it may not. */
function wireValue(name: string, value: unknown): string | { problem: string } {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : { problem: `${name} must be a finite number` };
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return /[\p{Cc}]/u.test(value) ? { problem: `${name} may not contain control characters` } : value;
  return { problem: value === undefined ? `missing parameter ${name}` : `${name} must be a number, a boolean or a string` };
}

// ── compiled protocol ────────────────────────────────────────────────────────────────────────────
export interface CompiledCommand {
  readonly pieces: readonly Piece[];
  readonly reply: RegExp | null;
  readonly error: RegExp | null;
  readonly types: Types;
}

export type ReplyMatch = { ok: true; result: Record<string, unknown> } | { ok: false; error: string };

export class LineProtocol {
  private constructor(
    readonly lineEnding: string,
    private readonly commands: ReadonlyMap<string, CompiledCommand>,
    private readonly parsers: readonly { match: RegExp; event: string; types: Types }[],
  ) {}

  /** Compiles a framing that lineProtocolProblems() accepted (throws otherwise: a programming error). */
  static compile(framing: LineProtocolFraming): LineProtocol {
    const commands = new Map<string, CompiledCommand>();
    for (const [action, c] of Object.entries(framing.commands)) {
      const pieces = parseTemplate(c.send);
      if (typeof pieces === 'string') throw new Error(`commands.${action}.send: ${pieces}`);
      commands.set(action, { pieces, reply: c.reply !== undefined ? new RegExp(c.reply) : null, error: c.error !== undefined ? new RegExp(c.error) : null, types: c.types });
    }
    const parsers = framing.telemetry.map((p: TelemetryParser) => ({ match: new RegExp(p.match), event: p.event, types: p.types }));
    return new LineProtocol(framing.line_ending ?? '\n', commands, parsers);
  }

  command(action: string): CompiledCommand | undefined {
    return this.commands.get(action);
  }

  /** The bytes to write for an action, or the problem with its params (`defaults` fill missing ones). */
  render(action: string, params: Readonly<Record<string, unknown>>, defaults: Readonly<Record<string, unknown>> = {}): { line: string } | { problem: string } {
    const command = this.commands.get(action);
    if (command === undefined) return { problem: `no command is declared for action ${action}` };
    let line = '';
    for (const piece of command.pieces) {
      if ('text' in piece) line += piece.text;
      else {
        const value = wireValue(piece.param, Object.hasOwn(params, piece.param) ? params[piece.param] : defaults[piece.param]);
        if (typeof value !== 'string') return value;
        line += value;
      }
    }
    return { line: /[\r\n]$/.test(line) ? line : line + this.lineEnding };
  }

  /** Whether `line` answers `command`: its result, its error, or null (not a reply to it). */
  static reply(command: CompiledCommand, line: string): ReplyMatch | null {
    const error = command.error?.exec(line);
    if (error) {
      const message = error.groups?.message;
      return { ok: false, error: (message ?? line).slice(0, 500) };
    }
    const reply = command.reply?.exec(line);
    if (!reply) return null;
    const result = groupsOf(reply, command.types);
    return result === null ? null : { ok: true, result };
  }

  /** The reading a line carries (the first parser that matches and converts), or null. */
  telemetry(line: string): { event: string; data: Record<string, unknown> } | null {
    for (const p of this.parsers) {
      const m = p.match.exec(line);
      if (!m) continue;
      const data = groupsOf(m, p.types);
      if (data !== null) return { event: p.event, data };
    }
    return null;
  }
}

function regexProblem(source: string | undefined, path: string): string[] {
  if (source === undefined) return [];
  try {
    new RegExp(source);
    return [];
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    return [`${path}: not a valid regular expression (${err.message})`];
  }
}

function commandProblems(c: LineCommand, path: string): string[] {
  const pieces = parseTemplate(c.send);
  return [...(typeof pieces === 'string' ? [`${path}/send: ${pieces}`] : []), ...regexProblem(c.reply, `${path}/reply`), ...regexProblem(c.error, `${path}/error`)];
}

/** Problems of a declared line protocol against the device's action names (config.ts reports them with paths). */
export function lineProtocolProblems(framing: LineProtocolFraming, actions: readonly string[], path: string): string[] {
  const problems: string[] = [];
  for (const [action, c] of Object.entries(framing.commands)) {
    if (!actions.includes(action)) problems.push(`${path}/commands/${action}: "${action}" is not one of the device's actions`);
    problems.push(...commandProblems(c, `${path}/commands/${action}`));
    if (c.error !== undefined && c.reply === undefined) problems.push(`${path}/commands/${action}/reply: an error pattern needs a reply pattern (what success looks like)`);
  }
  for (const action of actions) if (!Object.hasOwn(framing.commands, action)) problems.push(`${path}/commands: action "${action}" has no command`);
  framing.telemetry.forEach((p, i) => problems.push(...regexProblem(p.match, `${path}/telemetry/${i}/match`)));
  return problems;
}
