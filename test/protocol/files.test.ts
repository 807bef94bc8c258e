// The grant shapes of /api/grants (docs/files.md): what a request may carry and what it may not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { Grant, GrantMode, GrantRequest, GrantRevoke } from '../../protocol/files';

void test('a grant request is a path, an optional write flag and an optional duration, nothing else', () => {
  assert.ok(Value.Check(GrantRequest, { path: '/home/pi/docs' }));
  assert.ok(Value.Check(GrantRequest, { path: '/home/pi/docs', write: true, for: '2h' }));
  assert.ok(!Value.Check(GrantRequest, { path: '' }), 'empty path');
  assert.ok(!Value.Check(GrantRequest, { path: '/a\u0000b' }), 'NUL in a path');
  assert.ok(!Value.Check(GrantRequest, { path: '/a', mode: 'write' }), 'unknown field');
  assert.ok(!Value.Check(GrantRequest, { path: '/a', write: 'yes' }), 'write is a boolean');
  assert.ok(Value.Check(GrantRevoke, { path: '/a' }));
  assert.ok(!Value.Check(GrantRevoke, {}));
  assert.deepEqual(Object.keys(Grant.properties), ['path', 'mode', 'expires_at', 'created_at']);
  assert.ok(Value.Check(GrantMode, 'read') && Value.Check(GrantMode, 'write') && !Value.Check(GrantMode, 'admin'));
});
