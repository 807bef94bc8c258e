// daemon/sync/outbound.ts: the ops a peer lacks, in batches bounded by bytes, each origin in seq order
// and origins merged oldest stamp first; nothing the peer's cursor already covers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { outboundOps } from '../../../daemon/sync/outbound';
import { BRAINS } from '../../sync/sync-fixtures';
import { closeAll, exchange, syncBrain } from './sync-brain';

const [A, B] = [BRAINS[0], BRAINS[1]];

test('only what the cursor lacks, oldest stamp first across origins, in batches no bigger than asked (one op always fits)', async () => {
  const a = syncBrain(A);
  const b = syncBrain(B);
  for (const text of ['Anna likes green tea from Graz', 'The bike lock code is 7391', 'The dentist is Dr Kowalski on Tuesday']) await a.mem.memory.remember(text);
  await exchange(a, b);
  await b.mem.memory.remember('The boiler service is booked for March');
  await a.mem.memory.remember('The cabin key is under the blue pot');
  const all: { op_id: string; hlc: string }[] = [];
  const sizes: number[] = [];
  for await (const batch of outboundOps(a.mem.store, {}, 1)) {
    sizes.push(batch.length);
    all.push(...(batch as { op_id: string; hlc: string }[]));
  }
  assert.ok(sizes.every((n) => n === 1), `a 1-byte budget still sends one op per batch: ${sizes.join(',')}`);
  assert.deepEqual(all.map((o) => o.op_id), [`${A}:1`, `${A}:2`, `${A}:3`, `${A}:4`], 'a has only its own ops: b has not sent it anything');
  const forB: string[] = [];
  for await (const batch of outboundOps(a.mem.store, { [A]: 3 }, 1 << 20)) forB.push(...(batch as { op_id: string }[]).map((o) => o.op_id));
  assert.deepEqual(forB, [`${A}:4`], 'what the cursor covers is not sent again');
  await exchange(b, a);
  const merged: { op_id: string; hlc: string }[] = [];
  for await (const batch of outboundOps(a.mem.store, {}, 1 << 20)) merged.push(...(batch as { op_id: string; hlc: string }[]));
  assert.deepEqual(merged.map((o) => o.hlc), [...merged.map((o) => o.hlc)].sort(), 'oldest stamp first across origins');
  assert.ok(merged.some((o) => o.op_id === `${B}:1`));
  await closeAll(a, b);
});
