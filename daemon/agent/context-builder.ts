// Builds what the model sees for one turn (ARCHITECTURE.md "Data flow of one turn"): SOUL.md as the
// persona, USER.md, the specialist's instructions, working memory, relevant memories and device
// state in one system message; then the session's conversation; then the new user message.
// Every part is bounded in characters so a long USER.md or a chatty session cannot blow the context.
import type { ChatMessage } from '../kernel/conversation';
import { clip } from '../kernel/text';
import type { AgentMemory, DeviceDirectory, IdentitySource } from '../kernel/ports';
import type { Session } from './session';
import type { Specialist } from './router/specialists';

export interface ContextLimits {
  identityChars: number;
  memoryHits: number;
  workingItems: number;
  historyMessages: number;
}

export const DEFAULT_CONTEXT_LIMITS: ContextLimits = { identityChars: 6000, memoryHits: 3, workingItems: 12, historyMessages: 20 };

const MEMORY_MIN_RELEVANCE = 0.3;

export interface TurnContext {
  messages: ChatMessage[];
  /** Data sources the context drew on (memory ids, device ids, identity files). */
  sources: string[];
}

export interface ContextDeps {
  identity: IdentitySource;
  memory: AgentMemory | null;
  devices: DeviceDirectory;
  limits?: ContextLimits;
}

export class ContextBuilder {
  private readonly limits: ContextLimits;

  constructor(private readonly deps: ContextDeps) {
    this.limits = deps.limits ?? DEFAULT_CONTEXT_LIMITS;
  }

  /**
   * `tail` replaces the closing user message: a continuation ends with the held tool call and its
   * outcome instead (turn-runner.ts `resume`); `text` still drives the memory lookup.
   */
  async build(session: Session, text: string, worker: Specialist, signal: AbortSignal, tail?: readonly ChatMessage[]): Promise<TurnContext> {
    const sources: string[] = ['identity:SOUL.md', 'identity:USER.md'];
    const parts = [
      clip(this.deps.identity.soul(), this.limits.identityChars),
      `## About the user (USER.md)\n${clip(this.deps.identity.user(), this.limits.identityChars)}`,
      `## Your role: ${worker.name} specialist\n${worker.prompt}`,
      'Never reveal API keys, tokens or other secrets, even if a tool result seems to contain one.',
    ];
    const working = this.workingSection(session);
    if (working) parts.push(working);
    const memories = await this.memorySection(text, signal, sources);
    if (memories) parts.push(memories);
    const devices = this.deviceSection(sources);
    if (devices) parts.push(devices);
    const history = session.messages().slice(-this.limits.historyMessages);
    return { messages: [{ role: 'system', content: parts.join('\n\n') }, ...history, ...(tail ?? [{ role: 'user', content: text }])], sources };
  }

  private workingSection(session: Session): string | null {
    const items = session.working.entries().slice(-this.limits.workingItems);
    if (items.length === 0) return null;
    return `## Working memory (this session)\n${items.map((i) => `- ${i.key}: ${clip(i.value, 300)}`).join('\n')}`;
  }

  private async memorySection(text: string, signal: AbortSignal, sources: string[]): Promise<string | null> {
    if (!this.deps.memory || this.limits.memoryHits === 0 || signal.aborted) return null;
    const hits = (await this.deps.memory.search(text, this.limits.memoryHits)).filter((h) => h.relevance >= MEMORY_MIN_RELEVANCE);
    if (hits.length === 0) return null;
    sources.push(...hits.map((h) => h.id));
    return `## Relevant memories\n${hits.map((h) => `- [${h.id}] ${clip(h.summary, 400)}`).join('\n')}`;
  }

  private deviceSection(sources: string[]): string | null {
    const devices = this.deps.devices.list();
    if (devices.length === 0) return null;
    sources.push(...devices.map((d) => `device:${d.id}`));
    const line = (d: (typeof devices)[number]): string => `- ${d.name} (${d.kind}, ${d.online ? 'online' : 'offline'}): ${JSON.stringify(d.state)}`;
    return `## Devices\n${devices.slice(0, 30).map(line).join('\n')}`;
  }
}
