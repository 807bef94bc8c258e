// Assembles the agent core from its dependencies: tool registry and runner, router, context builder,
// turn runner, session manager, event bus and activity log. daemon/main.ts hands in the concrete
// parts; tests and the bench hand in fakes (a scripted provider, in-memory memory).
import type { Logger } from 'pino';
import type { Provider } from '../providers/provider';
import type { MetricsRegistry } from '../kernel/metrics';
import type { Store } from '../store/store';
import type { MemoryService } from '../memory/memory-service';
import type { DashboardStatus } from '../../protocol/dashboard';
import type { BrainMessage } from '../../protocol/session';
import { DEFAULT_WORKING_LIMITS, type WorkingMemoryLimits } from '../memory/working-memory';
import type { AgentEvent, AgentEvents } from './agent-events';
import { EventBus } from '../kernel/event-bus';
import { ActivityLog } from './activity-log';
import { ContextBuilder } from './context-builder';
import { agentMemory } from '../memory/agent-memory';
import type { AgentMemory, DeviceDirectory, IdentitySource } from '../kernel/ports';
import { RoutePreferences } from './router/route-preferences';
import { Router } from './router/router';
import { SessionManager, newTurnId } from './session-manager';
import type { SessionOwner } from './session';
import { TurnRunner } from './turn-runner';
import { KnowledgeExtractor, type ExtractionLimits } from './knowledge-extractor';
import { ToolRegistry } from '../kernel/tool-registry';
import { ToolRunner } from './tools/tool-runner';
import { StaticPermissionHook, type PermissionHook } from '../kernel/permissions';
import { SecretScrubber, type SecretSource } from './tools/secret-scrubber';
import { brainTools } from './tools/brain-tools';
import { agentMetrics, type AgentMetrics } from './agent-metrics';
import type { BrainEvent } from '../kernel/events';

export interface AgentSettings {
  max_tool_steps: number;
  history_messages: number;
  max_sessions: number;
  max_sessions_per_connection: number;
  max_sessions_per_principal: number;
  session_memory_bytes: number;
  session_transcript_bytes: number;
  max_queued_turns: number;
  session_idle_minutes: number;
  router: { enabled: boolean; learn_from_corrections: boolean };
}

export interface BrainInfo {
  version: string;
  uptimeSeconds(): number;
  stopping(): boolean;
}

export interface AgentDeps {
  provider: Provider;
  memory: MemoryService | null;
  identity: IdentitySource;
  devices: DeviceDirectory;
  /** Null: routing corrections are not learned (no store), e.g. in unit tests. */
  store: Store | null;
  /** Where the agent declares the metrics it emits (agent-metrics.ts). */
  metrics: MetricsRegistry;
  logger: Logger;
  settings: AgentSettings;
  brain: BrainInfo;
  secrets: SecretSource;
  permissions?: PermissionHook;
  /** The brain's tool registry (tools of every owner); a fresh one when absent. */
  tools?: ToolRegistry;
  /** Bounds of the model's knowledge-extraction call; defaults when absent. */
  extraction?: ExtractionLimits;
  /**
   * The brain's bus: the agent hears the approvals capability on it (approval frames to the
   * originating session, rejections counted as denials). Absent: no approvals are heard.
   */
  bus?: EventBus<BrainEvent>;
  /** Per-session working memory bounds (settings memory.working); defaults when absent. */
  workingLimits?: WorkingMemoryLimits;
  now?: () => number;
}

/** The owner of sessions the brain opens for itself (a capability's prompt with no open session). */
const BACKGROUND_OWNER: SessionOwner = { principal: 'brain' };

export class Agent {
  readonly tools: ToolRegistry;
  readonly events: AgentEvents;
  readonly activity = new ActivityLog();
  readonly sessions: SessionManager;
  readonly turns: TurnRunner;
  readonly memory: AgentMemory | null;
  /** The knowledge graph's writer of each turn's stated facts (null without memory). */
  readonly knowledge: KnowledgeExtractor | null;
  private readonly preferences: RoutePreferences | null;

  constructor(private readonly deps: AgentDeps) {
    const { logger, settings } = deps;
    this.events = EventBus.logged<AgentEvent>(logger, 'agent event');
    this.activity.listen(this.events);
    this.memory = deps.memory ? agentMemory(deps.memory) : null;
    // The registry is shared: memory, identity and every capability register their own tools in it
    // (daemon/brain.ts); the agent contributes only the tools about itself.
    this.tools = deps.tools ?? new ToolRegistry();
    const metrics = agentMetrics(deps.metrics, this.tools);
    for (const t of brainTools({ devices: deps.devices, status: () => this.status() })) this.tools.register('agent', t);
    this.preferences = deps.store ? new RoutePreferences(deps.store) : null;
    const router = new Router(this.preferences, { enabled: settings.router.enabled, learn: settings.router.learn_from_corrections });
    const scrubber = new SecretScrubber(deps.secrets);
    const runner = new ToolRunner({ registry: this.tools, permissions: deps.permissions ?? new StaticPermissionHook(), scrubber, metrics, logger });
    const context = new ContextBuilder({ identity: deps.identity, memory: this.memory, devices: deps.devices, limits: { identityChars: 6000, memoryHits: 3, workingItems: 12, historyMessages: settings.history_messages } });
    this.knowledge = this.memory ? new KnowledgeExtractor({ memory: this.memory, provider: deps.provider, events: this.events, logger: logger.child({ part: 'knowledge' }), ...(deps.extraction ? { limits: deps.extraction } : {}) }) : null;
    this.turns = new TurnRunner({ provider: deps.provider, tools: this.tools, runner, router, context, events: this.events, logger, maxToolSteps: settings.max_tool_steps, knowledge: this.knowledge ?? undefined, ...(deps.now ? { now: deps.now } : {}) });
    this.sessions = new SessionManager({
      turns: this.turns,
      episodes: deps.memory,
      events: this.events,
      metrics,
      logger: logger.child({ part: 'sessions' }),
      options: {
        maxSessions: settings.max_sessions,
        maxPerConnection: settings.max_sessions_per_connection,
        maxPerPrincipal: settings.max_sessions_per_principal,
        memoryBytes: settings.session_memory_bytes,
        idleMs: settings.session_idle_minutes * 60_000,
        limits: {
          maxEntries: settings.history_messages * 2,
          maxQueuedTurns: settings.max_queued_turns,
          transcriptBytes: settings.session_transcript_bytes,
          working: deps.workingLimits ?? DEFAULT_WORKING_LIMITS,
        },
      },
      ...(deps.now ? { now: deps.now } : {}),
    });
    deps.bus?.on('agent', (event) => this.hear(event, metrics, scrubber));
  }

  /** What the agent does with the approvals capability's events on the brain's bus. */
  private hear(event: BrainEvent, metrics: AgentMetrics, scrubber: SecretScrubber): void {
    if (event.type === 'approval_requested') {
      this.sessions.approval({ ...event, args: scrubber.scrubValue(event.args) });
      return;
    }
    if (event.type !== 'approval_resolved') return;
    if (event.status === 'rejected') metrics.toolDenied(event.tool);
    // The call and its outcome are scrubbed of vault secrets before any client, the conversation or the model sees them (as in the tool runner).
    const { args, result } = event;
    this.sessions.approval({ ...event, args: scrubber.scrubValue(args), ...(result ? { result: { ...result, summary: scrubber.scrub(result.summary), ...(result.data === undefined ? {} : { data: scrubber.scrubValue(result.data) }) } } : {}) });
  }

  /**
   * ConversationPort (kernel/capability.ts): a turn asked for by a capability, in the open session
   * `sessionId` (its clients see it), else in a session of its own, ended after the turn. Aborting
   * `signal` cancels the turn.
   */
  async prompt(request: { sessionId: string; text: string; tools: boolean; signal: AbortSignal }): Promise<{ text: string; finishReason: string; sessionId: string }> {
    request.signal.throwIfAborted();
    const open = this.sessions.get(request.sessionId);
    const session = open && !open.ended ? open : this.sessions.open(undefined, BACKGROUND_OWNER);
    const turnId = newTurnId();
    const cancel = (): void => void session.cancel(turnId);
    request.signal.addEventListener('abort', cancel, { once: true });
    try {
      const result = await this.sessions.submit(session, request.text, turnId, { tools: request.tools });
      return { text: result.text, finishReason: result.finishReason, sessionId: session.id };
    } finally {
      request.signal.removeEventListener('abort', cancel);
      if (session !== open) await this.sessions.end(session.id, 'closed_by_client');
    }
  }

  /** ConversationPort: a capability's own frame to the clients of an open session. */
  tell(sessionId: string, frame: BrainMessage): boolean {
    const session = this.sessions.get(sessionId);
    if (!session || session.ended) return false;
    session.broadcast(frame);
    return true;
  }

  start(): void {
    this.preferences?.start();
    this.sessions.start();
  }

  async stop(): Promise<void> {
    await this.sessions.stop();
    await this.knowledge?.stop();
  }

  /** The provider answering now (a chain names its member), or `none` when no provider can answer. */
  private answering(): DashboardStatus['provider'] {
    const p = this.deps.provider;
    if (!p.answering) return { id: p.id, kind: p.kind };
    return p.answering() ?? { id: 'none', kind: 'none' };
  }

  status(): DashboardStatus {
    const s = this.sessions.stats();
    const devices = this.deps.devices.list();
    return {
      status: this.deps.brain.stopping() ? 'stopping' : 'ok',
      version: this.deps.brain.version,
      uptime_s: Math.round(this.deps.brain.uptimeSeconds() * 1000) / 1000,
      sessions: { open: s.open, with_clients: s.withClients, clients: s.clients, turns_total: s.turnsTotal },
      provider: this.answering(),
      tools: this.tools.names(),
      devices: { connected: devices.filter((d) => d.online).length, items: devices },
    };
  }
}
