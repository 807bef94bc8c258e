// Approvals across restarts of the built brain (docs/approvals.md "Requests", "Exactly once"): pending
// requests survive SIGTERM and SIGKILL and run once when approved after; an approval whose command was
// running when the brain was killed stays `unknown` and never runs again. Expiry and the 503 need a
// request older than the TTL (1 minute at least) or one whose tool this brain does not have: neither can
// be made by a client of one running brain without waiting, so both are made the way they happen in
// life, across a stop: the stopped brain's store is edited (the request dated two days back, as after a
// long downtime; the tool renamed to one no capability registers, as after an upgrade that retired it)
// and the brain started again on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, watch } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../../daemon/store/sqlite-store';
import type { ApprovalList } from '../../protocol/approvals';
import { approvalsBrain, approve, envelope, plainRequest, reject, session, type ApprovalsBrain } from './approvals-rig';

const listed = async (rig: ApprovalsBrain): Promise<ApprovalList> => (await plainRequest(rig.brain, 'GET', '/api/approvals')).body as ApprovalList;

const gauge = async (rig: ApprovalsBrain): Promise<number> => Number(/^svc_supervisor_approval_queue (\S+)$/m.exec(await (await fetch(`${rig.brain.url}/metrics`)).text())?.[1]);

/** Runs `fn` on the stopped brain's store (brain.db in its home). */
async function editStore(rig: ApprovalsBrain, sql: string, params: (string | number)[]): Promise<void> {
  const store = new SqliteStore(join(rig.home, 'brain.db'));
  try {
    await store.write((db) => assert.equal(db.run(sql, params).changes, 1, sql));
  } finally {
    store.close();
  }
}

/** Resolves once `file` in `dir` exists and holds a line (fs.watch events, then a read). */
function lineIn(dir: string, file: string): Promise<string> {
  return new Promise((resolve) => {
    const read = (): string | null => {
      try {
        const text = readFileSync(join(dir, file), 'utf8');
        return text.includes('\n') ? text.trim() : null;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    };
    const watcher = watch(dir, () => {
      const text = read();
      if (text !== null) {
        watcher.close();
        resolve(text);
      }
    });
    const now = read();
    if (now !== null) {
      watcher.close();
      resolve(now);
    }
  });
}

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  void test(`${signal}: pending requests are listed again after a restart, approvable, and run once`, { timeout: 90_000 }, async (t) => {
    const rig = await approvalsBrain(t);
    const s = await session(t, rig.brain);
    const { held } = await s.hold('kept', 2);
    const before = await listed(rig);
    assert.equal(before.count, 2);
    assert.equal(await gauge(rig), 2);

    await rig.restart(signal);
    assert.deepEqual(await listed(rig), before, 'the same requests, fields and order');
    assert.equal(await gauge(rig), 2, 'the gauge is set at start from the store');
    const [first, second] = held.map((h) => h.payload.request_id);
    const r = await approve(rig.brain, first!);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((r.body as { summary: string }).summary, '/bin/sh exited with 0');
    assert.equal(rig.ran('kept'), 1);
    assert.equal((await approve(rig.brain, first!)).status, 404);
    assert.equal((await reject(rig.brain, second!)).status, 200);
    assert.equal(rig.ran('kept'), 1, 'the rejected one never ran');
    assert.deepEqual(await listed(rig), { count: 0, approvals: [] });
    assert.equal(await gauge(rig), 0);
    assert.equal(rig.continuations.length, 0, 'the session lived in the brain before the restart: no continuation');
  });
}

void test('SIGKILL while an approved command runs: the request stays unknown, is not listed, and never runs again', { timeout: 90_000 }, async (t) => {
  const rig = await approvalsBrain(t);
  const s = await session(t, rig.brain);
  const { held: [held] } = await s.hold('slowkill');
  assert.ok(held);
  const answer = approve(rig.brain, held.payload.request_id).then(
    (r) => r,
    (err: unknown) => err,
  );
  const pid = Number(await lineIn(rig.work, 'slowkill.pid'));
  t.after(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  });
  assert.equal(rig.ran('slowkill'), 1, 'it started');
  await rig.restart('SIGKILL');
  assert.ok((await answer) instanceof Error, 'the approver lost its connection');
  assert.deepEqual(await listed(rig), { count: 0, approvals: [] });
  for (const resolve of [approve, reject]) {
    const r = await resolve(rig.brain, held.payload.request_id);
    assert.equal(r.status, 404, JSON.stringify(r.body));
  }
  assert.equal(rig.ran('slowkill'), 1, 'never run a second time');
  assert.equal(await rig.brain.stop(), 0);
  const store = new SqliteStore(join(rig.home, 'brain.db'));
  try {
    assert.equal(store.get<{ status: string }>('SELECT status FROM approval_requests WHERE request_id = ?', [held.payload.request_id])?.status, 'unknown');
  } finally {
    store.close();
  }
});

void test('after a long downtime a request past the TTL is expired (404, not listed); a request whose tool is gone is a 503 and stays pending', { timeout: 90_000 }, async (t) => {
  const rig = await approvalsBrain(t);
  const s = await session(t, rig.brain);
  const { held } = await s.hold('old', 4);
  const [expired, retired, fresh, both] = held.map((h) => h.payload.request_id) as [string, string, string, string];
  assert.equal(await gauge(rig), 4);

  assert.equal(await rig.brain.stop(), 0);
  const twoDays = 2 * 24 * 3600;
  await editStore(rig, 'UPDATE approval_requests SET created_at = created_at - ? WHERE request_id = ?', [twoDays, expired]);
  await editStore(rig, "UPDATE approval_requests SET tool_name = 'retired_tool' WHERE request_id = ?", [retired]);
  await editStore(rig, "UPDATE approval_requests SET tool_name = 'retired_tool', created_at = created_at - ? WHERE request_id = ?", [twoDays, both]);
  await rig.restart('SIGKILL'); // already stopped: starts it again

  assert.equal(await gauge(rig), 2, 'the expired requests are not counted');
  // Resolved before any listing: the resolution itself finds them expired. Expired is a 404 even
  // when the tool is gone too (not a 503 saying the request stays pending).
  for (const id of [both, expired]) {
    for (const resolve of [approve, reject]) {
      const r = await resolve(rig.brain, id);
      assert.equal(r.status, 404, JSON.stringify(r.body));
      assert.equal(envelope(r).code, 'NOT_FOUND');
    }
  }
  assert.deepEqual((await listed(rig)).approvals.map((a) => [a.request_id, a.tool_name]), [[retired, 'retired_tool'], [fresh, 'run_command']]);

  const unavailable = await approve(rig.brain, retired);
  assert.equal(unavailable.status, 503, JSON.stringify(unavailable.body));
  assert.deepEqual(envelope(unavailable).details, { tool: 'retired_tool' });
  assert.equal(envelope(unavailable).code, 'UNAVAILABLE');
  assert.ok((await listed(rig)).approvals.some((a) => a.request_id === retired), 'still pending after the 503');
  assert.equal((await reject(rig.brain, retired)).status, 200, 'a request for a missing tool can still be rejected');

  assert.equal((await approve(rig.brain, fresh)).status, 200);
  assert.equal(rig.ran('old'), 1, 'only the fresh one ran');
  assert.equal(await gauge(rig), 0);
});
