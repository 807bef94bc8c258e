// Plain fakes for the agent core's unit tests: a scripted provider implementing the Provider port,
// an in-memory AgentMemory/MemoryService, fixed identity text. No module mocking (STYLE.md 1).
import { pino } from 'pino';
import type { ChatEvent, ChatRequest, Provider } from '../../../daemon/providers/provider';
import type { ToolCall } from '../../../daemon/kernel/conversation';
import type { MemoryService } from '../../../daemon/memory/memory-service';
import type { Episode, Note, SearchResponse, Triple, TripleInput } from '../../../protocol/memory';
import { memoryTools } from '../../../daemon/memory/memory-tools';
import type { EventBus } from '../../../daemon/kernel/event-bus';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { identityTool } from '../../../daemon/identity/identity-tool';
import { Agent, type AgentSettings } from '../../../daemon/agent/agent';
import { createMetrics, type Metrics } from '../../../daemon/metrics/metrics';
import type { DeviceDirectory, DeviceSummary, IdentitySource } from '../../../daemon/kernel/ports';
import type { BrainMessage } from '../../../protocol/session';
import type { SessionClient } from '../../../daemon/agent/session';
import type { Store } from '../../../daemon/store/store';
import { SOUL_TEMPLATE } from '../../../daemon/identity/identity-text';

export const silent = pino({ level: 'silent' });

export type Step = (request: ChatRequest, index: number) => ChatEvent[] | Promise<ChatEvent[]>;

/** A provider that answers each chat() call with the next scripted step (the last one repeats). */
export class ScriptedProvider implements Provider {
  readonly kind = 'openai' as const;
  readonly requests: ChatRequest[] = [];

  constructor(
    private readonly steps: Step[],
    readonly id = 'scripted',
  ) {}

  async *chat(request: ChatRequest): AsyncIterable<ChatEvent> {
    const index = this.requests.length;
    this.requests.push({ ...request, messages: structuredClone(request.messages) });
    const step = this.steps[Math.min(index, this.steps.length - 1)]!;
    for (const ev of await step(request, index)) {
      request.signal?.throwIfAborted();
      yield ev;
    }
  }

  listModels(): Promise<string[]> {
    return Promise.resolve(['scripted-1']);
  }
}

export const say = (text: string): ChatEvent[] => [
  { type: 'text_delta', text },
  { type: 'done', finish_reason: 'stop', provider: 'scripted', model: 'scripted-1', usage: { input_tokens: 10, output_tokens: 5 } },
];

export const callTool = (name: string, args: Record<string, unknown>, id = `call_${name}`): ChatEvent[] => [
  { type: 'tool_call', call: { id, name, arguments: args } satisfies ToolCall },
  { type: 'done', finish_reason: 'tool_calls', provider: 'scripted', model: 'scripted-1' },
];

/** MemoryService over arrays: enough for the tools, the context and episodes. */
export class FakeMemory implements MemoryService {
  notes: Note[] = [];
  episodes: Episode[] = [];
  private seq = 0;

  remember(text: string, opts: { source?: string } = {}): Promise<Note> {
    const now = new Date().toISOString();
    const note: Note = { id: `note_${++this.seq}`, tier: 'note', text, source: opts.source ?? 'user', tags: [], created_at: now, updated_at: now, recall: { count: 0, last_at: null } };
    this.notes.push(note);
    return Promise.resolve(note);
  }

  search(q: string): Promise<SearchResponse> {
    const words = q.toLowerCase().split(/\W+/).filter((w) => w.length > 2);
    const results = this.notes
      .map((n) => ({ n, hits: words.filter((w) => n.text.toLowerCase().includes(w)).length }))
      .filter((x) => words.length > 0 && x.hits / words.length >= 0.5)
      .map(({ n, hits }) => ({ id: n.id, timestamp: n.created_at, summary: n.text, relevance: hits / words.length, tier: 'note' as const, signals: { lexical: hits / words.length, semantic: null, decay: 1 } }));
    return Promise.resolve({ results, mode: 'lexical', degraded: null });
  }

  forget(id: string): Promise<boolean> {
    const before = this.notes.length;
    this.notes = this.notes.filter((n) => n.id !== id);
    return Promise.resolve(this.notes.length < before);
  }

  knowledge(): ReturnType<MemoryService['knowledge']> {
    return { triples: [], truncated: false };
  }

  /** Every addTriples call: what was stated and its source. */
  readonly stated: { triples: TripleInput[]; source: string }[] = [];

  addTriples(triples: readonly TripleInput[], source: string): ReturnType<MemoryService['addTriples']> {
    this.stated.push({ triples: [...triples], source });
    const now = new Date().toISOString();
    return Promise.resolve(triples.map((t, i): Triple => ({ id: `kg_${this.stated.length}_${i}`, tier: 'knowledge', ...t, confidence: t.confidence ?? 0.8, sources: [{ source, confidence: t.confidence ?? 0.8, at: now }], created_at: now, updated_at: now, recall: { count: 0, last_at: null } })));
  }

  recordEpisode(span: Parameters<MemoryService['recordEpisode']>[0]): Promise<Episode | null> {
    const now = new Date().toISOString();
    const summary = span.messages.map((m) => ('content' in m ? m.content : '')).join(' ').slice(0, 200);
    const ep: Episode = { id: `ep_${++this.seq}`, tier: 'episode', session_id: span.sessionId, summary, reason: span.reason, summariser: 'fake', message_count: span.messages.length, started_at: now, ended_at: now, created_at: now, recall: { count: 0, last_at: null } };
    this.episodes.push(ep);
    return Promise.resolve(ep);
  }
}

export class FakeDevices implements DeviceDirectory {
  constructor(public devices: DeviceSummary[] = []) {}
  list(): DeviceSummary[] {
    return this.devices;
  }
  set(deviceId: string, changes: Record<string, string | number | boolean>): Promise<DeviceSummary> {
    const d = this.devices.find((x) => x.id === deviceId)!;
    Object.assign(d.state, changes);
    return Promise.resolve(d);
  }
}

export const identity = (user = '# USER.md\n## About\nName: Ada\n', soul = SOUL_TEMPLATE): IdentitySource => ({ user: () => user, soul: () => soul });

export const SETTINGS: AgentSettings = {
  max_tool_steps: 4,
  history_messages: 20,
  max_sessions: 50,
  max_sessions_per_connection: 16,
  max_sessions_per_principal: 50,
  session_memory_bytes: 32 * 1024 * 1024,
  session_transcript_bytes: 512 * 1024,
  max_queued_turns: 4,
  session_idle_minutes: 30,
  router: { enabled: true, learn_from_corrections: true },
};

export interface AgentFixture {
  agent: Agent;
  memory: FakeMemory;
  metrics: Metrics;
  devices: FakeDevices;
}

export function makeAgent(provider: Provider, opts: { store?: Store | null; secrets?: string[]; settings?: Partial<AgentSettings>; devices?: DeviceSummary[]; bus?: EventBus<BrainEvent> } = {}): AgentFixture {
  const memory = new FakeMemory();
  const metrics = createMetrics(true);
  const devices = new FakeDevices(opts.devices);
  const agent = new Agent({
    provider,
    memory,
    identity: identity(),
    devices,
    store: opts.store ?? null,
    metrics: metrics.registry,
    logger: silent,
    settings: { ...SETTINGS, ...opts.settings },
    brain: { version: '0.0.0-test', uptimeSeconds: () => 1, stopping: () => false },
    secrets: () => opts.secrets ?? [],
    ...(opts.bus ? { bus: opts.bus } : {}),
  });
  withCoreTools(agent);
  agent.start();
  return { agent, memory, metrics, devices };
}

/**
 * Registers the tools the brain's memory and identity contribute (daemon/brain.ts, the identity
 * capability), as an assembled brain has them, on an agent built directly.
 */
export function withCoreTools(agent: Agent, source: IdentitySource = identity()): Agent {
  if (agent.memory) for (const tool of memoryTools(agent.memory)) agent.tools.register('memory', tool);
  agent.tools.register('identity', identityTool(source));
  return agent;
}

/** A session client that records every frame it is sent. */
export class RecordingClient implements SessionClient {
  readonly frames: BrainMessage[] = [];
  readonly kind = 'websocket' as const;
  private readonly waiters: { match: (m: BrainMessage) => boolean; resolve: (m: BrainMessage) => void }[] = [];
  constructor(readonly id = 'rec') {}
  send(message: BrainMessage): void {
    this.frames.push(message);
    for (const w of [...this.waiters]) {
      if (!w.match(message)) continue;
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve(message);
    }
  }
  /** The first frame, already received or still to come, for which `match` holds. */
  until(match: (m: BrainMessage) => boolean): Promise<BrainMessage> {
    const seen = this.frames.find(match);
    return seen ? Promise.resolve(seen) : new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
  types(): string[] {
    return this.frames.map((f) => f.type);
  }
}

export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
