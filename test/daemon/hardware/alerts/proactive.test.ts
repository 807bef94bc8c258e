// Proactive alerts (daemon/hardware/alerts/proactive.ts): thresholds raise once and clear, a dismissal adapts
// the threshold (same level quiet, worse level alerts) or suppresses battery/offline alerts, what was
// learned survives a restart, and the store is a real SQLite file.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import fc from 'fast-check';
import { SqliteStore } from '../../../../daemon/store/sqlite-store';
import { PROACTIVE_COMPONENT, PROACTIVE_MIGRATIONS, ProactiveAlerts } from '../../../../daemon/hardware/alerts/proactive';
import type { BrainEvent } from '../../../../daemon/kernel/events';
import type { BrainMessage } from '../../../../protocol/session';
import type { HardwareSettings } from '../../../../daemon/hardware/hardware-settings';

const SETTINGS: HardwareSettings['alerts'] = {
  thresholds: [{ reading: 'celsius', above: 30, below: 10 }, { reading: 'humidity', device: 'bath', above: 80 }],
  battery_low_pct: 15,
  node_offline_after_s: 60,
};

function rig(t: TestContext, dir = mkdtempSync(join(tmpdir(), 'svc-proactive-')), keep = false) {
  const store = new SqliteStore(join(dir, 'brain.db'));
  store.migrate(PROACTIVE_COMPONENT, PROACTIVE_MIGRATIONS);
  const clock = { t: 1_767_000_000_000, now: () => clock.t };
  const events: BrainEvent[] = [];
  const frames: BrainMessage[] = [];
  const alerts = new ProactiveAlerts({
    store,
    clock,
    bus: { emit: (e) => void events.push(e) },
    connections: { broadcast: (f) => (frames.push(f), 1) },
    logger: pino({ level: 'silent' }),
    settings: SETTINGS,
  });
  alerts.start();
  t.after(() => {
    alerts.stop();
    store.close();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  });
  const raised = () => events.flatMap((e) => (e.type === 'proactive_alert' ? [e.alert] : []));
  return { dir, store, clock, alerts, events, frames, raised };
}

void test('a threshold crossing raises one alert (bus notification of category proactive + a session frame) until the value comes back', async (t) => {
  const r = rig(t);
  r.alerts.readings('thermo', 'node-1', { celsius: 25 });
  assert.equal(r.raised().length, 0);
  r.alerts.readings('thermo', 'node-1', { celsius: 31 });
  r.alerts.readings('thermo', 'node-1', { celsius: 33 });
  assert.equal(r.raised().length, 1, 'one alert while the condition holds');
  const [alert] = r.raised();
  assert.equal(alert?.kind, 'threshold');
  assert.equal(alert?.category, 'proactive');
  assert.equal(alert?.value, 31);
  assert.equal(alert?.threshold, 30);
  const event = r.events.find((e) => e.type === 'proactive_alert');
  assert.equal(event?.type === 'proactive_alert' && event.priority, 'low');
  assert.equal(r.frames[0]?.type, 'proactive_alert');
  r.alerts.readings('thermo', 'node-1', { celsius: 22 });
  await r.store.write(() => undefined);
  assert.equal(r.alerts.list('cleared').length, 1, 'cleared when the value came back');
  r.alerts.readings('thermo', 'node-1', { celsius: 8 });
  assert.equal(r.raised().at(-1)?.message, 'thermo: celsius is 8, below 10');
  r.alerts.readings('other', 'node-1', { humidity: 95 });
  assert.equal(r.raised().length, 2, 'a rule for one device ignores the others');
  r.alerts.readings('bath', 'node-2', { humidity: 95 });
  assert.equal(r.raised().length, 3);
});

void test('dismissing a threshold alert adapts that device\'s threshold: the same level stays quiet, a clearly worse one alerts; 404 and 409', async (t) => {
  const r = rig(t);
  r.alerts.readings('thermo', 'node-1', { celsius: 32 });
  const [alert] = r.raised();
  assert.ok(alert);
  const result = await r.alerts.dismiss(alert.alert_id);
  assert.equal(result.alert.status, 'dismissed');
  assert.equal(result.learned.dismissals, 1);
  assert.ok(result.learned.threshold !== null && result.learned.threshold > 32, `threshold moved past the dismissed value: ${result.learned.threshold}`);
  r.alerts.readings('thermo', 'node-1', { celsius: 32.5 });
  assert.equal(r.raised().length, 1, 'the dismissed level does not alert again');
  r.alerts.readings('other', 'node-1', { celsius: 32.5 });
  assert.equal(r.raised().length, 2, 'another device keeps the configured threshold');
  r.alerts.readings('thermo', 'node-1', { celsius: 40 });
  assert.equal(r.raised().length, 3, 'a clearly worse value still alerts');
  await assert.rejects(r.alerts.dismiss(alert.alert_id), (err: { code?: string }) => err.code === 'CONFLICT');
  await assert.rejects(r.alerts.dismiss('alert_nope'), (err: { code?: string }) => err.code === 'NOT_FOUND');
});

void test('battery low alerts once with hysteresis; a dismissal suppresses it for a day, doubling; the learning survives a restart', async (t) => {
  const r = rig(t, undefined, true);
  r.alerts.battery('node-1', 14);
  r.alerts.battery('node-1', 13);
  r.alerts.battery('node-1', 16);
  assert.equal(r.raised().length, 1, 'not again just above the limit');
  r.alerts.battery('node-1', 25);
  r.alerts.battery('node-1', 12);
  assert.equal(r.raised().length, 2, 'again after recovering past the hysteresis');
  const second = r.raised()[1]!;
  const learned = await r.alerts.dismiss(second.alert_id);
  assert.equal(learned.learned.suppressed_until, new Date(r.clock.t + 86_400_000).toISOString());
  r.alerts.battery('node-1', 30);
  r.alerts.battery('node-1', 10);
  assert.equal(r.raised().length, 2, 'suppressed');
  const restarted = rig(t, r.dir);
  restarted.clock.t = r.clock.t;
  restarted.alerts.battery('node-1', 10);
  assert.equal(restarted.raised().length, 0, 'still suppressed after a restart');
  restarted.clock.t += 86_400_001;
  restarted.alerts.battery('node-1', 9);
  assert.equal(restarted.raised().length, 1, 'alerts again once the suppression ran out');
  const again = await restarted.alerts.dismiss(restarted.raised()[0]!.alert_id);
  assert.equal(again.learned.dismissals, 2);
  assert.equal(again.learned.suppressed_until, new Date(restarted.clock.t + 2 * 86_400_000).toISOString(), 'doubled');
});

void test('a node offline longer than node_offline_after_s raises node_offline; back in time raises nothing; reconnect clears it', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const r = rig(t);
  r.alerts.nodeDown('node-1');
  t.mock.timers.tick(59_000);
  r.alerts.nodeUp('node-1');
  t.mock.timers.tick(10_000);
  assert.equal(r.raised().length, 0);
  r.alerts.nodeDown('node-1');
  t.mock.timers.tick(60_000);
  assert.equal(r.raised().length, 1);
  assert.equal(r.raised()[0]?.kind, 'node_offline');
  r.alerts.nodeUp('node-1');
  r.alerts.nodeDown('node-1');
  t.mock.timers.tick(60_000);
  assert.equal(r.raised().length, 2, 'cleared by the reconnect, so a new outage alerts again');
});

void test('property: whatever readings and dismissals come, at most one alert per device, reading and direction is active', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.oneof(fc.record({ device: fc.constantFrom('a', 'b'), celsius: fc.double({ min: -20, max: 60, noNaN: true }) }), fc.constant('dismiss' as const)), { maxLength: 40 }), async (steps) => {
      const r = rig(t);
      for (const step of steps) {
        if (step === 'dismiss') {
          const active = r.alerts.list('active');
          if (active[0]) await r.alerts.dismiss(active[0].alert_id);
        } else {
          r.alerts.readings(step.device, 'n', { celsius: step.celsius });
        }
      }
      await r.store.write(() => undefined);
      const active = r.alerts.list('active');
      const subjects = active.map((a) => `${a.device_id}|${a.reading}|${(a.threshold ?? 0) > 20 ? 'above' : 'below'}`);
      assert.equal(new Set(subjects).size, subjects.length, subjects.join(', '));
    }),
    { numRuns: 25 },
  );
});
