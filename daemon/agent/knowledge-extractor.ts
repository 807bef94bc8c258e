// Each turn's knowledge triples (spec 1.1 "store results in memory and update the knowledge graph";
// ARCHITECTURE.md "Data flow of one turn"), stored with the turn as their source (`turn:<id>`).
//   offline (the local agent answered, or no model can): statement-rules.ts, applied before the
//     turn's answer is closed, so the fact is in the graph when the client hears back
//   with a model: one structured extraction call after the answer — bounded (timeout, max tokens,
//     at most MAX_FACTS facts), skipped under load (another extraction running, or other turns
//     running now), and replaced by the rules when it fails or answers nothing usable
// Only messages that may state something are considered: questions never reach a model.
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Logger } from 'pino';
import { ChainExhaustedError, ProviderError, type Provider } from '../providers/provider';
import type { AgentEvents } from './agent-events';
import type { AgentMemory, FactInput } from '../kernel/ports';
import { statedTriples } from './statement-rules';

export const MAX_FACTS = 8;
export const RULE_CONFIDENCE = 0.6;
export const MODEL_CONFIDENCE = 0.7;

export interface ExtractionLimits {
  timeoutMs: number;
  maxTokens: number;
}

export const DEFAULT_EXTRACTION_LIMITS: ExtractionLimits = { timeoutMs: 15_000, maxTokens: 300 };

export const EXTRACTION_PROMPT =
  'Extract the facts the user states in their message as knowledge-graph triples. Answer with JSON only, no prose: ' +
  '{"triples":[{"subject":"...","predicate":"...","object":"..."}]} with at most 8 triples, or {"triples":[]} when the message states no fact ' +
  '(questions and commands state none). Call the speaker "user" (their things: "user\'s dog"). Keep names and values exactly as written.';

const ModelAnswer = Type.Object({
  triples: Type.Array(Type.Object({ subject: Type.String(), predicate: Type.String(), object: Type.String() }), { maxItems: 50 }),
});

export interface ExtractorDeps {
  memory: AgentMemory;
  provider: Provider;
  events: AgentEvents;
  logger: Logger;
  limits?: ExtractionLimits;
}

export interface TurnStatement {
  sessionId: string;
  turnId: string;
  text: string;
  /** Turns of any session running now besides this one: the brain is busy, no extraction call. */
  othersRunning: number;
}

export type ExtractionMode = 'none' | 'rules' | 'model';

export class KnowledgeExtractor {
  private readonly limits: ExtractionLimits;
  private inFlight: Promise<void> | null = null;
  private readonly stopping = new AbortController();

  constructor(private readonly deps: ExtractorDeps) {
    this.limits = deps.limits ?? DEFAULT_EXTRACTION_LIMITS;
  }

  /**
   * Extracts what the message states. Offline facts are stored before this resolves; a model
   * extraction runs on in the background (idle() waits for it) and announces `knowledge_extracted`.
   */
  async fromTurn(turn: TurnStatement): Promise<ExtractionMode> {
    if (!maybeStatement(turn.text)) return 'none';
    if (!this.modelAnswers() || this.inFlight !== null || turn.othersRunning > 0) {
      return (await this.store(turn, statedTriples(turn.text).map((t) => ({ ...t, confidence: RULE_CONFIDENCE })), 'rules')) ? 'rules' : 'none';
    }
    this.inFlight = this.viaModel(turn).finally(() => (this.inFlight = null));
    return 'model';
  }

  /** Resolves when no extraction runs. */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /** Aborts a running extraction call and waits for it to settle. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.idle();
  }

  /** A model (not the embedded local agent) is what the chain would use now. */
  private modelAnswers(): boolean {
    const p = this.deps.provider;
    const kind = p.answering ? p.answering()?.kind : p.kind;
    return kind === 'openai' || kind === 'anthropic';
  }

  private async viaModel(turn: TurnStatement): Promise<void> {
    const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(this.limits.timeoutMs)]);
    let facts: FactInput[] | null = null;
    try {
      facts = parseModelFacts(await this.ask(turn.text, signal));
    } catch (err) {
      // A failed, timed-out or stopped extraction call is not a failure of the turn: the rules take over.
      if (!(err instanceof ProviderError || err instanceof ChainExhaustedError || signal.aborted)) throw err;
      this.deps.logger.info({ turn_id: turn.turnId, err: err instanceof Error ? err.message : String(err) }, 'knowledge extraction call failed; using the statement rules');
    }
    if (facts === null) this.deps.logger.info({ turn_id: turn.turnId }, 'knowledge extraction answer was not usable; using the statement rules');
    const mode = facts === null ? 'rules' : 'model';
    await this.store(turn, facts ?? statedTriples(turn.text).map((t) => ({ ...t, confidence: RULE_CONFIDENCE })), mode).catch((err: unknown) => {
      this.deps.logger.error({ err, turn_id: turn.turnId }, 'storing extracted knowledge failed');
    });
  }

  private async ask(text: string, signal: AbortSignal): Promise<string> {
    let out = '';
    const request = { messages: [{ role: 'system' as const, content: EXTRACTION_PROMPT }, { role: 'user' as const, content: text.slice(0, 4000) }], maxTokens: this.limits.maxTokens, signal };
    for await (const ev of this.deps.provider.chat(request)) {
      if (ev.type === 'text_delta') out += ev.text;
      if (out.length > this.limits.maxTokens * 16) break; // a server that ignores max_tokens
    }
    return out;
  }

  private async store(turn: TurnStatement, facts: readonly FactInput[], via: Exclude<ExtractionMode, 'none'>): Promise<boolean> {
    const bounded = facts.slice(0, MAX_FACTS);
    const stored = bounded.length > 0 ? await this.deps.memory.addFacts(bounded, `turn:${turn.turnId}`) : [];
    this.deps.events.emit({ type: 'knowledge_extracted', sessionId: turn.sessionId, turnId: turn.turnId, via, facts: stored.map((f) => f.id), at: Date.now() / 1000 });
    return stored.length > 0;
  }
}

/** Not a question: a model call for "what's my wifi password?" would only cost time and tokens. */
export function maybeStatement(text: string): boolean {
  const t = text.trim();
  return t.length >= 6 && !t.endsWith('?') && statedTriplesPossible(t);
}

const statedTriplesPossible = (t: string): boolean => !/^(?:what|when|where|who|which|why|how|do|does|did|can|could|would|will|is|are|am)\b/i.test(t) && t.split(/\s+/).length >= 3;

/** The model's JSON answer (possibly in a code fence) as bounded facts; null when it is not usable. */
export function parseModelFacts(answer: string): FactInput[] | null {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.slice(start, end + 1));
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    return null;
  }
  if (!Value.Check(ModelAnswer, parsed)) return null;
  return parsed.triples
    .map((t) => ({ subject: t.subject.trim(), predicate: t.predicate.trim(), object: t.object.trim(), confidence: MODEL_CONFIDENCE }))
    .filter((t) => t.subject !== '' && t.predicate !== '' && t.object !== '' && t.subject.length <= 200 && t.predicate.length <= 100 && t.object.length <= 500)
    .slice(0, MAX_FACTS);
}
