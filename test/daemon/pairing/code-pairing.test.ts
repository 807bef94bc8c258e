import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../daemon/kernel/errors';
import { CODE_TTL_MS, CodePairing, MAX_PENDING, RetryLater } from '../../../daemon/pairing/code-pairing';
import { pairingRig } from './pairing-rig';

const status = (fn: () => unknown): number => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err.status;
    throw err;
  }
  return 200;
};

void test('announce, status, claim: the node key is given to the announcing node only, until the code expires', async (t) => {
  const rig = pairingRig(t);
  const codes = new CodePairing(rig.pairing, rig.clock);
  assert.equal(codes.announce({ code: '000 001', node_id: 'n1' }).status, 'pending');
  assert.equal(status(() => codes.announce({ code: '000001', node_id: 'n2' })), 409, 'a code another node announced');
  assert.equal(codes.status({ code: '000001', node_id: 'n1' }).status, 'pending');
  const claimed = await codes.claim({ code: '000001' }, 'me');
  assert.equal(claimed.node_id, 'n1');
  const polled = codes.status({ code: '000001', node_id: 'n1' });
  assert.equal(polled.status, 'paired');
  assert.deepEqual(rig.credentials.verify({ token: polled.token! }), { kind: 'node', id: 'n1' });
  assert.equal(status(() => codes.status({ code: '000001', node_id: 'n2' })), 404);
  await assert.rejects(codes.claim({ code: '000001' }, 'me'), (e: AppError) => e.status === 409);
  rig.clock.t += CODE_TTL_MS;
  assert.equal(codes.status({ code: '000001', node_id: 'n1' }).status, 'expired');
  assert.equal(status(() => codes.announce({ code: '12345', node_id: 'n' })), 400);
});

void test('5 wrong claims per caller in 15 minutes, then 429 with the wait; another caller is unaffected; expired codes count as wrong', async (t) => {
  const rig = pairingRig(t);
  const codes = new CodePairing(rig.pairing, rig.clock);
  codes.announce({ code: '123456', node_id: 'n' });
  rig.clock.t += CODE_TTL_MS;
  for (let i = 0; i < 5; i++) await assert.rejects(codes.claim({ code: '123456' }, 'guesser'), (e: AppError) => e.status === 404);
  await assert.rejects(codes.claim({ code: '123456' }, 'guesser'), (e: unknown) => e instanceof RetryLater && e.status === 429 && e.retryAfterSeconds === 900);
  await assert.rejects(codes.claim({ code: '123456' }, 'other'), (e: AppError) => e.status === 404);
  rig.clock.t += 15 * 60_000;
  await assert.rejects(codes.claim({ code: '123456' }, 'guesser'), (e: AppError) => e.status === 404);
});

void test('at most MAX_PENDING codes wait at once (announcing needs no credential); expired ones make room', (t) => {
  const rig = pairingRig(t);
  const codes = new CodePairing(rig.pairing, rig.clock);
  for (let i = 0; i < MAX_PENDING; i++) codes.announce({ code: String(i).padStart(6, '0'), node_id: `n${i}` });
  assert.equal(status(() => codes.announce({ code: '999999', node_id: 'late' })), 429);
  rig.clock.t += CODE_TTL_MS;
  assert.equal(codes.announce({ code: '999999', node_id: 'late' }).status, 'pending');
});
