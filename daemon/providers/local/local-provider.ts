// `local`: the embedded default provider. No key, no network — like Home Assistant's local intent
// agent, it maps utterances to tool calls through sentence templates (sentences.json) and, once the
// tool results come back as `tool` messages, answers from their summaries. It speaks the Provider
// port exactly like a model would, so the turn loop, permission hook and streaming are the same.
// Anything it does not understand gets an honest answer that says how to connect a model.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { ChatEvent, ChatMessage, ChatRequest, Provider } from '../provider';
import { SentenceMatcher } from './sentence-matcher';
import sentences from './sentences.json';

export const LOCAL_MODEL = 'sentences-v1';

const IntentSchema = Type.Object({
  intent: Type.String({ minLength: 1 }),
  tool: Type.Optional(Type.String({ minLength: 1 })),
  args: Type.Optional(Type.Record(Type.String(), Type.String())),
  sentences: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
});

export const LocalDataSchema = Type.Object({
  $comment: Type.Optional(Type.String()),
  intents: Type.Array(IntentSchema, { minItems: 1 }),
  responses: Type.Object({ ok: Type.String(), error: Type.String(), denied: Type.String(), pending_approval: Type.String() }),
  help: Type.String(),
  fallback: Type.String(),
  unavailable: Type.String(),
});
export type LocalData = Static<typeof LocalDataSchema>;

/** Words per stream_delta: the answer streams like a model's would, without artificial delays. */
const WORDS_PER_DELTA = 4;

export class LocalProvider implements Provider {
  readonly kind = 'local' as const;
  private readonly matcher: SentenceMatcher;
  private calls = 0;

  constructor(
    readonly id = 'local',
    private readonly data: LocalData = loadBundledData(),
  ) {
    this.matcher = new SentenceMatcher(data.intents);
  }

  async *chat(request: ChatRequest): AsyncIterable<ChatEvent> {
    request.signal?.throwIfAborted();
    const results = trailingToolResults(request.messages);
    if (results.length > 0) {
      yield* this.say(results.map((r) => this.fromResult(r)).join(' '));
      return;
    }
    const user = lastUserText(request.messages);
    const match = this.matcher.match(user);
    if (!match) {
      yield* this.say(this.data.fallback.replace('{text}', clip(user)));
    } else if (!match.tool) {
      yield* this.say(this.data.help);
    } else if (!request.tools?.some((t) => t.name === match.tool)) {
      yield* this.say(this.data.unavailable.replace('{tool}', match.tool));
    } else {
      const args = Object.fromEntries(Object.entries(match.arguments).filter(([, v]) => v !== ''));
      yield { type: 'tool_call', call: { id: `local_${++this.calls}`, name: match.tool, arguments: args } };
      yield { type: 'done', finish_reason: 'tool_calls', provider: this.id, model: LOCAL_MODEL };
    }
  }

  listModels(): Promise<string[]> {
    return Promise.resolve([LOCAL_MODEL]);
  }

  private fromResult(message: Extract<ChatMessage, { role: 'tool' }>): string {
    const parsed = parseResult(message.content);
    const template = this.data.responses[parsed.status];
    return template.replace('{summary}', parsed.summary);
  }

  private *say(text: string): Iterable<ChatEvent> {
    const words = text.split(/(?<=\s)/);
    for (let i = 0; i < words.length; i += WORDS_PER_DELTA) yield { type: 'text_delta', text: words.slice(i, i + WORDS_PER_DELTA).join('') };
    yield { type: 'done', finish_reason: 'stop', provider: this.id, model: LOCAL_MODEL };
  }
}

export function loadBundledData(): LocalData {
  if (!Value.Check(LocalDataSchema, sentences)) {
    const first = [...Value.Errors(LocalDataSchema, sentences)][0];
    throw new Error(`daemon/providers/local/sentences.json is invalid at ${first?.path ?? '/'}: ${first?.message ?? 'unknown'}`);
  }
  return sentences;
}

/** The tool results after the last assistant tool-call message, if the conversation ends with them. */
function trailingToolResults(messages: readonly ChatMessage[]): Extract<ChatMessage, { role: 'tool' }>[] {
  const out: Extract<ChatMessage, { role: 'tool' }>[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'tool') break;
    out.unshift(m);
  }
  return out;
}

function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user') return m.content;
  }
  return '';
}

type ResultStatus = keyof LocalData['responses'];

function parseResult(content: string): { status: ResultStatus; summary: string } {
  try {
    const v = JSON.parse(content) as { status?: unknown; summary?: unknown };
    const status = typeof v.status === 'string' && ['ok', 'error', 'denied', 'pending_approval'].includes(v.status) ? (v.status as ResultStatus) : 'ok';
    return { status, summary: typeof v.summary === 'string' ? v.summary : content };
  } catch (err) {
    // A tool result that is not the runner's JSON (another producer): read it as plain text.
    if (!(err instanceof SyntaxError)) throw err;
    return { status: 'ok', summary: content };
  }
}

const clip = (s: string): string => (s.length > 120 ? `${s.slice(0, 117)}…` : s);
