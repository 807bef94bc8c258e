// daemon/hardware/hardware-routes.ts through the real HTTP app: /api/commands/recent's limit (1–500,
// default 50, plain decimal digits: anything else a 400 in the error envelope, never clamped), its
// device and status filters, newest first; /api/commands/{id} 404 NOT_FOUND for an unknown id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandRecord } from '../../../protocol/hardware';
import { hardwareRig, lampManifest, lampScript, settingsWith } from './hardware-rig';

type List = { commands: CommandRecord[] };

void test('recent: limit bounds are a 400 in the envelope; filters; newest first; the default is 50', async (t) => {
  const rig = await hardwareRig(t, settingsWith({ actuator_rate_per_minute: 6000 }));
  rig.nodes.scripts.set('pi-1', lampScript());
  rig.register('pi-1', { device_manifest: [lampManifest({}, null), { ...lampManifest({}, null), device_id: 'lamp2' }] });
  for (const url of ['0', '501', 'abc', '1.5', '-1', '1e2', '']) {
    const res = await rig.inject(`/api/commands/recent?limit=${url}`);
    assert.equal(res.statusCode, 400, `limit=${url}`);
    assert.equal((res.json() as { error: { code: string } }).error.code, 'BAD_REQUEST');
  }
  assert.equal((await rig.inject('/api/commands/recent?status=exploded')).statusCode, 400);
  const ids: string[] = [];
  for (let i = 0; i < 55; i++) {
    rig.clock.ms += 1;
    const out = await rig.call(i % 5 === 0 ? 'hwdev_lamp2__set_power' : 'hwdev_lamp__set_power', { on: i % 2 === 0 });
    ids.push(out.data.data.command_id as string);
  }
  const all = (await rig.inject('/api/commands/recent')).json() as List;
  assert.equal(all.commands.length, 50);
  assert.equal(all.commands[0]!.command_id, ids[54], 'newest first');
  assert.equal(((await rig.inject('/api/commands/recent?limit=500')).json() as List).commands.length, 55);
  const lamp2 = ((await rig.inject('/api/commands/recent?device=lamp2')).json() as List).commands;
  assert.equal(lamp2.length, 11);
  assert.ok(lamp2.every((c) => c.device_id === 'lamp2'));
  assert.equal(((await rig.inject('/api/commands/recent?status=denied')).json() as List).commands.length, 0);
  assert.equal(((await rig.inject('/api/commands/recent?limit=1&status=succeeded')).json() as List).commands.length, 1);
});

void test('one command by id; an unknown id is 404 NOT_FOUND', async (t) => {
  const rig = await hardwareRig(t);
  rig.nodes.scripts.set('pi-1', lampScript());
  rig.register('pi-1', { device_manifest: lampManifest() });
  const out = await rig.call('hwdev_lamp__set_power', { on: true });
  const res = await rig.inject(`/api/commands/${out.data.data.command_id as string}`);
  assert.equal(res.statusCode, 200);
  const record = res.json() as CommandRecord;
  assert.equal(record.node_id, 'pi-1');
  assert.ok(record.history.every((h, i) => i === 0 || h.at >= record.history[i - 1]!.at));
  const missing = await rig.inject('/api/commands/cmd_nope');
  assert.equal(missing.statusCode, 404);
  assert.equal((missing.json() as { error: { code: string } }).error.code, 'NOT_FOUND');
});
