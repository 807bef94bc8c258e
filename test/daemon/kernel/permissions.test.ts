import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PermissionPlane, StaticPermissionHook, type PermissionRequest } from '../../../daemon/kernel/permissions';

const call = (safety: PermissionRequest['safety']): PermissionRequest => ({ tool: 'reboot_host', safety, args: {}, sessionId: 's', turnId: 't' });

void test('the static hook allows passive and active tools and refuses privileged and dangerous ones with a reason', () => {
  const hook = new StaticPermissionHook();
  assert.deepEqual(hook.check(call('passive')), { verdict: 'allow' });
  assert.deepEqual(hook.check(call('active')), { verdict: 'allow' });
  for (const level of ['privileged', 'dangerous'] as const) {
    const d = hook.check(call(level));
    assert.equal(d.verdict, 'deny');
    assert.match(d.verdict === 'deny' ? d.reason : '', new RegExp(`reboot_host is a ${level} tool`));
  }
});

void test('the plane delegates to the static hook until one owner installs its own; a second owner is refused', async () => {
  const plane = new PermissionPlane();
  assert.equal((await plane.check(call('privileged'))).verdict, 'deny');
  plane.use('approvals', { check: () => ({ verdict: 'pending', requestId: 'apr_1', reason: 'waiting for you' }) });
  assert.deepEqual(await plane.check(call('privileged')), { verdict: 'pending', requestId: 'apr_1', reason: 'waiting for you' });
  plane.use('approvals', { check: () => ({ verdict: 'allow' }) });
  assert.throws(() => plane.use('skills', { check: () => ({ verdict: 'allow' }) }), /already owned by approvals/);
});
