// Bench harness for bench/sections/providers.mjs (compiled there with esbuild): the failover chain's
// own cost per call, measured against a zero-latency in-process provider in the same run.
//   direct      the fake provider's stream consumed directly (the baseline)
//   chain       the same provider as the only member of a chain built by createProviderChain
//   chain_skip  the same, behind a first member that is cooling down (the skip path)
//   chain_failover  behind a first member that fails at once with `overloaded` (cooldown written
//               to SQLite, then the next member) — reset before every call so each call fails over
//   openai_loopback  the OpenAI adapter (real SDK) against the fake server on loopback, for scale
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { createProviderChain } from '../../../daemon/providers/create-provider-chain';
import { createMetrics } from '../../../daemon/metrics/metrics';
import { ProviderError, type ChatEvent, type ChatRequest, type Provider } from '../../../daemon/providers/provider';
import { OpenAiProvider } from '../../../daemon/providers/openai-provider';
import { parseSettings } from '../../../daemon/config/load-settings';
import { startOpenAiServer } from '../../fakes/openai-server';
import { MemorySecrets } from './provider-fixtures';

const REQUEST: ChatRequest = { messages: [{ role: 'user', content: 'turn the lights off' }] };
const EVENTS: ChatEvent[] = [
  { type: 'text_delta', text: 'Sure' },
  { type: 'text_delta', text: ', done.' },
  { type: 'done', finish_reason: 'stop', provider: 'fast', model: 'zero' },
];

const instant = (id: string): Provider => ({
  id,
  kind: 'local',
  async *chat() {
    yield* EVENTS;
  },
  listModels: () => Promise.resolve(['zero']),
});

const failing = (id: string): Provider => ({
  id,
  kind: 'local',
  async *chat() {
    throw new ProviderError('overloaded', 'busy', id);
  },
  listModels: () => Promise.resolve([]),
});

export interface Latency {
  p50_us: number;
  p99_us: number;
  mean_us: number;
  n: number;
}

export function latency(us: number[]): Latency {
  const s = [...us].sort((a, b) => a - b);
  const at = (q: number): number => Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]! * 10) / 10;
  return { p50_us: at(0.5), p99_us: at(0.99), mean_us: Math.round((s.reduce((a, b) => a + b, 0) / s.length) * 10) / 10, n: s.length };
}

/** Times each call; with `settle`, lets the event loop run (group commits) between calls, untimed. */
async function time(calls: number, once: () => Promise<void>, settle = false): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await once();
    out.push((performance.now() - t) * 1000);
    if (settle) await new Promise((r) => setImmediate(r));
  }
  return out;
}

async function drain(p: Provider): Promise<void> {
  for await (const _ of p.chat(REQUEST)) {
    // consume
  }
}

function chainOf(store: SqliteStore, members: { id: string; provider: Provider }[]): ReturnType<typeof createProviderChain> {
  const settings = parseSettings({ providers: { chain: members.map((m) => ({ id: m.id, kind: 'local' })) } }).providers;
  // Each entry of kind 'local' resolves to deps.local, so one chain per provider set: members are built per id.
  const byId = new Map(members.map((m) => [m.id, m.provider]));
  const built = createProviderChain({ settings, vault: new MemorySecrets(), store, metrics: createMetrics(false).registry, logger: pino({ level: 'silent' }) });
  const real = built.registry.member.bind(built.registry);
  built.registry.member = (e) => ({ ...real(e), slots: [{ label: null, provider: byId.get(e.id)! }] });
  built.registry.invalidate();
  return built;
}

export async function measure(opts: { calls?: number; warmup?: number; loopbackCalls?: number } = {}): Promise<Record<string, unknown>> {
  const calls = opts.calls ?? 20_000;
  const warmup = opts.warmup ?? 2000;
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-providers-'));
  const store = new SqliteStore(join(dir, 'brain.db'));
  try {
    const fast = instant('fast');
    const happy = chainOf(store, [{ id: 'fast', provider: fast }]);
    const skip = chainOf(store, [{ id: 'cold', provider: fast }, { id: 'fast', provider: fast }]);
    await skip.state.put({ provider: 'cold', label: null, errorClass: 'overloaded', untilMs: Date.now() + 3_600_000, strikes: 1, message: 'bench' }, Date.now());
    const failover = chainOf(store, [{ id: 'busy', provider: failing('busy') }, { id: 'fast', provider: fast }]);
    const cases: Record<string, () => Promise<void>> = {
      direct: () => drain(fast),
      chain: () => drain(happy.chain),
      chain_skip: () => drain(skip.chain),
      chain_failover: async () => {
        void failover.state.reset([{ provider: 'busy', label: null }]);
        await drain(failover.chain);
      },
    };
    const results: Record<string, Latency> = {};
    for (const [name, fn] of Object.entries(cases)) {
      // The failover path writes a cooldown: let each group commit happen between calls, untimed.
      const settle = name === 'chain_failover';
      const n = settle ? Math.min(calls, 300) : calls;
      await time(settle ? 20 : warmup, fn, settle);
      results[name] = latency(await time(n, fn, settle));
    }
    const commit = latency(
      await time(100, () => failover.state.put({ provider: 'busy', label: null, errorClass: 'overloaded', untilMs: Date.now() + 1000, strikes: 1, message: 'bench' }, Date.now())),
    );
    const loopback = await openAiLoopback(opts.loopbackCalls ?? 300);
    return {
      calls,
      events_per_call: EVENTS.length,
      ...results,
      chain_overhead_us: { p50: round(results.chain!.p50_us - results.direct!.p50_us), p99: round(results.chain!.p99_us - results.direct!.p99_us) },
      skip_overhead_us: { p50: round(results.chain_skip!.p50_us - results.direct!.p50_us), p99: round(results.chain_skip!.p99_us - results.direct!.p99_us) },
      failover_note: 'chain_failover: the first member throws overloaded at once; the chain moves on without waiting for the cooldown commit (timed separately as cooldown_commit)',
      cooldown_commit: commit,
      openai_loopback: loopback,
    };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function openAiLoopback(calls: number): Promise<Latency> {
  const fake = await startOpenAiServer();
  try {
    const p = new OpenAiProvider({ id: 'oai', baseURL: fake.baseURL, apiKey: 'sk-bench-000000', keyLabel: null, model: () => 'gpt-fake', timeouts: { firstTokenMs: 10_000, idleMs: 10_000 } });
    await time(30, () => drain(p));
    return latency(await time(calls, () => drain(p)));
  } finally {
    await fake.close();
  }
}

const round = (n: number): number => Math.round(n * 10) / 10;
