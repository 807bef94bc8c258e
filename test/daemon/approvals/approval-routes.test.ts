// daemon/approvals/approval-routes.ts through the assembled brain: the list's `limit` and
// `session_id` rules (400 in the envelope, never clamped), the optional body of approve and reject,
// and 404 for ids that were never issued.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalsRig } from './approvals-rig';

const code = (r: { json(): unknown }): string => (r.json() as { error: { code: string } }).error.code;

void test('limit: an integer 1 to 500, default 100; anything else is a 400, never clamped', async (t) => {
  const rig = await approvalsRig(t);
  for (let i = 0; i < 3; i++) await rig.context.permissions.check({ tool: 'reboot', safety: 'privileged', args: { delay: i }, sessionId: i === 0 ? 'a' : 'b', turnId: 't' });
  assert.equal(((await rig.api('GET', '/api/approvals')).json() as { count: number }).count, 3);
  for (const [limit, count] of [['1', 1], ['2', 2], ['500', 3]] as const) {
    const r = await rig.api('GET', `/api/approvals?limit=${limit}`);
    assert.equal(r.statusCode, 200, r.body);
    assert.equal((r.json() as { count: number }).count, count);
  }
  for (const bad of ['0', '501', '-1', '1.5', 'ten', '', '1e400']) {
    const r = await rig.api('GET', `/api/approvals?limit=${encodeURIComponent(bad)}`);
    assert.equal(r.statusCode, 400, `limit=${bad}: ${r.body}`);
    assert.equal(code(r), 'BAD_REQUEST');
  }
  const filtered = await rig.api('GET', '/api/approvals?session_id=a');
  assert.deepEqual((filtered.json() as { approvals: { session_id: string }[] }).approvals.map((a) => a.session_id), ['a']);
  assert.deepEqual((await rig.api('GET', '/api/approvals?session_id=nobody')).json(), { count: 0, approvals: [] });
  assert.equal((await rig.api('GET', '/api/approvals?colour=red')).statusCode, 400, 'an unknown query parameter is refused');
});

void test('approve and reject take no body, an empty body, {} or {session_id}; anything else is a 400; unknown ids 404', async (t) => {
  const rig = await approvalsRig(t);
  const hold = async () => {
    const d = await rig.context.permissions.check({ tool: 'reboot', safety: 'privileged', args: { delay: 0 }, sessionId: 's1', turnId: 't' });
    return d.verdict === 'pending' ? d.requestId : assert.fail('not pending');
  };
  const variants: [unknown, Record<string, string>][] = [[undefined, {}], ['', { 'content-type': 'application/json' }], [{}, {}], [{ session_id: 's1' }, {}]];
  for (const [payload, headers] of variants) {
    const r = await rig.api('POST', `/api/approvals/${await hold()}/reject`, payload, headers);
    assert.equal(r.statusCode, 200, `${JSON.stringify(payload)}: ${r.body}`);
  }
  const id = await hold();
  for (const bad of [{ session_id: 5 }, { session: 's1' }, { session_id: '' }, [1]]) {
    const r = await rig.api('POST', `/api/approvals/${id}/approve`, bad);
    assert.equal(r.statusCode, 400, `${JSON.stringify(bad)}: ${r.body}`);
  }
  assert.equal((await rig.api('POST', '/api/approvals/never-issued/approve')).statusCode, 404);
  assert.equal(code(await rig.api('POST', '/api/approvals/never-issued/reject')), 'NOT_FOUND');
  assert.deepEqual(rig.runs, [], 'no refused request ran the tool');
});
