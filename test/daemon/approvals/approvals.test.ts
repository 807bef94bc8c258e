// daemon/approvals/approvals.ts with real parts (SQLite file, tool registry, bus, metrics registry):
// the hook's three answers, approve running the held call once, reject never running it, the gauge
// following the pending count and the bus hearing every request and resolution.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { APPROVAL_MIGRATIONS, ApprovalQueue } from '../../../daemon/approvals/approval-queue';
import { Approvals } from '../../../daemon/approvals/approvals';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import { EventBus } from '../../../daemon/kernel/event-bus';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { defineTool, ToolFailure } from '../../../daemon/kernel/tool';
import { createMetrics } from '../../../daemon/metrics/metrics';
import { AppError } from '../../../daemon/kernel/errors';
import type { PermissionRequest } from '../../../daemon/kernel/permissions';

async function fixture(t: { after(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-approvals-'));
  const store = new SqliteStore(join(dir, 'brain.db'));
  store.migrate('approvals', APPROVAL_MIGRATIONS);
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const clock = { ms: 1_700_000_000_000, now() { return this.ms; } };
  const runs: unknown[] = [];
  const tools = new ToolRegistry()
    .register('test', defineTool({ spec: { name: 'reboot', description: 'Reboots.', parameters: Type.Object({ delay: Type.Integer() }) }, safety: 'privileged', run: async (args) => (runs.push(args), { summary: 'rebooting', data: { delay: args.delay } }) }))
    .register('test', defineTool({ spec: { name: 'wipe', description: 'Wipes.', parameters: Type.Object({}) }, safety: 'dangerous', run: async () => { throw new ToolFailure('nothing to wipe'); } }));
  const events: BrainEvent[] = [];
  const bus = new EventBus<BrainEvent>((_owner, err) => { throw err; });
  bus.on('test', (e) => events.push(e));
  const metrics = createMetrics(true);
  const gauge = metrics.registry.gauge('approvals', { name: 'svc_supervisor_approval_queue', help: 'Tool calls waiting for approval' });
  const queue = new ApprovalQueue(store, clock, 60);
  const settings = { policies: { passive: 'auto', active: 'auto', privileged: 'ask', dangerous: 'ask' } as const, tools: { status: 'deny' as const } };
  const approvals = new Approvals({ queue, settings, tools, bus, gauge, clock, logger: pino({ level: 'silent' }) });
  const queued = async () => /^svc_supervisor_approval_queue (\d+)$/m.exec(await metrics.render())?.[1];
  return { approvals, queue, runs, events, queued, clock };
}

const ask = (tool: string, over: Partial<PermissionRequest> = {}): PermissionRequest => ({ tool, safety: 'privileged', args: { delay: 5 }, sessionId: 's1', turnId: 't1', ...over });

void test('auto allows, deny refuses with a reason, ask holds the call as a pending request', async (t) => {
  const { approvals, queue, events, queued } = await fixture(t);
  assert.deepEqual(await approvals.check(ask('lookup', { safety: 'passive' })), { verdict: 'allow' });
  const denied = await approvals.check(ask('status', { safety: 'passive' }));
  assert.equal(denied.verdict, 'deny');
  const held = await approvals.check(ask('reboot'));
  assert.equal(held.verdict, 'pending');
  assert.ok(held.verdict === 'pending' && queue.get(held.requestId)?.status === 'pending');
  assert.equal(await queued(), '1');
  assert.ok(held.verdict === 'pending');
  assert.deepEqual(events, [{ type: 'approval_requested', category: 'approval', priority: 'high', requestId: held.requestId, sessionId: 's1', turnId: 't1', tool: 'reboot', safety: 'privileged', args: { delay: 5 }, createdAt: queue.get(held.requestId)!.created_at, at: 1_700_000_000_000 }]);
});

void test('approve runs the held call once with its arguments; a second approve is a 404 and runs nothing', async (t) => {
  const { approvals, runs, events, queued } = await fixture(t);
  const held = await approvals.check(ask('reboot'));
  assert.ok(held.verdict === 'pending');
  const [first, second] = await Promise.allSettled([approvals.approve(held.requestId, 's1'), approvals.approve(held.requestId, undefined)]);
  assert.deepEqual(first.status === 'fulfilled' && first.value, { success: true, status: 'approved', request_id: held.requestId, session_id: 's1', tool_name: 'reboot', summary: 'rebooting', result: { status: 'ok', summary: 'rebooting', data: { delay: 5 } } });
  assert.ok(second.status === 'rejected' && second.reason instanceof AppError && second.reason.status === 404);
  assert.deepEqual(runs, [{ delay: 5 }]);
  assert.equal(await queued(), '0');
  assert.deepEqual(events.map((e) => (e.type === 'approval_resolved' ? e.status : e.type)), ['approval_requested', 'approved']);
  // The originating session hears the outcome through the bus: the turn that asked and the tool's result.
  const resolved = events.find((e) => e.type === 'approval_resolved');
  assert.ok(resolved?.type === 'approval_resolved');
  assert.equal(resolved.turnId, 't1');
  assert.deepEqual(resolved.result, { status: 'ok', summary: 'rebooting', data: { delay: 5 } }, 'with its data, for the continuation');
  assert.deepEqual(resolved.args, { delay: 5 });
});

void test('a tool failure is the approval result, not an error of the request', async (t) => {
  const { approvals, queue } = await fixture(t);
  const held = await approvals.check(ask('wipe', { safety: 'dangerous', args: {} }));
  assert.ok(held.verdict === 'pending');
  const resolution = await approvals.approve(held.requestId, undefined);
  assert.deepEqual(resolution.result, { status: 'error', summary: 'nothing to wipe' });
  assert.equal(queue.get(held.requestId)?.status, 'approved');
});

void test('reject never runs the call and carries neither summary nor result; the list drops it', async (t) => {
  const { approvals, runs, queued } = await fixture(t);
  const held = await approvals.check(ask('reboot'));
  assert.ok(held.verdict === 'pending');
  assert.equal((await approvals.list({ limit: 10 })).length, 1);
  assert.deepEqual(await approvals.reject(held.requestId, 's1'), { success: true, status: 'rejected', request_id: held.requestId, session_id: 's1', tool_name: 'reboot' });
  await assert.rejects(approvals.approve(held.requestId, undefined), (err) => err instanceof AppError && err.status === 404);
  assert.deepEqual(runs, []);
  assert.deepEqual(await approvals.list({ limit: 10 }), []);
  assert.equal(await queued(), '0');
});

void test('a request for a tool no longer registered stays pending: 503, nothing claimed', async (t) => {
  const { approvals, queue } = await fixture(t);
  const held = await approvals.check(ask('gone'));
  assert.ok(held.verdict === 'pending');
  await assert.rejects(approvals.approve(held.requestId, undefined), (err) => err instanceof AppError && err.status === 503);
  assert.equal(queue.get(held.requestId)?.status, 'pending');
});

void test('past the TTL a listing marks the request expired, announces it once, and the gauge drops', async (t) => {
  const { approvals, queue, events, queued, clock } = await fixture(t);
  const held = await approvals.check(ask('reboot'));
  assert.ok(held.verdict === 'pending');
  clock.ms += 61 * 60_000;
  assert.equal(await queued(), '1', 'the gauge is set on changes; expiry is one, found by the next read');
  assert.deepEqual(await approvals.list({ limit: 10 }), []);
  assert.deepEqual(await approvals.list({ limit: 10 }), []);
  assert.equal(queue.get(held.requestId)?.status, 'expired');
  assert.deepEqual(events.filter((e) => e.type === 'approval_resolved').map((e) => e.type === 'approval_resolved' && e.status), ['expired']);
  assert.equal(await queued(), '0');
  await assert.rejects(approvals.approve(held.requestId, undefined), (err) => err instanceof AppError && err.status === 404);
});

void test('approving or rejecting a request past the TTL, before any listing, is a 404 that announces the expiry once (a missing tool too)', async (t) => {
  const { approvals, queue, events, queued, clock } = await fixture(t);
  const held = await approvals.check(ask('reboot'));
  const gone = await approvals.check(ask('gone'));
  assert.ok(held.verdict === 'pending' && gone.verdict === 'pending');
  clock.ms += 61 * 60_000;
  await assert.rejects(approvals.approve(gone.requestId, undefined), (err) => err instanceof AppError && err.status === 404);
  await assert.rejects(approvals.reject(held.requestId, undefined), (err) => err instanceof AppError && err.status === 404);
  assert.equal(queue.get(held.requestId)?.status, 'expired');
  const expired = events.filter((e) => e.type === 'approval_resolved').map((e) => e.type === 'approval_resolved' && [e.requestId, e.status]);
  assert.deepEqual(expired.sort(), [[held.requestId, 'expired'], [gone.requestId, 'expired']].sort());
  assert.equal(await queued(), '0');
});
