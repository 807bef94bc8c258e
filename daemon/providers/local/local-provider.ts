// `local`: the embedded default provider. No key, no network — like Home Assistant's local intent
// agent, it maps utterances to tool calls through sentence templates (sentences.json) and, once the
// tool results come back as `tool` messages, answers from their summaries (a recall question from
// the best matching note: recall-answer.ts). It speaks the Provider port exactly like a model would,
// so the turn loop, permission hook and streaming are the same. A request it does not understand is
// looked up in memory once; a confident match is the answer, else an honest reply that says how to
// connect a model — or, when the failover chain passed over configured models, why none answered.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { ChatEvent, ChatRequest, PassedProvider, Provider } from '../provider';
import type { ChatMessage } from '../../kernel/conversation';
import { clip, terms } from '../../kernel/text';
import { SentenceMatcher } from './sentence-matcher';
import { GUESS_MIN_OVERLAP, recallAnswer, type RecallHit } from './recall-answer';
import sentences from './sentences.json';

export const LOCAL_MODEL = 'sentences-v1';

const IntentSchema = Type.Object({
  intent: Type.String({ minLength: 1 }),
  tool: Type.Optional(Type.String({ minLength: 1 })),
  args: Type.Optional(Type.Record(Type.String(), Type.String())),
  reply: Type.Optional(Type.String({ minLength: 1 })),
  sentences: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
});

export const LocalDataSchema = Type.Object({
  $comment: Type.Optional(Type.String()),
  intents: Type.Array(IntentSchema, { minItems: 1 }),
  responses: Type.Object({ ok: Type.String(), error: Type.String(), denied: Type.String(), pending_approval: Type.String() }),
  recall: Type.Object({ none: Type.String(), guess: Type.String() }),
  help: Type.String(),
  fallback: Type.String(),
  unusable: Type.String(),
  unavailable: Type.String(),
});
export type LocalData = Static<typeof LocalDataSchema>;

/** Words per stream_delta: the answer streams like a model's would, without artificial delays. */
const WORDS_PER_DELTA = 4;
/** Intent name carried in the ids of the memory lookup made for a request that matched no template. */
const GUESS = 'guess';
/** Longest the user's words are quoted back in a reply, the "…" of a cut included. */
const QUOTE_MAX = 120;
const RecallHits = Type.Array(Type.Object({ id: Type.String(), tier: Type.String(), summary: Type.String(), relevance: Type.Number() }));

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

  /**
   * The reply templates ({slot} = anything) that mean the request was not served: not understood, a
   * tool missing or failed or refused, or the help text. Memory does not count an exchange answered
   * by one of them when it decides whether a session is worth an episode (memory/episode-writer.ts).
   */
  cannedReplies(): string[] {
    const { fallback, unavailable, help, responses } = this.data;
    return [fallback, unavailable, help, responses.error, responses.denied];
  }

  async *chat(request: ChatRequest): AsyncIterable<ChatEvent> {
    request.signal?.throwIfAborted();
    const user = lastUserText(request.messages);
    const results = trailingToolResults(request.messages);
    if (results.length > 0) {
      yield* this.say(results.map((r) => this.fromResult(r, request, user)).join(' '));
      return;
    }
    const match = this.matcher.match(user);
    if (!match) {
      // Not understood: one memory lookup; only a confident match answers (fromResult).
      if (offers(request, 'search_memory') && terms(user).length > 0) yield* this.call(GUESS, 'search_memory', { query: user.trim().slice(0, 500) });
      else yield* this.say(this.fallback(user, request.passed));
    } else if (!match.tool) {
      yield* this.say(match.reply ?? this.data.help);
    } else if (!offers(request, match.tool)) {
      yield* this.say(this.data.unavailable.replace('{tool}', match.tool));
    } else {
      const args = Object.fromEntries(Object.entries(match.arguments).filter(([, v]) => v !== ''));
      // The search gets the question's content words: "when does the recycling go out" → "recycling"
      // (the note says "goes out every other Friday"; extra words only lower its relevance), and
      // "what is my dog's name" → "dog" (the note says "is called").
      if (match.tool === 'search_memory' && args.query) args.query = terms(args.query.replace(/'s name$/i, '')).join(' ') || args.query;
      yield* this.call(match.intent, match.tool, args);
    }
  }

  /** The call id carries the intent, so the answer round knows what the result was for. */
  private *call(intent: string, tool: string, args: Record<string, string>): Iterable<ChatEvent> {
    yield { type: 'tool_call', call: { id: `local_${++this.calls}_${intent}`, name: tool, arguments: args } };
    yield { type: 'done', finish_reason: 'tool_calls', provider: this.id, model: LOCAL_MODEL };
  }

  private fallback(user: string, passed: readonly PassedProvider[] | undefined): string {
    if (!passed || passed.length === 0) return this.data.fallback.replace('{text}', clip(user, QUOTE_MAX));
    return this.data.unusable.replace('{text}', clip(user, QUOTE_MAX)).replace('{reasons}', passed.map(reason).join('; '));
  }

  listModels(): Promise<string[]> {
    return Promise.resolve([LOCAL_MODEL]);
  }

  private fromResult(message: Extract<ChatMessage, { role: 'tool' }>, request: ChatRequest, user: string): string {
    const parsed = parseResult(message.content);
    const intent = /^local_\d+_(.+)$/.exec(message.tool_call_id)?.[1];
    if (message.name === 'search_memory' && parsed.status === 'ok' && (intent === 'recall' || intent === GUESS)) {
      const hits: RecallHit[] = Value.Check(RecallHits, parsed.results) ? parsed.results : [];
      const query = intent === GUESS ? user : callQuery(request.messages, message.tool_call_id) ?? user;
      const found = recallAnswer(query, hits, intent === GUESS ? GUESS_MIN_OVERLAP : undefined);
      if (found) return intent === GUESS ? this.data.recall.guess.replace('{answer}', found.text) : found.text;
      return intent === GUESS ? this.fallback(user, request.passed) : this.data.recall.none.replace('{query}', clip(query, QUOTE_MAX));
    }
    return this.data.responses[parsed.status].replace('{summary}', parsed.summary);
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

/** The `query` argument the agent's own call with this id carried. */
function callQuery(messages: readonly ChatMessage[], callId: string): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    const call = m.role === 'assistant' ? m.tool_calls?.find((c) => c.id === callId) : undefined;
    if (call) return typeof call.arguments.query === 'string' ? call.arguments.query : undefined;
  }
  return undefined;
}

const offers = (request: ChatRequest, tool: string): boolean => request.tools?.some((t) => t.name === tool) ?? false;

/** One passed-over provider, with the command that brings a disabled key back when the chain gave none. */
function reason(p: PassedProvider): string {
  const hint = (p.errorClass === 'auth' || p.errorClass === 'billing') && !p.message.includes('svc key') ? ` (fix the key, then run \`svc key recover\`)` : '';
  return `${p.provider}: ${p.message}${hint}`;
}

type ResultStatus = keyof LocalData['responses'];

function parseResult(content: string): { status: ResultStatus; summary: string; results?: unknown } {
  try {
    const v = JSON.parse(content) as { status?: unknown; summary?: unknown; data?: { results?: unknown } | null };
    const status = typeof v.status === 'string' && ['ok', 'error', 'denied', 'pending_approval'].includes(v.status) ? (v.status as ResultStatus) : 'ok';
    return { status, summary: typeof v.summary === 'string' ? v.summary : content, results: typeof v.data === 'object' && v.data !== null ? v.data.results : undefined };
  } catch (err) {
    // A tool result that is not the runner's JSON (another producer): read it as plain text.
    if (!(err instanceof SyntaxError)) throw err;
    return { status: 'ok', summary: content };
  }
}
