import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionRegistry, type RegisteredSocket } from '../../../daemon/ws/connection-registry';
import type { AppError } from '../../../daemon/kernel/errors';
import type { BrainMessage } from '../../../protocol/session';

function socket(principal: string, id: string, session: string | null = null) {
  const s = {
    principal,
    id,
    session,
    closed: [] as number[],
    sent: [] as BrainMessage[],
    sessionId: () => s.session,
    join: (sid: string) => ((s.session = sid), true),
    handOff: (sid: string) => (s.session === sid ? ((s.session = null), true) : false),
    close: (code: number) => void s.closed.push(code),
    send: (frame: BrainMessage) => void s.sent.push(frame),
  };
  return s satisfies RegisteredSocket;
}

void test('broadcast sends a frame to every socket, with the session each is attached to', () => {
  const reg = new ConnectionRegistry({ get: () => undefined });
  const a = socket('device:a', '1', 'sess-a');
  const b = socket('admin', '2');
  reg.add(a);
  reg.add(b);
  const frame: BrainMessage = { type: 'telemetry', session_id: '', payload: { source: 'thermo', readings: { celsius: 21.5 } } };
  assert.equal(reg.broadcast(frame), 2);
  assert.equal(a.sent[0]?.session_id, 'sess-a');
  assert.equal(b.sent[0]?.session_id, '');
  assert.deepEqual(b.sent[0]?.payload, frame.payload);
});

void test('close closes every socket of one principal only; removed sockets are gone from the list', () => {
  const reg = new ConnectionRegistry({ get: () => undefined });
  const a1 = socket('device:a', '1');
  const a2 = socket('device:a', '2');
  const b = socket('device:b', '3');
  reg.add(a1);
  const removeA2 = reg.add(a2);
  reg.add(b);
  removeA2();
  assert.deepEqual(reg.list().map((c) => c.connection), ['1', '3']);
  assert.equal(reg.close('device:a', 4001, 'revoked'), 1);
  assert.deepEqual([a1.closed, a2.closed, b.closed], [[4001], [], []]);
  assert.deepEqual(reg.list().map((c) => c.principal), ['device:b']);
});

void test('handoff: targets join, sources attached to the session are detached; unknown session 404, target without sockets 409', () => {
  const open = new Map([['ses_1', { ended: false }]]);
  const reg = new ConnectionRegistry({ get: (id: string) => open.get(id) as never });
  const from = socket('device:a', '1', 'ses_1');
  const fromOther = socket('device:a', '2', 'ses_2');
  const to = socket('device:b', '3');
  for (const s of [from, fromOther, to]) reg.add(s);
  assert.deepEqual(reg.handoff('ses_1', 'device:a', 'device:b'), { attached: 1, detached: 1 });
  assert.deepEqual([from.session, fromOther.session, to.session], [null, 'ses_2', 'ses_1']);
  assert.throws(() => reg.handoff('ses_9', 'device:a', 'device:b'), (e: AppError) => e.status === 404);
  assert.throws(() => reg.handoff('ses_1', 'device:a', 'device:c'), (e: AppError) => e.status === 409);
});
