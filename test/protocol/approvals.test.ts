// protocol/approvals.ts: the list query's limit bounds and the resolution body, checked by TypeBox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { APPROVAL_LIST_LIMIT, ApprovalListQuery, ApprovalResolution, ApprovalResolveBody } from '../../protocol/approvals';

void test('limit is an integer from 1 to 500 with default 100', () => {
  assert.deepEqual(APPROVAL_LIST_LIMIT, { min: 1, max: 500, default: 100 });
  assert.equal(Value.Check(ApprovalListQuery, { limit: 1 }), true);
  assert.equal(Value.Check(ApprovalListQuery, { limit: 500 }), true);
  for (const limit of [0, 501, 1.5]) assert.equal(Value.Check(ApprovalListQuery, { limit }), false, String(limit));
  assert.equal((Value.Default(ApprovalListQuery, {}) as { limit: number }).limit, 100);
});

void test('the resolve body holds an optional session id only; a resolution has summary and result only when given', () => {
  assert.equal(Value.Check(ApprovalResolveBody, {}), true);
  assert.equal(Value.Check(ApprovalResolveBody, { session_id: 's' }), true);
  assert.equal(Value.Check(ApprovalResolveBody, { session_id: 's\u0000' }), false);
  assert.equal(Value.Check(ApprovalResolveBody, { other: 1 }), false);
  assert.equal(Value.Check(ApprovalResolution, { success: true, status: 'rejected', request_id: 'r', session_id: 's', tool_name: 't' }), true);
});
