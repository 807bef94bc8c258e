// daemon/audit/audit-log.ts on a real SQLite file: entries come back newest first with increasing ids,
// their time in epoch seconds and their details as given (null when none); `limit` bounds the answer and
// `tag` keeps one kind; the log survives reopening the file (its own migration, component `audit`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { AuditLog } from '../../../daemon/audit/audit-log';

function open(t: { after(fn: () => unknown): void }): { dir: string; stores: SqliteStore[] } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-audit-'));
  const stores: SqliteStore[] = [];
  t.after(() => {
    for (const s of stores) s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, stores };
}

void test('newest first, limit, tag filter, details round trip, time in seconds; kept across a reopen', async (t) => {
  const { dir, stores } = open(t);
  const first = new SqliteStore(join(dir, 'brain.db'));
  stores.push(first);
  let now = 1_700_000_000_000;
  const log = new AuditLog(first, () => now);
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) {
    now += 1500;
    ids.push(await log.record({ tag: i % 2 === 0 ? 'unsigned_install' : 'policy_change', actor: i === 4 ? 'device:phone' : 'admin', subject: `skill:s${i}@1.0.0`, ...(i === 0 ? {} : { details: { n: i, path: '/tmp/x' } }) }));
  }
  assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
  assert.equal(new Set(ids).size, 5);
  const all = log.list({ limit: 100 });
  assert.deepEqual(all.map((e) => e.subject), ['skill:s4@1.0.0', 'skill:s3@1.0.0', 'skill:s2@1.0.0', 'skill:s1@1.0.0', 'skill:s0@1.0.0']);
  assert.deepEqual(all[0], { id: ids[4], at: (1_700_000_000_000 + 5 * 1500) / 1000, tag: 'unsigned_install', actor: 'device:phone', subject: 'skill:s4@1.0.0', details: { n: 4, path: '/tmp/x' } });
  assert.equal(all[4]!.details, null);
  assert.deepEqual(log.list({ limit: 2 }).map((e) => e.id), [ids[4], ids[3]]);
  assert.deepEqual(log.list({ limit: 100, tag: 'policy_change' }).map((e) => e.id), [ids[3], ids[1]]);
  assert.deepEqual(log.list({ limit: 1, tag: 'unsigned_install' }).map((e) => e.id), [ids[4]]);
  assert.deepEqual(log.list({ limit: 10, tag: 'nothing_here' }), []);
  first.close();
  stores.pop();
  const second = new SqliteStore(join(dir, 'brain.db'));
  stores.push(second);
  assert.deepEqual(new AuditLog(second, () => now).list({ limit: 100 }), all);
});
