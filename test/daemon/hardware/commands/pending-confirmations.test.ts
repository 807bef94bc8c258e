// daemon/hardware/commands/pending-confirmations.ts with the real approvals service (daemon/approvals) on the same
// SQLite file: a privileged device tool held by the permission hook is a command in
// pending_confirmation; approving runs the same call, which continues that command to succeeded;
// rejecting ends it denied, expiry cancelled; a brain restart keeps it waiting and the approval still
// continues it. stableJson makes argument order irrelevant (a property).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { Approvals } from '../../../../daemon/approvals/approvals';
import { APPROVAL_MIGRATIONS, ApprovalQueue } from '../../../../daemon/approvals/approval-queue';
import type { CommandRecord } from '../../../../protocol/hardware';
import { stableJson } from '../../../../daemon/hardware/commands/pending-confirmations';
import { hardwareRig, type Rig } from '../hardware-rig';

const heater = {
  device_id: 'heater',
  device_type: 'relay',
  name: 'Heater',
  capabilities: ['relay'],
  actions: [{ name: 'switch', params: [{ name: 'on', type: 'boolean' as const, required: true }, { name: 'minutes', type: 'integer' as const, default: 30 }] }],
};

function approvalsOf(rig: Rig): Approvals {
  const queue = new ApprovalQueue(rig.sqlite, rig.clock, 1);
  return new Approvals({
    queue,
    settings: { policies: { passive: 'auto', active: 'auto', privileged: 'ask', dangerous: 'ask' }, tools: {} },
    tools: rig.tools,
    bus: rig.bus,
    gauge: { set: () => undefined },
    clock: rig.clock,
    logger: pino({ level: 'silent' }),
  });
}

async function hold(rig: Rig, approvals: Approvals, args: Record<string, unknown>, turnId: string): Promise<string> {
  const tool = rig.tools.get('hwdev_heater__switch')!;
  assert.equal(tool.safety, 'privileged', 'a relay needs confirmation');
  const decision = await approvals.check({ tool: 'hwdev_heater__switch', safety: tool.safety, args, sessionId: 's1', turnId });
  assert.equal(decision.verdict, 'pending');
  return decision.verdict === 'pending' ? decision.requestId : '';
}

const recent = async (rig: Rig, query = ''): Promise<CommandRecord[]> => ((await rig.inject(`/api/commands/recent${query}`)).json() as { commands: CommandRecord[] }).commands;

async function setup(t: { after(fn: () => unknown): void }) {
  const rig = await hardwareRig(t);
  rig.sqlite.migrate('approvals', APPROVAL_MIGRATIONS);
  rig.nodes.scripts.set('pi-1', (r) => ({ success: true, result: { on: r.params.on } }));
  rig.register('pi-1', { device_manifest: heater });
  return rig;
}

void test('approved: the held call continues the same command (pending_confirmation → queued → sent → succeeded)', async (t) => {
  const rig = await setup(t);
  const approvals = approvalsOf(rig);
  const requestId = await hold(rig, approvals, { on: true }, 'turn-7');
  const [waiting] = await recent(rig, '?status=pending_confirmation');
  assert.equal(waiting?.approval_id, requestId);
  assert.deepEqual(waiting?.params, { on: true, minutes: 30 });
  assert.equal(rig.nodes.requests.length, 0, 'nothing is sent while it waits');
  const resolution = await approvals.approve(requestId, undefined);
  assert.equal(resolution.status, 'approved');
  const all = await recent(rig);
  assert.equal(all.length, 1, 'no second command');
  assert.deepEqual(all[0]!.history.map((h) => h.status), ['queued', 'pending_confirmation', 'queued', 'sent', 'succeeded']);
  assert.equal(all[0]!.command_id, waiting?.command_id);
  assert.deepEqual(rig.nodes.requests[0]?.request.params, { on: true, minutes: 30 });
});

void test('rejected → denied; expired → cancelled; nothing is sent', async (t) => {
  const rig = await setup(t);
  const approvals = approvalsOf(rig);
  const rejected = await hold(rig, approvals, { on: true }, 'turn-1');
  await approvals.reject(rejected, undefined);
  const expired = await hold(rig, approvals, { minutes: 5, on: false }, 'turn-2');
  rig.clock.ms += 2 * 60_000;
  await approvals.expire();
  await new Promise((r) => setImmediate(r));
  const byApproval = new Map((await recent(rig)).map((c) => [c.approval_id, c]));
  assert.equal(byApproval.get(rejected)?.status, 'denied');
  assert.equal(byApproval.get(rejected)?.error, 'rejected by the user');
  assert.equal(byApproval.get(expired)?.status, 'cancelled');
  assert.equal(rig.nodes.requests.length, 0);
});

void test('a restart keeps the command waiting; the approval afterwards continues it', async (t) => {
  const rig = await setup(t);
  const requestId = await hold(rig, approvalsOf(rig), { on: true }, 'turn-3');
  await rig.restart();
  rig.register('pi-1', { device_manifest: heater });
  const resolution = await approvalsOf(rig).approve(requestId, undefined);
  assert.equal(resolution.result?.status, 'ok');
  const [only, ...rest] = await recent(rig);
  assert.equal(rest.length, 0);
  assert.deepEqual(only?.history.map((h) => h.status), ['queued', 'pending_confirmation', 'queued', 'sent', 'succeeded']);
});

void test('property: stableJson ignores key order and undefined values', () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string().filter((k) => k !== 'absent' && k !== '__proto__'), fc.jsonValue()), (obj) => {
      const reversed = Object.fromEntries(Object.entries(obj).reverse());
      assert.equal(stableJson(obj), stableJson({ ...reversed, absent: undefined }));
    }),
  );
});
