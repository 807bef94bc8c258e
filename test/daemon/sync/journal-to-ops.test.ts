// daemon/sync/journal-to-ops.ts: a memory change's ops are appended in the change's own transaction —
// a write that fails leaves no op and takes no seq.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BRAINS } from '../../sync/sync-fixtures';
import { opsOf as ops, syncBrain } from './sync-brain';

const A = BRAINS[0];

test("a write's op is in the log exactly when the write committed", async () => {
  const a = syncBrain(A);
  await a.mem.memory.remember('Anna likes green tea from Graz');
  a.failNext();
  await assert.rejects(a.mem.memory.remember('The bike lock code is 7391'));
  assert.equal(a.mem.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM memory_notes WHERE text LIKE '%bike%'")!.n, 0);
  assert.deepEqual(ops(a).map((o) => o.op_id), [`${A}:1`], 'the failed write left no op');
  await a.mem.memory.remember('The dentist is Dr Kowalski on Tuesday');
  assert.deepEqual(ops(a).map((o) => o.op_id), [`${A}:1`, `${A}:2`], 'and took no seq: the log has no gap');
  await a.mem.close();
});
