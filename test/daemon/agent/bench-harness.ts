// In-process part of bench/sections/agent.mjs (compiled by esbuild there): the agent core's own cost
// per turn with a zero-latency provider, excluding the time spent inside the provider. Everything
// real except the provider and devices: SQLite memory (C's createMemory) with notes to search,
// identity files on disk, the router with its preference table, frames serialised like a socket would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { ChatEvent, ChatRequest, Provider } from '../../../daemon/providers/provider';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { createMemory } from '../../../daemon/memory/create-memory';
import { parseSettings } from '../../../daemon/config/load-settings';
import { withCoreTools } from './agent-fixtures';
import { Agent } from '../../../daemon/agent/agent';
import { emptyDevices } from '../../../daemon/kernel/ports';
import { IdentityFiles } from '../../../daemon/identity/identity-files';
import { createMetrics } from '../../../daemon/metrics/metrics';
import { newTurnId } from '../../../daemon/agent/session-manager';
import type { SessionClient } from '../../../daemon/agent/session';

/** Zero-latency provider that records how long its own stream took (to subtract it). */
class TimedProvider implements Provider {
  readonly id = 'zero';
  readonly kind = 'openai' as const;
  providerMs = 0;
  constructor(private readonly withTool: boolean) {}
  async *chat(request: ChatRequest): AsyncIterable<ChatEvent> {
    const t0 = performance.now();
    const events: ChatEvent[] =
      this.withTool && request.messages.at(-1)?.role === 'user'
        ? [{ type: 'tool_call', call: { id: 'c1', name: 'status', arguments: {} } }, { type: 'done', finish_reason: 'tool_calls', provider: 'zero', model: 'z' }]
        : [{ type: 'text_delta', text: 'All ' }, { type: 'text_delta', text: 'good.' }, { type: 'done', finish_reason: 'stop', provider: 'zero', model: 'z' }];
    for (const e of events) {
      this.providerMs += performance.now() - t0;
      yield e;
    }
  }
  listModels(): Promise<string[]> {
    return Promise.resolve(['z']);
  }
}

const pct = (values: number[], p: number): number => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
};
const r3 = (n: number): number => Math.round(n * 1000) / 1000;

async function scenario(home: string, withTool: boolean, turns: number, notes: number) {
  const logger = pino({ level: 'silent' });
  const store = new SqliteStore(join(home, `brain-${withTool ? 'tool' : 'text'}.db`), { synchronous: 'FULL', groupCommit: true, logger });
  const settings = parseSettings({});
  const memory = createMemory({ store, settings: settings.memory, logger });
  for (let i = 0; i < notes; i++) await memory.memory.remember(`note ${i}: the ${['lamp', 'boiler', 'garden', 'car', 'dog'][i % 5]} needs attention on day ${i % 28}`);
  const identity = new IdentityFiles(home);
  identity.start();
  const provider = new TimedProvider(withTool);
  const agent = new Agent({
    provider,
    memory: memory.memory,
    identity,
    devices: emptyDevices,
    store,
    metrics: createMetrics(true).registry,
    logger,
    settings: settings.agent,
    brain: { version: 'bench', uptimeSeconds: () => 1, stopping: () => false },
    secrets: () => ['sk-bench-secret-123456'],
  });
  withCoreTools(agent, identity);
  agent.start();
  const session = agent.sessions.open();
  let bytes = 0;
  const client: SessionClient = { id: 'bench', kind: 'websocket', send: (m) => void (bytes += JSON.stringify(m).length) };
  agent.sessions.attach(session, client);
  const overhead: number[] = [];
  const texts = ['how is the lamp doing', 'what about the garden', 'status please', 'tell me about the boiler'];
  for (let i = 0; i < turns; i++) {
    const before = provider.providerMs;
    const t0 = performance.now();
    await agent.sessions.submit(session, texts[i % texts.length]!, newTurnId());
    overhead.push(performance.now() - t0 - (provider.providerMs - before));
  }
  await agent.stop();
  for (const p of memory.parts) await p.stop?.();
  store.close();
  const measured = overhead.slice(Math.floor(turns / 10)); // first 10 % is warm-up
  return { turns: measured.length, p50_ms: r3(pct(measured, 50)), p99_ms: r3(pct(measured, 99)), mean_ms: r3(measured.reduce((a, b) => a + b, 0) / measured.length), frame_bytes_per_turn: Math.round(bytes / turns) };
}

/** Baseline: the same zero-latency provider consumed directly, no agent around it. */
async function baseline(turns: number) {
  const provider = new TimedProvider(false);
  const times: number[] = [];
  for (let i = 0; i < turns; i++) {
    const t0 = performance.now();
    for await (const e of provider.chat({ messages: [{ role: 'user', content: 'x' }] })) void e;
    times.push(performance.now() - t0);
  }
  return { p50_ms: r3(pct(times, 50)), p99_ms: r3(pct(times, 99)) };
}

export async function measure(opts: { turns: number; notes: number }) {
  const home = mkdtempSync(join(tmpdir(), 'svc-agent-bench-'));
  try {
    const text = await scenario(home, false, opts.turns, opts.notes);
    const tool = await scenario(home, true, opts.turns, opts.notes);
    return { notes_in_memory: opts.notes, bare_provider: await baseline(opts.turns), text_turn: text, tool_turn: tool };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
