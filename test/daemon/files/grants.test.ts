// The grant store on a real SQLite file: durable across reopening, realpath at grant time, expiry by
// the clock, revoke by the granted or any resolving path, and the duration parser (property test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { GRANT_MIGRATIONS, GrantStore, MAX_GRANT_MS, parseDuration } from '../../../daemon/files/grants';
import { AppError } from '../../../daemon/kernel/errors';
import { SqliteStore } from '../../../daemon/store/sqlite-store';

function fixture(t: { after(fn: () => void): void }) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-grants-')));
  const clock = { ms: Date.UTC(2026, 0, 1), now: () => clock.ms };
  const open = () => {
    const store = new SqliteStore(join(dir, 'brain.db'));
    store.migrate('files', GRANT_MIGRATIONS);
    return store;
  };
  const store = open();
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  mkdirSync(join(dir, 'docs'));
  return { dir, clock, store, open, grants: new GrantStore(store, clock) };
}

void test('a grant is stored as its realpath, survives reopening the store, and is revoked by either path', async (t) => {
  const f = fixture(t);
  symlinkSync(join(f.dir, 'docs'), join(f.dir, 'alias'));
  const g = await f.grants.add(join(f.dir, 'alias'), 'write', undefined);
  assert.deepEqual(g, { path: join(f.dir, 'docs'), mode: 'write', expires_at: null, created_at: '2026-01-01T00:00:00.000Z' });
  const reopened = f.open();
  assert.deepEqual(new GrantStore(reopened, f.clock).list(), [g]);
  reopened.close();
  assert.deepEqual(await f.grants.revoke(join(f.dir, 'alias')), g);
  assert.deepEqual(f.grants.list(), []);
  await assert.rejects(f.grants.revoke(join(f.dir, 'docs')), (e: AppError) => e.code === 'NOT_FOUND');
});

void test('a grant with a duration stops matching when it expires; granting again replaces it', async (t) => {
  const f = fixture(t);
  const docs = join(f.dir, 'docs');
  await f.grants.add(docs, 'read', 2 * 3_600_000);
  assert.equal(f.grants.active().length, 1);
  assert.equal(f.grants.list()[0]!.expires_at, '2026-01-01T02:00:00.000Z');
  f.clock.ms += 2 * 3_600_000;
  assert.deepEqual(f.grants.active(), [], 'expired at its expiry instant');
  await f.grants.add(docs, 'write', undefined);
  assert.deepEqual(f.grants.active(), [{ path: docs, mode: 'write', expiresAt: null }]);
});

void test('bad grant paths are refused with a 400 saying why', async (t) => {
  const f = fixture(t);
  writeFileSync(join(f.dir, 'file.txt'), 'x');
  const cases: Array<[string, RegExp]> = [
    ['docs', /absolute path/],
    [join(f.dir, 'missing'), /does not exist/],
    [join(f.dir, 'file.txt'), /not a directory/],
  ];
  for (const [path, why] of cases) await assert.rejects(f.grants.add(path, 'read', undefined), (e: AppError) => e.status === 400 && why.test(e.message), path);
  assert.deepEqual(f.grants.list(), []);
});

void test('parseDuration sums unit groups and refuses everything else', () => {
  assert.equal(parseDuration('2h'), 7_200_000);
  assert.equal(parseDuration('1d12h'), 129_600_000);
  assert.equal(parseDuration('90m'), 5_400_000);
  for (const bad of ['', '2', 'h', '2x', '-1h', '1.5h', '0h', '367d', '2h ago']) assert.throws(() => parseDuration(bad), (e: AppError) => e.code === 'BAD_REQUEST', bad);
  const group = fc.tuple(fc.integer({ min: 0, max: 99 }), fc.constantFrom('s', 'm', 'h', 'd', 'w'));
  const ms: Record<string, number> = { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8 };
  fc.assert(
    fc.property(fc.array(group, { minLength: 1, maxLength: 4 }), (groups) => {
      const text = groups.map(([n, u]) => `${n}${u}`).join('');
      const total = groups.reduce((sum, [n, u]) => sum + n * ms[u]!, 0);
      if (total > 0 && total <= MAX_GRANT_MS) assert.equal(parseDuration(text), total);
      else assert.throws(() => parseDuration(text), AppError);
    }),
  );
});
