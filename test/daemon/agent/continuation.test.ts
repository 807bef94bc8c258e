import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalNote, continues, heldOutcome } from '../../../daemon/agent/continuation';

const base = { type: 'approval_resolved', requestId: 'apr_9', sessionId: 's', turnId: 't', tool: 'reboot', args: { delay: 3 }, at: 0 } as const;

void test('approvalNote says how every kind of ending went', () => {
  assert.equal(approvalNote({ ...base, status: 'expired' }), '[approval] reboot (approval request apr_9) expired without an answer; it did not run.');
  assert.equal(approvalNote({ ...base, status: 'rejected' }), '[approval] You rejected reboot (approval request apr_9); it did not run.');
  assert.equal(approvalNote({ ...base, status: 'approved', result: { status: 'ok', summary: 'done' } }), '[approval] You approved reboot (approval request apr_9); it ran: done');
  assert.equal(approvalNote({ ...base, status: 'approved', result: { status: 'error', summary: 'no power' } }), '[approval] You approved reboot (approval request apr_9); it failed: no power');
});

void test('approved and rejected calls are continued, expired ones are not', () => {
  assert.equal(continues({ ...base, status: 'approved' }), true);
  assert.equal(continues({ ...base, status: 'rejected' }), true);
  assert.equal(continues({ ...base, status: 'expired' }), false);
});

void test('heldOutcome is the call the model asked for (id = request id) with what became of it', () => {
  const call = { id: 'apr_9', name: 'reboot', arguments: { delay: 3 } };
  assert.deepEqual(heldOutcome({ ...base, status: 'approved', result: { status: 'ok', summary: 'rebooting', data: { at: 5 } } }), { call, status: 'ok', summary: 'rebooting', data: { at: 5 } });
  assert.deepEqual(heldOutcome({ ...base, status: 'approved', result: { status: 'error', summary: 'failed' } }), { call, status: 'error', summary: 'failed' });
  const rejected = heldOutcome({ ...base, status: 'rejected' });
  assert.equal(rejected.status, 'denied');
  assert.match(rejected.summary, /^the user rejected this call \(approval request apr_9\); it did not run/);
  assert.match(heldOutcome({ ...base, status: 'expired' }).summary, /^nobody approved this call in time/);
});
