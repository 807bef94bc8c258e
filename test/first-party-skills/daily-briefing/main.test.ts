// skills/builtin/daily-briefing through the real sandbox, against the brain's own tools over fake ports:
// search_memory and knowledge_query (daemon/memory/memory-tools.ts over a fake AgentMemory), list_devices
// (daemon/agent/tools/brain-tools.ts over a fake device directory) and list_taskflows (a fake engine).
// The briefing names the pending reminders, the notes found for its topics (episodes left out, each
// note once), the facts about the user and the devices with their readings; every section is an SDUI
// list component; a tool this brain lacks marks its section unavailable and the rest still comes; the
// manifest is passive-only with a 07:00 schedule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import type { AgentMemory, DeviceSummary, KnowledgeFact, MemoryHit } from '../../../daemon/kernel/ports';
import { memoryTools } from '../../../daemon/memory/memory-tools';
import { brainTools } from '../../../daemon/agent/tools/brain-tools';
import type { DashboardStatus } from '../../../protocol/dashboard';
import { SduiComponent } from '../../../protocol/session';
import { builtinSkill, flowSummary, registryTools, resultOf, runBuiltin, taskflowRig, type ToolAnswer } from '../builtin-rig';

interface Briefing {
  text: string;
  sections: { id: string; template: string; title: string; data: { items: { id: string; text: string }[]; unavailable?: string } }[];
  generated_at: string;
}

const hit = (id: string, summary: string, relevance: number, tier: MemoryHit['tier'] = 'note'): MemoryHit => ({ id, tier, summary, relevance });

/** search answers by query; knowledge by subject; nothing else is called by the briefing. */
function fakeMemory(hits: Record<string, MemoryHit[]>, facts: Record<string, KnowledgeFact[]>): AgentMemory & { queries: string[] } {
  const queries: string[] = [];
  const unused = (): Promise<never> => Promise.reject(new Error('the briefing only reads'));
  return {
    queries,
    search: async (query) => (queries.push(query), hits[query] ?? []),
    knowledge: async (subject) => facts[subject] ?? [],
    remember: unused,
    forget: unused,
    addFacts: unused,
  };
}

const devices: DeviceSummary[] = [
  { id: 'dev_1', name: 'Kitchen sensor', kind: 'sensor', online: true, state: { temperature: 21.5, humidity: 40 } },
  { id: 'dev_2', name: 'Hall lamp', kind: 'light', online: false, state: { power: 'off' } },
];

/** The brain's read-only tools over fakes: memory (unless left out), devices and flows. */
function brain(opts: { memory?: AgentMemory | null; devices?: DeviceSummary[] } = {}): Record<string, ToolAnswer> {
  const registry = new ToolRegistry();
  if (opts.memory !== null) for (const tool of memoryTools(opts.memory ?? fakeMemory({}, {}))) registry.register('memory', tool);
  const list = opts.devices ?? devices;
  for (const tool of brainTools({ devices: { list: () => list, set: () => Promise.reject(new Error('read only')) }, status: () => ({}) as DashboardStatus })) registry.register('agent', tool);
  taskflowRig([flowSummary('flw_1', 'Reminder: take out the bins', 'waiting', 4_102_444_800), flowSummary('flw_2', 'Backup photos', 'waiting', 100), flowSummary('flw_3', 'Reminder: old', 'completed', null)], registry);
  return registryTools(registry);
}

test('the manifest: passive tools only, a manual trigger and 07:00 every day', async () => {
  const { manifest } = await builtinSkill('daily-briefing');
  assert.deepEqual(manifest.permissions, { network: { allow: [] }, tools: ['search_memory', 'knowledge_query', 'list_devices', 'list_taskflows'] });
  assert.deepEqual(manifest.triggers, [{ type: 'manual' }, { type: 'schedule', cron: '0 7 * * *' }]);
});

test('the briefing: reminders, notes for its topics, facts about the user, devices with readings', async () => {
  const memory = fakeMemory(
    {
      today: [hit('note_1', 'Dentist at 15:00 today.', 0.9), hit('ep_1', 'User: remember the dentist…', 0.95, 'episode')],
      appointment: [hit('note_1', 'Dentist at 15:00 today.', 0.7), hit('note_2', 'Car service appointment on Friday', 0.6)],
    },
    { user: [{ id: 'fact_1', subject: 'user', predicate: 'likes', object: 'green tea', confidence: 0.9 }] },
  );
  const run = await runBuiltin('daily-briefing', {}, brain({ memory }));
  const out = resultOf<Briefing>(run);
  assert.deepEqual(memory.queries.sort(), ['appointment', 'birthday', 'plan', 'reminder', 'today', 'todo', 'tomorrow']);
  assert.deepEqual(run.calls.map((c) => c.name).sort(), ['knowledge_query', 'list_devices', 'list_taskflows', ...Array<string>(7).fill('search_memory')]);
  const lines = out.text.split('\n');
  assert.match(lines[0]!, /^Good morning\. It is (Sun|Mon|Tues|Wednes|Thurs|Fri|Satur)day, \d{1,2} [A-Z][a-z]+ \d{4}\.$/);
  assert.deepEqual(lines.slice(1), [
    'Reminders: take out the bins (1 Jan 00:00 UTC).',
    'From memory: Dentist at 15:00 today; Car service appointment on Friday.',
    'I know that user likes green tea.',
    'Devices, 1 of 2 online: Kitchen sensor: temperature 21.5, humidity 40; Hall lamp: offline.',
  ]);
  assert.deepEqual(out.sections.map((s) => s.id), ['briefing-reminders', 'briefing-memory', 'briefing-knowledge', 'briefing-devices']);
  for (const s of out.sections) assert.ok(Value.Check(SduiComponent, s), `${s.id} is an SDUI component`);
  assert.deepEqual(out.sections[1]!.data.items.map((i) => i.id), ['note_1', 'note_2'], 'each note once, episodes left out');
  assert.ok(Math.abs(Date.parse(out.generated_at) - Date.now()) < 60_000);
});

test('topics, subjects and max_items from the params', async () => {
  const memory = fakeMemory({ garden: [hit('n1', 'Water the roses', 0.9), hit('n2', 'Buy compost', 0.8)] }, {});
  const run = await runBuiltin('daily-briefing', { topics: ['garden'], subjects: ['house', 'car'], max_items: 1 }, brain({ memory }));
  const out = resultOf<Briefing>(run);
  assert.deepEqual(memory.queries, ['garden']);
  assert.deepEqual(run.calls.filter((c) => c.name === 'knowledge_query').map((c) => c.args), [{ subject: 'house' }, { subject: 'car' }]);
  assert.deepEqual(out.sections[1]!.data.items.map((i) => i.text), ['Water the roses']);
  assert.equal(out.sections[3]!.data.items.length, 1);
});

test('a brain without memory tools: those sections say why, the rest of the briefing still comes', async () => {
  const out = resultOf<Briefing>(await runBuiltin('daily-briefing', {}, brain({ memory: null, devices: [] })));
  const [, mem, knowledge] = out.sections;
  assert.match(mem!.data.unavailable ?? '', /no tool named search_memory/);
  assert.match(knowledge!.data.unavailable ?? '', /no tool named knowledge_query/);
  assert.match(out.text, /Reminders: take out the bins/);
  assert.match(out.text, /No devices are connected\.$/);
  assert.doesNotMatch(out.text, /From memory/);
});
