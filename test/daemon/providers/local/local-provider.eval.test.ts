// The embedded local agent on the labelled requests of test/fixtures/local-agent-eval.json: each one
// is a real turn (router, context, tool runner, sentence matcher) against a real SQLite memory seeded
// with the fixture's notes and a device directory. Accuracy is printed per split; the test fails
// below 0.9 overall. The holdout items were written after the templates were frozen and never tuned on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from '../../../../daemon/agent/agent';
import type { DeviceSummary } from '../../../../daemon/kernel/ports';
import { newTurnId } from '../../../../daemon/agent/session-manager';
import { createMetrics } from '../../../../daemon/metrics/metrics';
import { LocalProvider } from '../../../../daemon/providers/local/local-provider';
import { repoRoot } from '../../../helpers/external-tools';
import { FakeDevices, identity, RecordingClient, SETTINGS, silent, withCoreTools } from '../../agent/agent-fixtures';
import { memoryFixture, type MemoryFixture } from '../../memory/memory-fixture';

interface EvalItem {
  split: 'tune' | 'holdout';
  kind: string;
  text: string;
  /** First tool the turn calls; null: none at all; absent: not checked. */
  tool?: string | null;
  answer?: string;
}

interface EvalSet {
  memory: string[];
  devices: DeviceSummary[];
  items: EvalItem[];
}

const MIN_ACCURACY = 0.9;
const set = JSON.parse(readFileSync(join(repoRoot(), 'test/fixtures/local-agent-eval.json'), 'utf8')) as EvalSet;

async function seeded(notes: readonly string[]): Promise<MemoryFixture> {
  const fx = memoryFixture();
  for (const n of notes) await fx.memory.remember(n, { source: 'user' });
  return fx;
}

/** One turn in a fresh session of a fresh agent (fresh devices) over the given memory. */
async function turn(memory: MemoryFixture, item: EvalItem): Promise<{ tools: string[]; text: string }> {
  const agent = new Agent({
    provider: new LocalProvider(),
    memory: memory.memory,
    identity: identity(),
    devices: new FakeDevices(structuredClone(set.devices)),
    store: null,
    metrics: createMetrics(true).registry,
    logger: silent,
    settings: SETTINGS,
    brain: { version: '0.0.0-test', uptimeSeconds: () => 1, stopping: () => false },
    secrets: () => [],
  });
  withCoreTools(agent);
  agent.start();
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  const result = await agent.sessions.submit(session, item.text, newTurnId());
  await agent.stop();
  return { tools: client.frames.flatMap((f) => (f.type === 'tool_call' ? [f.payload.name] : [])), text: result.text };
}

function correct(item: EvalItem, got: { tools: string[]; text: string }): boolean {
  if (item.tool === null && got.tools.length > 0) return false;
  if (typeof item.tool === 'string' && got.tools[0] !== item.tool) return false;
  return item.answer === undefined || got.text.toLowerCase().includes(item.answer.toLowerCase());
}

void test('the labelled set is well formed: 100+ requests of every kind, both splits', () => {
  assert.ok(set.items.length >= 100, `${set.items.length} items`);
  for (const kind of ['recall', 'remember', 'device', 'chitchat', 'unknown', 'memory_guess']) assert.ok(set.items.some((i) => i.kind === kind), kind);
  for (const split of ['tune', 'holdout']) assert.ok(set.items.filter((i) => i.split === split).length >= 30, split);
});

void test(`local agent accuracy on the labelled set is at least ${MIN_ACCURACY}`, { timeout: 300_000 }, async (t) => {
  // Statements go to their own memory so what they store cannot change the recall items' answers.
  const recall = await seeded(set.memory);
  const scratch = await seeded(set.memory);
  t.after(() => Promise.all([recall.close(), scratch.close()]));
  const score = { tune: { ok: 0, n: 0 }, holdout: { ok: 0, n: 0 } };
  const misses: string[] = [];
  for (const item of set.items) {
    const got = await turn(item.kind === 'remember' ? scratch : recall, item);
    const ok = correct(item, got);
    score[item.split].n++;
    if (ok) score[item.split].ok++;
    else misses.push(`[${item.split}/${item.kind}] ${JSON.stringify(item.text)} → tools ${JSON.stringify(got.tools)}: ${JSON.stringify(got.text.slice(0, 160))}`);
  }
  const acc = (s: { ok: number; n: number }): string => (s.n === 0 ? '-' : (s.ok / s.n).toFixed(3));
  const all = { ok: score.tune.ok + score.holdout.ok, n: score.tune.n + score.holdout.n };
  t.diagnostic(`local agent accuracy: all ${acc(all)} (${all.ok}/${all.n}), tune ${acc(score.tune)} (${score.tune.ok}/${score.tune.n}), holdout ${acc(score.holdout)} (${score.holdout.ok}/${score.holdout.n})`);
  for (const m of misses) t.diagnostic(`miss ${m}`);
  assert.ok(all.ok / all.n >= MIN_ACCURACY, `accuracy ${acc(all)} < ${MIN_ACCURACY}:\n${misses.join('\n')}`);
});
