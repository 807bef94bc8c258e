// One turn (ARCHITECTURE.md "Data flow of one turn"): route → context → provider → tool calls →
// results → … → answer. Text streams to every client of the session as stream_delta and the turn is
// always closed by exactly one text_response — also when the provider chain is exhausted, the turn
// is cancelled or something breaks — so a client never waits for an answer that will not come.
import type { Logger } from 'pino';
import { ChainExhaustedError, ProviderError, type Provider, type Usage } from '../providers/provider';
import type { ChatMessage, ToolCall } from '../kernel/conversation';
import type { SduiComponent, SpecialistName, BrainMessageOf } from '../../protocol/session';
import type { ToolRegistry } from '../kernel/tool-registry';
import type { ToolRunner } from './tools/tool-runner';
import type { Router } from './router/router';
import { specialist, type Specialist } from './router/specialists';
import type { ContextBuilder } from './context-builder';
import type { AgentEvents } from './agent-events';
import type { Session } from './session';
import { CORRECTION_SOURCE, respondToCorrection } from './routing-correction';
import type { KnowledgeExtractor } from './knowledge-extractor';
import { approvalNote, heldOutcome, type ApprovalResolution } from './continuation';

export type FinishReason = BrainMessageOf<'text_response'>['payload']['finish_reason'];

export interface TurnResult {
  turnId: string;
  text: string;
  specialist: SpecialistName;
  provider: string;
  model: string;
  finishReason: FinishReason;
  toolSteps: number;
  sources: string[];
  sdui: SduiComponent | null;
  usage?: Usage;
}

export interface TurnRunnerDeps {
  provider: Provider;
  tools: ToolRegistry;
  runner: ToolRunner;
  router: Router;
  context: ContextBuilder;
  events: AgentEvents;
  logger: Logger;
  /** Tool calls executed per turn at most (settings agent.max_tool_steps). */
  maxToolSteps: number;
  /** Stores the facts each turn states (knowledge-extractor.ts); none without memory. */
  knowledge?: KnowledgeExtractor | undefined;
  now?: () => number;
}

interface StepResult {
  text: string;
  calls: ToolCall[];
  finish: 'stop' | 'tool_calls' | 'length';
  provider: string;
  model: string;
  usage?: Usage;
}

export interface TurnOptions {
  /** Whether the model is offered tools (default true). */
  tools?: boolean;
}

/** Mutable state of one turn while it runs. */
export interface TurnState {
  session: Session;
  turnId: string;
  worker: Specialist;
  signal: AbortSignal;
  text: string;
  sources: Set<string>;
  sdui: SduiComponent | null;
  toolSteps: number;
  provider: string;
  model: string;
  usage?: Usage;
}

export class TurnRunner {
  private readonly now: () => number;
  /** Turns running now, of every session (the extractor skips model calls while others run). */
  private running = 0;

  constructor(private readonly deps: TurnRunnerDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** `tools: false` offers the model no tool (a TaskFlow prompt step without tools). */
  async run(session: Session, turnId: string, userText: string, signal: AbortSignal, options: TurnOptions = {}): Promise<TurnResult> {
    this.running++;
    try {
      return await this.runCounted(session, turnId, userText, signal, options);
    } finally {
      this.running--;
    }
  }

  /**
   * A continuation turn (continuation.ts): the held call of `event.turnId` was approved or rejected;
   * the model gets its outcome as the call's result and answers in the session, as a turn of its own
   * whose turn_started names the turn it continues. Nothing here is the user's words, so no routing
   * and no knowledge extraction.
   */
  async resume(session: Session, turnId: string, event: ApprovalResolution, signal: AbortSignal): Promise<TurnResult> {
    this.running++;
    try {
      const startedAt = this.now();
      const note = approvalNote(event);
      const worker = specialist('general');
      const state: TurnState = { session, turnId, worker, signal, text: '', sources: new Set(), sdui: null, toolSteps: 0, provider: 'none', model: 'none' };
      session.broadcast({ type: 'turn_started', session_id: session.id, payload: { turn_id: turnId, text: note, specialist: worker.name, continues: event.turnId } });
      const held = heldOutcome(event);
      const outcome = this.deps.runner.result(held.call, this.deps.tools.get(held.call.name)?.safety ?? 'privileged', held.status, held.summary, held.data);
      const finish = await this.guarded(state, () => this.loop(state, note, [{ role: 'assistant', content: '', tool_calls: [held.call] }, outcome.message]));
      const result = this.close(state, finish, worker.name);
      session.record({ message: { role: 'user', content: note }, turnId, at: startedAt });
      session.record({ message: { role: 'assistant', content: result.text }, turnId, at: this.now() });
      this.deps.events.emit({ type: 'turn_finished', sessionId: session.id, turnId, text: note, answer: result.text, specialist: worker.name, finishReason: finish, at: this.now() / 1000 });
      return result;
    } finally {
      this.running--;
    }
  }

  private async runCounted(session: Session, turnId: string, userText: string, signal: AbortSignal, options: TurnOptions): Promise<TurnResult> {
    const startedAt = this.now();
    const correction = this.deps.router.correction(userText);
    const route = correction ? null : this.deps.router.classify(userText);
    const worker = route?.specialist ?? specialist('general');
    const state: TurnState = { session, turnId, worker, signal, text: '', sources: new Set(), sdui: null, toolSteps: 0, provider: 'none', model: 'none' };
    session.broadcast({ type: 'turn_started', session_id: session.id, payload: { turn_id: turnId, text: userText, specialist: correction ?? worker.name } });

    let finish: FinishReason;
    if (correction) {
      state.provider = CORRECTION_SOURCE.provider;
      state.model = CORRECTION_SOURCE.model;
      this.delta(state, await respondToCorrection(this.deps.router, session.lastRoutedText, correction));
      finish = 'stop';
    } else {
      session.lastRoutedText = userText;
      finish = await this.guarded(state, () => this.loop(state, userText, undefined, options.tools ?? true));
      if (finish !== 'cancelled') await this.extract(state, userText);
    }
    const result = this.close(state, finish, correction ?? worker.name);
    session.record({ message: { role: 'user', content: userText }, turnId, at: startedAt });
    session.record({ message: { role: 'assistant', content: result.text }, turnId, at: this.now() });
    this.deps.events.emit({ type: 'turn_finished', sessionId: session.id, turnId, text: userText, answer: result.text, specialist: result.specialist, finishReason: finish, at: this.now() / 1000 });
    return result;
  }

  /** Turns provider failures, cancellation and bugs into an answer instead of a hung client. */
  private async guarded(state: TurnState, body: () => Promise<FinishReason>): Promise<FinishReason> {
    try {
      return await body();
    } catch (err) {
      if (state.signal.aborted) return 'cancelled';
      if (err instanceof ChainExhaustedError || err instanceof ProviderError) {
        this.delta(state, `${state.text ? '\n\n' : ''}I could not get an answer from a language model: ${err.message}. Check \`svc key list\`, or try again in a moment.`);
        return 'error';
      }
      this.deps.logger.error({ err, session_id: state.session.id, turn_id: state.turnId }, 'turn failed');
      state.session.broadcast({ type: 'error', session_id: state.session.id, payload: { code: 'TURN_FAILED', message: 'the turn failed inside the brain; see the brain log', details: null, turn_id: state.turnId } });
      this.delta(state, `${state.text ? '\n\n' : ''}Something went wrong on my side while answering; the details are in the brain log.`);
      return 'error';
    }
  }

  /** The turn's stated facts into the knowledge graph; a failure there is logged, the answer stands. */
  private async extract(state: TurnState, userText: string): Promise<void> {
    if (!this.deps.knowledge) return;
    try {
      await this.deps.knowledge.fromTurn({ sessionId: state.session.id, turnId: state.turnId, text: userText, othersRunning: this.running - 1 });
    } catch (err) {
      this.deps.logger.error({ err, session_id: state.session.id, turn_id: state.turnId }, 'knowledge extraction failed');
    }
  }

  private async loop(state: TurnState, userText: string, tail?: readonly ChatMessage[], tools = true): Promise<FinishReason> {
    const context = await this.deps.context.build(state.session, userText, state.worker, state.signal, tail);
    for (const s of context.sources) state.sources.add(s);
    const messages = context.messages;
    const specs = tools ? this.deps.tools.specs(state.worker.tools ?? undefined) : [];
    const offered = new Set(specs.map((s) => s.name));
    const max = this.deps.maxToolSteps;
    // Each round either ends the turn or runs at least one tool, so max + 2 rounds always suffice.
    for (let round = 0; round < max + 2; round++) {
      if (state.signal.aborted) return 'cancelled';
      const canUseTools = state.toolSteps < max && specs.length > 0;
      const step = await this.step(state, messages, canUseTools ? specs : undefined);
      if (step.calls.length === 0) return step.finish === 'length' ? 'length' : 'stop';
      if (!canUseTools) break;
      messages.push({ role: 'assistant', content: step.text, tool_calls: step.calls });
      for (const call of step.calls) messages.push(await this.runTool(state, call, offered));
    }
    if (!state.text.trim()) this.delta(state, `I stopped after ${state.toolSteps} tool steps, the most one turn may take, before reaching an answer.`);
    return 'tool_limit';
  }

  private async step(state: TurnState, messages: ChatMessage[], tools: ReturnType<ToolRegistry['specs']> | undefined): Promise<StepResult> {
    const out: StepResult = { text: '', calls: [], finish: 'stop', provider: state.provider, model: state.model };
    let first = true;
    for await (const ev of this.deps.provider.chat({ messages, ...(tools ? { tools } : {}), signal: state.signal })) {
      if (ev.type === 'text_delta') {
        if (ev.text === '') continue;
        // Text of a later round continues the answer as a new paragraph.
        if (first && state.text !== '' && !/\s$/.test(state.text)) this.delta(state, '\n\n');
        first = false;
        out.text += ev.text;
        this.delta(state, ev.text);
      } else if (ev.type === 'tool_call') {
        out.calls.push(ev.call);
      } else {
        Object.assign(out, { finish: ev.finish_reason, provider: ev.provider, model: ev.model });
        state.provider = ev.provider;
        state.model = ev.model;
        if (ev.usage) state.usage = addUsage(state.usage, ev.usage);
      }
    }
    return out;
  }

  private async runTool(state: TurnState, call: ToolCall, offered: ReadonlySet<string>): Promise<ChatMessage> {
    const sid = state.session.id;
    const tool = this.deps.tools.get(call.name);
    if (state.toolSteps >= this.deps.maxToolSteps) {
      return { role: 'tool', tool_call_id: call.id, name: call.name, content: JSON.stringify({ status: 'error', summary: `not run: the limit of ${this.deps.maxToolSteps} tool steps per turn was reached` }) };
    }
    state.toolSteps++;
    state.session.broadcast({ type: 'tool_call', session_id: sid, payload: { turn_id: state.turnId, call_id: call.id, name: call.name, arguments: call.arguments, safety_level: tool?.safety ?? 'passive' } });
    const run = await this.deps.runner.run(call, offered, { sessionId: sid, turnId: state.turnId, specialist: state.worker.name, signal: state.signal });
    state.session.broadcast({ type: 'tool_result', session_id: sid, payload: { turn_id: state.turnId, call_id: call.id, name: call.name, status: run.status, summary: run.summary } });
    if (run.status === 'denied') this.deps.events.emit({ type: 'tool_denied', sessionId: sid, turnId: state.turnId, tool: call.name, reason: run.summary, at: this.now() / 1000 });
    if (run.status === 'ok') state.session.working.set(`${call.name} ${JSON.stringify(call.arguments).slice(0, 120)}`, run.summary);
    for (const s of run.sources) state.sources.add(s);
    if (run.ui) {
      state.sdui = run.ui;
      state.session.broadcast({ type: 'sdui_payload', session_id: sid, payload: { turn_id: state.turnId, component: run.ui } });
    }
    return run.message;
  }

  delta(state: TurnState, text: string): void {
    state.text += text;
    state.session.broadcast({ type: 'stream_delta', session_id: state.session.id, payload: { turn_id: state.turnId, text } });
  }

  private close(state: TurnState, finish: FinishReason, specialist: SpecialistName): TurnResult {
    const result: TurnResult = {
      turnId: state.turnId,
      text: state.text,
      specialist,
      provider: state.provider,
      model: state.model,
      finishReason: finish,
      toolSteps: state.toolSteps,
      sources: [...state.sources],
      sdui: state.sdui,
      ...(state.usage ? { usage: state.usage } : {}),
    };
    state.session.broadcast({
      type: 'text_response',
      session_id: state.session.id,
      payload: { turn_id: state.turnId, text: result.text, specialist, provider: result.provider, model: result.model, finish_reason: finish, tool_steps: result.toolSteps, sources: result.sources, ...(result.usage ? { usage: result.usage } : {}) },
    });
    return result;
  }
}

const addUsage = (a: Usage | undefined, b: Usage): Usage => ({ input_tokens: (a?.input_tokens ?? 0) + b.input_tokens, output_tokens: (a?.output_tokens ?? 0) + b.output_tokens });
