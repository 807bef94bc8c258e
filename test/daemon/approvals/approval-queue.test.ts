// daemon/approvals/approval-queue.ts on a real SQLite file: TTL, exactly-once claims under concurrent
// approvals, session mismatch, and pending requests surviving a reopen of the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { APPROVAL_MIGRATIONS, ApprovalQueue, type HeldCall } from '../../../daemon/approvals/approval-queue';
import { AppError } from '../../../daemon/kernel/errors';

const call = (over: Partial<HeldCall> = {}): HeldCall => ({ sessionId: 's1', turnId: 't1', tool: 'shell', args: { cmd: 'ls', n: 2 }, safety: 'privileged', ...over });

function fixture(t: { after(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-approvals-'));
  const clock = { ms: 1_700_000_000_123, now() { return this.ms; } };
  const open = (ttlMinutes = 60) => {
    const store = new SqliteStore(join(dir, 'brain.db'));
    store.migrate('approvals', APPROVAL_MIGRATIONS);
    return { store, queue: new ApprovalQueue(store, clock, ttlMinutes) };
  };
  const first = open();
  let current = first.store;
  t.after(() => {
    current.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { clock, ...first, reopen: (ttl?: number) => { current.close(); const next = open(ttl); current = next.store; return next; } };
}

const status = (err: unknown): number => (err instanceof AppError ? err.status : -1);

void test('a held call is listed with the spec 2.6 fields, created_at in epoch seconds with fraction', async (t) => {
  const { queue } = fixture(t);
  const held = await queue.add(call());
  assert.deepEqual(queue.list({ limit: 10 }), [{ request_id: held.request_id, session_id: 's1', turn_id: 't1', tool_name: 'shell', args: { cmd: 'ls', n: 2 }, safety_level: 'privileged', created_at: 1_700_000_000.123, status: 'pending' }]);
  assert.equal(queue.pendingCount(), 1);
  await queue.add(call({ sessionId: 's2' }));
  assert.deepEqual(queue.list({ limit: 10, sessionId: 's2' }).map((r) => r.session_id), ['s2']);
  assert.equal(queue.list({ limit: 1 }).length, 1);
});

void test('past the TTL a request leaves the list and the count, cannot be claimed, and is marked expired', async (t) => {
  const { queue, clock } = fixture(t);
  const held = await queue.add(call());
  clock.ms += 60 * 60_000 - 1;
  assert.equal(queue.pendingCount(), 1, 'one millisecond before the TTL it is still pending');
  clock.ms += 2;
  assert.equal(queue.pendingCount(), 0);
  assert.deepEqual(queue.list({ limit: 10 }), []);
  await assert.rejects(queue.claim(held.request_id, 'unknown', undefined), (err) => status(err) === 404);
  assert.equal(queue.get(held.request_id)?.status, 'expired');
  const other = await queue.add(call());
  clock.ms += 61 * 60_000;
  assert.deepEqual(await queue.expire(), [other.request_id]);
  assert.equal(queue.get(other.request_id)?.status, 'expired');
});

void test('exactly once: of many concurrent claims of one request, one wins and the rest get 404', async (t) => {
  const { queue } = fixture(t);
  await fc.assert(
    fc.asyncProperty(fc.array(fc.constantFrom<'unknown' | 'rejected'>('unknown', 'rejected'), { minLength: 2, maxLength: 8 }), async (kinds) => {
      const held = await queue.add(call());
      const outcomes = await Promise.allSettled(kinds.map((kind) => queue.claim(held.request_id, kind, undefined)));
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      assert.equal(won.length, 1);
      assert.ok(outcomes.every((o) => o.status === 'fulfilled' || status(o.reason) === 404));
      const winner = kinds[outcomes.findIndex((o) => o.status === 'fulfilled')];
      assert.equal(queue.get(held.request_id)?.status, winner);
    }),
    { numRuns: 20 },
  );
  assert.equal(queue.pendingCount(), 0);
});

void test('another session is a 409 with both ids and leaves the request pending; an unknown id is a 404', async (t) => {
  const { queue } = fixture(t);
  const held = await queue.add(call());
  await assert.rejects(queue.claim(held.request_id, 'rejected', 'other'), (err) => {
    assert.ok(err instanceof AppError);
    assert.equal(err.status, 409);
    assert.deepEqual(err.details, { reason: 'session_mismatch', request_session_id: 's1', given_session_id: 'other' });
    return true;
  });
  assert.equal(queue.get(held.request_id)?.status, 'pending');
  await assert.rejects(queue.claim('nope', 'rejected', undefined), (err) => status(err) === 404);
  assert.equal((await queue.claim(held.request_id, 'rejected', 's1')).status, 'rejected');
});

void test('a reopened store keeps pending requests; a claim whose run never finished stays unknown and cannot be claimed again', async (t) => {
  const f = fixture(t);
  const pending = await f.queue.add(call());
  const running = await f.queue.add(call({ tool: 'other' }));
  await f.queue.claim(running.request_id, 'unknown', undefined);
  const { queue } = f.reopen();
  assert.deepEqual(queue.list({ limit: 10 }).map((r) => r.request_id), [pending.request_id]);
  assert.equal(queue.get(running.request_id)?.status, 'unknown');
  await assert.rejects(queue.claim(running.request_id, 'unknown', undefined), (err) => status(err) === 404);
  await queue.finish(pending.request_id);
  assert.equal(queue.get(pending.request_id)?.status, 'pending', 'finish only completes a claimed approval');
});
