// daemon/agent/tools/tool-runner.ts: a refusal of the permission plane from inside a tool (ToolDenied,
// e.g. a path no folder grant covers) is status `denied` and counted in svc_tool_denials_total like a
// policy denial; a plain ToolFailure is an `error` and counts nothing; a policy denial still counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { ToolRunner } from '../../../../daemon/agent/tools/tool-runner';
import { agentMetrics } from '../../../../daemon/agent/agent-metrics';
import { SecretScrubber } from '../../../../daemon/agent/tools/secret-scrubber';
import { ToolRegistry } from '../../../../daemon/kernel/tool-registry';
import { StaticPermissionHook } from '../../../../daemon/kernel/permissions';
import { defineTool, ToolDenied, ToolFailure } from '../../../../daemon/kernel/tool';
import { createMetrics } from '../../../../daemon/metrics/metrics';
import { samples } from '../../../helpers/metric-samples';

const throwing = (name: string, err: Error) => defineTool({ spec: { name, description: name, parameters: Type.Object({}) }, safety: 'passive', run: async () => { throw err; } });

async function rig() {
  const tools = new ToolRegistry()
    .register('test', throwing('open_outside', new ToolDenied('/etc/passwd: outside every granted folder')))
    .register('test', throwing('open_missing', new ToolFailure('/home/a/x: does not exist')))
    .register('test', defineTool({ spec: { name: 'wipe', description: 'wipe', parameters: Type.Object({}) }, safety: 'dangerous', run: async () => ({ summary: 'wiped' }) }));
  const metrics = createMetrics(true);
  const runner = new ToolRunner({ registry: tools, permissions: new StaticPermissionHook(), scrubber: new SecretScrubber(), metrics: agentMetrics(metrics.registry, tools), logger: pino({ level: 'silent' }) });
  const offered = new Set(tools.names());
  const ctx = { sessionId: 's1', turnId: 't1', specialist: 'general' as const, signal: new AbortController().signal };
  const run = (name: string) => runner.run({ id: `call_${name}`, name, arguments: {} }, offered, ctx);
  const denials = async () => new Map(samples(await metrics.render()).filter((s) => s.name === 'svc_tool_denials_total').map((s) => [s.labels.tool!, s.value]));
  return { run, denials };
}

void test('ToolDenied from a tool is status denied, told to the model, and counted', async () => {
  const { run, denials } = await rig();
  const r = await run('open_outside');
  assert.equal(r.status, 'denied');
  assert.equal(r.summary, '/etc/passwd: outside every granted folder');
  assert.deepEqual(JSON.parse(r.message.content), { status: 'denied', summary: '/etc/passwd: outside every granted folder' });
  assert.equal((await denials()).get('open_outside'), 1);
});

void test('a ToolFailure is an error and no denial; a policy denial still counts', async () => {
  const { run, denials } = await rig();
  assert.equal((await run('open_missing')).status, 'error');
  assert.equal((await denials()).get('open_missing'), 0);
  assert.equal((await run('wipe')).status, 'denied', 'the static hook refuses dangerous tools');
  assert.equal((await denials()).get('wipe'), 1);
});
