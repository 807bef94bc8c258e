// daemon/agent/agent-metrics.ts: svc_tool_denials_total follows the shared tool registry (every tool
// ever registered, by any owner, has its series at zero; fast-check against a model of registrations
// and removals), denials and the session gauge count what they are told, and the agent declares both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Type } from '@sinclair/typebox';
import { agentMetrics } from '../../../daemon/agent/agent-metrics';
import { createMetrics } from '../../../daemon/metrics/metrics';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import { defineTool } from '../../../daemon/kernel/tool';
import { samples, sampleValue } from '../../helpers/metric-samples';
import { makeAgent, RecordingClient, ScriptedProvider, say } from './agent-fixtures';

const tool = (name: string) => defineTool({ spec: { name, description: name, parameters: Type.Object({}) }, safety: 'passive', run: async () => ({ summary: name }) });

const toolSeries = async (m: { render(): Promise<string> }): Promise<Map<string, number>> =>
  new Map(samples(await m.render()).filter((s) => s.name === 'svc_tool_denials_total').map((s) => [s.labels.tool!, s.value]));

void test('every tool registered before or after, by any owner, has a zero series; a removed tool keeps its count (model check)', async () => {
  const names = ['status', 'remember', 'identity', 'greet', 'web_search'];
  const op = fc.record({ kind: fc.constantFrom('add', 'remove', 'deny'), name: fc.constantFrom(...names), owner: fc.constantFrom('agent', 'memory', 'greeter') });
  await fc.assert(
    fc.asyncProperty(fc.subarray(names), fc.array(op, { maxLength: 20 }), async (before, ops) => {
      const tools = new ToolRegistry();
      for (const name of before) tools.register('core', tool(name));
      const m = createMetrics(true);
      const metrics = agentMetrics(m.registry, tools);
      const model = new Map<string, number>(before.map((name) => [name, 0]));
      for (const o of ops) {
        if (o.kind === 'add' && tools.get(o.name) === undefined) {
          tools.register(o.owner, tool(o.name));
          model.set(o.name, model.get(o.name) ?? 0);
        } else if (o.kind === 'remove' && tools.get(o.name) !== undefined) {
          tools.unregister(o.name);
        } else if (o.kind === 'deny' && tools.get(o.name) !== undefined) {
          metrics.toolDenied(o.name);
          model.set(o.name, (model.get(o.name) ?? 0) + 1);
        }
      }
      assert.deepEqual(await toolSeries(m), model);
    }),
  );
});

void test('the agent declares its two metrics under the owner agent, and the session gauge follows attached clients', async () => {
  const { agent, metrics } = makeAgent(new ScriptedProvider([() => say('hi')]));
  assert.equal(metrics.registry.owners().get('svc_tool_denials_total'), 'agent');
  assert.equal(metrics.registry.owners().get('svc_ws_active_sessions'), 'agent');
  assert.equal((await toolSeries(metrics)).get('status'), 0, 'the agent\'s own tools are declared too');
  assert.equal(await sampleValue(metrics, 'svc_ws_active_sessions'), 0);
  const session = agent.sessions.open();
  const client = new RecordingClient();
  agent.sessions.attach(session, client);
  assert.equal(await sampleValue(metrics, 'svc_ws_active_sessions'), 1);
  agent.sessions.detach(session, client);
  assert.equal(await sampleValue(metrics, 'svc_ws_active_sessions'), 0);
});

void test('declared once per registry; with metrics off nothing renders', async () => {
  const m = createMetrics(true);
  agentMetrics(m.registry, new ToolRegistry());
  assert.throws(() => agentMetrics(m.registry, new ToolRegistry()), /svc_tool_denials_total is already declared by agent/);
  const off = createMetrics(false);
  const quiet = agentMetrics(off.registry, new ToolRegistry());
  quiet.toolDenied('status');
  quiet.activeSessions(2);
  assert.equal(await off.render(), '');
});
