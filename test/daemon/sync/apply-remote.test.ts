// daemon/sync/apply-remote.ts: a peer's batch is checked whole before anything applies (malformed,
// forged and future ops refuse it), applying again changes nothing, and records whose tier write failed
// after the op log committed are written by the next flush.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readCursor } from '../../../daemon/sync/op-log';
import { BRAINS } from '../../sync/sync-fixtures';
import { closeAll, opsOf as ops, pendingOf as pending, syncBrain, syncedTables } from './sync-brain';

const [A, B] = [BRAINS[0], BRAINS[1]];

test('a batch holding a malformed, forged or future op is refused whole and applies nothing', async () => {
  const a = syncBrain(A);
  const b = syncBrain(B);
  await a.mem.memory.remember('Anna likes green tea from Graz');
  await a.mem.memory.remember('The bike lock code is 7391');
  const { outboundOps } = await import('../../../daemon/sync/outbound');
  const good: Record<string, unknown>[] = [];
  for await (const batch of outboundOps(a.mem.store, {}, 1 << 20)) good.push(...(batch as Record<string, unknown>[]));
  assert.equal(good.length, 2);
  const second = good[1]!;
  const future = `${(Date.now() + 3 * 86_400_000).toString(16).padStart(12, '0')}-000000-${A}`;
  const cases: [string, unknown][] = [
    ['malformed', { ...second, body: { text: '' } }],
    ['forged', { ...second, op_id: `${A}:7` }],
    ['forged', { ...second, hlc: String(second.hlc).replace(A, B) }],
    ['clock_skew', { ...second, hlc: future }],
  ];
  for (const [code, bad] of cases) {
    await assert.rejects(b.applier.apply([good[0], bad], A), (err: Error & { code?: string }) => err.code === code);
    assert.deepEqual(readCursor(b.mem.store), {}, `${code}: nothing of the batch applied`);
    assert.equal(syncedTables(b).notes?.length, 0);
  }
  assert.deepEqual(await b.applier.apply(good, A), { [A]: 2 }, 'the same ops, well formed, apply later');
  assert.deepEqual(await b.applier.apply(good, A), { [A]: 2 }, 'and applying them again changes nothing');
  assert.equal(ops(b).length, 2);
  await closeAll(a, b);
});

test('records applied to the op log but not yet to the tier tables are written by the next flush', async () => {
  const a = syncBrain(A);
  const b = syncBrain(B);
  await a.mem.memory.remember('The cabin key is under the blue pot');
  const { RemoteApplier } = await import('../../../daemon/sync/apply-remote');
  // The tier write fails once, as if the brain died between the op log's commit and the memory's.
  let failures = 1;
  const flaky = new RemoteApplier(b.mem.store, b.log, {
    applyRemote: (change) => (failures-- > 0 ? Promise.reject(new Error('the disk went away')) : b.mem.memory.applyRemote(change)),
  });
  const batches: unknown[][] = [];
  for await (const batch of a.data.ops({}, 1 << 20)) batches.push(batch);
  await assert.rejects(flaky.apply(batches[0]!, A), /disk went away/);
  assert.deepEqual(readCursor(b.mem.store), { [A]: 1 }, 'the op is applied');
  assert.equal(syncedTables(b).notes?.length, 0, 'but its note is not written yet');
  assert.equal(pending(b), 1);
  await b.applier.flush();
  assert.deepEqual(syncedTables(a), syncedTables(b));
  assert.equal(pending(b), 0);
  await closeAll(a, b);
});
