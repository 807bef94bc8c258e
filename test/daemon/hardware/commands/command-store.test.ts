// daemon/hardware/commands/command-store.ts (hardware-rig.ts: real SQLite): a crash's commands left `sent` are
// failed "brain restarted" at start; final commands beyond commands.keep are pruned oldest first with
// their history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandRecord } from '../../../../protocol/hardware';
import { hardwareRig, lampManifest, lampScript, settingsWith } from '../hardware-rig';

type List = { commands: CommandRecord[] };

const command = async (rig: Awaited<ReturnType<typeof hardwareRig>>, id: string): Promise<CommandRecord> => (await rig.inject(`/api/commands/${id}`)).json() as CommandRecord;
const statuses = (c: CommandRecord): string[] => c.history.map((h) => h.status);

void test('a brain that crashed leaves sent commands behind: at start they are failed "brain restarted"', async (t) => {
  const rig = await hardwareRig(t);
  rig.register('pi-1', { device_manifest: lampManifest() });
  rig.nodes.scripts.set('pi-1', () => new Promise(() => undefined));
  void rig.call('hwdev_lamp__set_power', { on: true });
  while (rig.nodes.requests.length === 0) await new Promise((r) => setImmediate(r));
  await rig.sqlite.write(() => undefined); // writes are committed in order: the `sent` row is stored once this one is
  const [stuck] = ((await rig.inject('/api/commands/recent')).json() as { commands: CommandRecord[] }).commands;
  assert.equal(stuck?.status, 'sent');
  await rig.restart({ crash: true });
  const after = await command(rig, stuck.command_id);
  assert.deepEqual(statuses(after), ['queued', 'sent', 'failed']);
  assert.equal(after.error, 'brain restarted');
});

void test('final commands beyond commands.keep are pruned, oldest first, with their history', async (t) => {
  const rig = await hardwareRig(t, settingsWith({ commands: { keep: 5 }, actuator_rate_per_minute: 6000 }));
  rig.nodes.scripts.set('pi-1', lampScript());
  rig.register('pi-1', { device_manifest: lampManifest({}, null) });
  const ids: string[] = [];
  for (let i = 0; i < 9; i++) {
    rig.clock.ms += 1;
    ids.push((await rig.call('hwdev_lamp__set_power', { on: true })).data.data.command_id as string);
  }
  await rig.sqlite.write(() => undefined);
  const kept = ((await rig.inject('/api/commands/recent?limit=500')).json() as List).commands.map((c) => c.command_id);
  assert.deepEqual(kept, ids.slice(4).reverse());
  assert.equal((await rig.inject(`/api/commands/${ids[0]!}`)).statusCode, 404);
  assert.equal(rig.sqlite.get<{ n: number }>('SELECT COUNT(*) AS n FROM hw_command_history WHERE command_id = ?', [ids[0]!])?.n, 0);
});
