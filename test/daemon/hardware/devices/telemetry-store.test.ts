// daemon/hardware/devices/telemetry-store.ts: flattening (nested objects with dots, non-scalars ignored), the
// history's bound and window as properties over random series, merged points keeping the mean and the
// sample count, the per-device reading cap, and a flush writing the last values of every changed
// device in one transaction to a real SQLite file (nothing written when nothing changed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import { SqliteStore } from '../../../../daemon/store/sqlite-store';
import type { Db, Store } from '../../../../daemon/store/store';
import { DEVICE_MIGRATION } from '../../../../daemon/hardware/devices/device-registry';
import { flatten, MAX_READINGS_PER_DEVICE, ReadingHistory, TelemetryStore } from '../../../../daemon/hardware/devices/telemetry-store';

const silent = pino({ level: 'silent' });

void test('flatten: scalars by dotted path; arrays, objects past the depth and non-finite numbers are skipped', () => {
  assert.deepEqual(flatten({ celsius: 21.5, on: true, mode: 'heat', none: null, accel: { x: 1, y: { z: 2 } }, list: [1, 2], nan: Number.NaN }), {
    celsius: 21.5,
    on: true,
    mode: 'heat',
    none: null,
    'accel.x': 1,
    'accel.y.z': 2,
  });
  assert.deepEqual(flatten({ a: { b: { c: { d: { e: { f: 1 } } } } } }), {});
});

void test('property: a history never holds more than history_points points nor any older than the window', () => {
  fc.assert(
    fc.property(fc.integer({ min: 10, max: 60 }), fc.integer({ min: 1000, max: 100_000 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.double({ min: -1e6, max: 1e6, noNaN: true })), { maxLength: 600 }), (cap, windowMs, steps) => {
      const h = new ReadingHistory(cap, windowMs);
      let t = 0;
      let samples = 0;
      for (const [dt, v] of steps) {
        t += dt;
        h.add(t, v);
        samples++;
        assert.ok(h.points.length <= cap, `${h.points.length} > ${cap}`);
        assert.ok(h.points.length >= 1);
        assert.equal(h.points[h.points.length - 1]!.t, t, 'the newest sample is kept as is');
      }
      const total = h.points.reduce((n, p) => n + p.n, 0);
      assert.ok(total <= samples);
      for (let i = 1; i < h.points.length; i++) assert.ok(h.points[i]!.t >= h.points[i - 1]!.t, 'ordered in time');
      if (steps.length > 0) for (const p of h.points) assert.ok(p.t >= t - windowMs - 1e-6, 'every point inside the window');
    }),
  );
});

void test('merging keeps the weighted mean and the sample count; recent points keep full resolution', () => {
  const h = new ReadingHistory(10, 1_000_000);
  for (let i = 0; i < 11; i++) h.add(i * 10, i);
  // 11 points > 10: the older half (5 points) becomes 3 (two pairs and one left alone).
  assert.equal(h.points.length, 9);
  assert.deepEqual(h.points.slice(0, 3), [
    { t: 5, v: 0.5, n: 2 },
    { t: 25, v: 2.5, n: 2 },
    { t: 40, v: 4, n: 1 },
  ]);
  assert.deepEqual(h.points.slice(3).map((p) => p.n), [1, 1, 1, 1, 1, 1]);
  const mean = h.points.reduce((s, p) => s + p.v * p.n, 0) / h.points.reduce((s, p) => s + p.n, 0);
  assert.equal(mean, 5);
});

function storeRig(t: { after(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-telemetry-'));
  const sqlite = new SqliteStore(join(dir, 'brain.db'));
  sqlite.migrate('hardware', [DEVICE_MIGRATION]);
  t.after(() => {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const id of ['lamp', 'probe']) sqlite.run(`INSERT INTO hw_devices (device_id, node_id, manifest, transport) VALUES (?, 'pi-1', '{}', 'mesh')`, [id]);
  let writes = 0;
  const counting: Store = {
    run: (sql, params) => sqlite.run(sql, params),
    get: (sql, params) => sqlite.get(sql, params),
    all: (sql, params) => sqlite.all(sql, params),
    migrate: (component, migrations) => sqlite.migrate(component, migrations),
    close: () => sqlite.close(),
    path: sqlite.path,
    write: <T>(fn: (db: Db) => T) => {
      writes++;
      return sqlite.write(fn);
    },
  };
  return { sqlite, store: counting, writes: () => writes };
}

void test('flush: the last values of every changed device in one transaction; nothing to write, no transaction', async (t) => {
  const { sqlite, store, writes } = storeRig(t);
  const telemetry = new TelemetryStore(store, silent, { history_points: 20, history_window_s: 3600 });
  await telemetry.flush();
  assert.equal(writes(), 0);
  for (let i = 0; i < 100; i++) {
    telemetry.record('lamp', { on: i % 2 === 0 }, 1000 + i);
    telemetry.record('probe', { celsius: 20 + i / 10, label: 'kitchen' }, 1000 + i);
  }
  await telemetry.flush();
  assert.equal(writes(), 1);
  const row = sqlite.get<{ readings: string }>('SELECT readings FROM hw_devices WHERE device_id = ?', ['probe'])!;
  assert.deepEqual(JSON.parse(row.readings), { celsius: { value: 29.9, at: 1099 }, label: { value: 'kitchen', at: 1099 } });
  assert.equal(telemetry.history('probe', 'celsius').length, 20);
  assert.deepEqual(telemetry.history('probe', 'label'), [], 'strings keep only their last value');
  await telemetry.flush();
  assert.equal(writes(), 1, 'nothing changed since');
});

void test('a device keeps at most MAX_READINGS_PER_DEVICE reading names; known names still update', () => {
  const telemetry = new TelemetryStore({} as Store, silent, { history_points: 10, history_window_s: 60 });
  const many = Object.fromEntries(Array.from({ length: MAX_READINGS_PER_DEVICE + 10 }, (_, i) => [`r${i}`, i]));
  const kept = telemetry.record('d', many, 1);
  assert.equal(Object.keys(kept).length, MAX_READINGS_PER_DEVICE);
  assert.deepEqual(telemetry.record('d', { r0: 42, extra: 1 }, 2), { r0: 42 });
  assert.equal(telemetry.last('d').get('r0')?.value, 42);
});
