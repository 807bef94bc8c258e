// daemon/skills/skill-triggers.ts: an every_seconds schedule fires again and again until disarmed; a
// tick that comes while the previous run still goes is skipped (and logged), so runs never pile up; a
// seconds cron fires; an event trigger fires on a bus event of its type with the event's fields as
// params, and not on other types; a failed run is logged, never thrown into the bus; stop() disarms
// everything and leaves the bus. Last, through the whole service (skills-rig.ts): an active skill with
// an event trigger runs in the sandbox on a matching bus event and its run is recorded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { EventBus } from '../../../daemon/kernel/event-bus';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { SkillTriggers } from '../../../daemon/skills/skill-triggers';
import type { SkillManifest } from '../../../protocol/skills';
import { manifestOf, newKey, skillsRig, until, writeSkill } from './skills-rig';

interface Fired {
  id: string;
  trigger: string;
  params: Record<string, unknown>;
}

function triggersRig(t: { after(fn: () => unknown): void }, run: (f: Fired) => Promise<void> = async () => undefined) {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }));
  const bus = new EventBus<BrainEvent>((_owner, err) => {
    throw err;
  });
  const fired: Fired[] = [];
  const triggers = new SkillTriggers(bus, (id, trigger, params) => (fired.push({ id, trigger, params }), run({ id, trigger, params })), logger);
  t.after(() => triggers.stop());
  return { triggers, bus, fired, lines };
}

const manifest = (id: string, triggers: Record<string, unknown>[]): SkillManifest => manifestOf({ id, triggers }) as unknown as SkillManifest;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

void test('every_seconds fires again and again; disarm stops it', async (t) => {
  // The interval's own clock, so "no tick after disarm" is checked without waiting on the wall clock.
  t.mock.timers.enable({ apis: ['setInterval'] });
  const r = triggersRig(t);
  r.triggers.arm(manifest('ticker', [{ type: 'schedule', every_seconds: 1 }]));
  for (let tick = 0; tick < 2; tick++) {
    t.mock.timers.tick(1000);
    await new Promise(setImmediate); // the run settles, so the next tick is not skipped as overlapping
  }
  assert.equal(r.fired.length, 2);
  assert.deepEqual(r.fired[0], { id: 'ticker', trigger: 'schedule', params: {} });
  r.triggers.disarm('ticker');
  t.mock.timers.tick(5000);
  assert.equal(r.fired.length, 2, 'no tick after disarm');
});

void test('a tick while the previous run still goes is skipped and logged; the next free tick runs', { timeout: 20_000 }, async (t) => {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const r = triggersRig(t, () => (r.fired.length === 1 ? held : Promise.resolve()));
  r.triggers.arm(manifest('slow', [{ type: 'schedule', every_seconds: 1 }]));
  await until('a skipped tick', () => r.lines.some((l) => l.includes('this one is skipped')), 200);
  assert.equal(r.fired.length, 1, 'the held run was not started again');
  release();
  await until('a second run', () => r.fired.length >= 2, 200);
});

void test('a seconds cron fires', { timeout: 20_000 }, async (t) => {
  const r = triggersRig(t);
  r.triggers.arm(manifest('cronned', [{ type: 'schedule', cron: '* * * * * *' }]));
  await until('a cron tick', () => r.fired.length >= 1, 200);
  assert.equal(r.fired[0]!.trigger, 'schedule');
});

void test('an event trigger fires on its type with the event\'s fields as params; other types and disarmed skills do not', { timeout: 20_000 }, async (t) => {
  const r = triggersRig(t);
  r.triggers.arm(manifest('greeter', [{ type: 'event', event: 'node_online' }, { type: 'manual' }]));
  r.triggers.arm(manifest('watcher', [{ type: 'event', event: 'node_offline' }]));
  r.bus.emit({ type: 'node_online', nodeId: 'kitchen', at: 5 });
  await until('the run', () => r.fired.length === 1);
  assert.deepEqual(r.fired[0], { id: 'greeter', trigger: 'event:node_online', params: { type: 'node_online', nodeId: 'kitchen', at: 5 } });
  r.triggers.disarm('greeter');
  r.bus.emit({ type: 'node_online', nodeId: 'hall', at: 6 });
  r.bus.emit({ type: 'node_offline', nodeId: 'hall', reason: 'gone', at: 7 });
  await until('the watcher', () => r.fired.length === 2);
  assert.equal(r.fired[1]!.id, 'watcher');
  await sleep(50);
  assert.equal(r.fired.length, 2);
});

void test('a failed run is logged, not thrown; stop() disarms every skill and leaves the bus', { timeout: 20_000 }, async (t) => {
  const r = triggersRig(t, () => Promise.reject(new Error('sandbox gone')));
  r.triggers.arm(manifest('fragile', [{ type: 'event', event: 'node_online' }]));
  r.bus.emit({ type: 'node_online', nodeId: 'kitchen', at: 1 });
  await until('the failure logged', () => r.lines.some((l) => l.includes('a triggered skill run failed') && l.includes('sandbox gone')));
  assert.ok(r.bus.owners().includes('skills'));
  r.triggers.stop();
  assert.ok(!r.bus.owners().includes('skills'));
  r.bus.emit({ type: 'node_online', nodeId: 'kitchen', at: 2 });
  await sleep(30);
  assert.equal(r.fired.length, 1);
});

void test('through the service: a bus event runs an active skill in the sandbox with the event as params, recorded as event:<type>', { timeout: 30_000 }, async (t) => {
  const rig = await skillsRig(t);
  const key = newKey();
  rig.trust(key);
  await rig.skills.install({ path: writeSkill(rig.work, { id: 'welcome', triggers: [{ type: 'event', event: 'node_online' }], source: 'function main(p) { return "hello " + p.nodeId; }' }, key) }, 'admin');
  rig.bus.emit({ type: 'node_online', nodeId: 'porch', at: 1 });
  await until('the run recorded', () => rig.skills.detail('welcome').recent_runs.length === 1);
  const run = rig.skills.detail('welcome').recent_runs[0]!;
  assert.equal(run.trigger, 'event:node_online');
  assert.equal(run.result, 'hello porch');
  await rig.skills.setEnabled('welcome', false);
  rig.bus.emit({ type: 'node_online', nodeId: 'porch', at: 2 });
  await sleep(100);
  assert.equal(rig.skills.detail('welcome').recent_runs.length, 1, 'a disabled skill is not triggered');
});
