// The delivery schemas: a status report takes a semver version, one of the three states and an error
// of at most 2000 characters, nothing else; an offer of null is a valid answer; the admin's delivery
// view adds `pending` to the states. A fast-check property: any version string the report accepts is
// one the node-agent can use as a folder name (no separators, no dot-only segments).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import { DaemonDelivery, DaemonStatusBody, DELIVERY_STATES, MyDaemon } from '../../protocol/daemons';

void test('status reports: the three states, a semver version, a bounded error, no other fields', () => {
  for (const state of DELIVERY_STATES) assert.ok(Value.Check(DaemonStatusBody, { version: '1.2.3-beta.1', state }), state);
  assert.ok(Value.Check(DaemonStatusBody, { version: '1.0.0', state: 'failed', error: 'x'.repeat(2000) }));
  assert.ok(!Value.Check(DaemonStatusBody, { version: '1.0.0', state: 'failed', error: 'x'.repeat(2001) }));
  assert.ok(!Value.Check(DaemonStatusBody, { version: '1.0.0', state: 'pending' }));
  assert.ok(!Value.Check(DaemonStatusBody, { version: '../1.0.0', state: 'installed' }));
  assert.ok(!Value.Check(DaemonStatusBody, { version: '1.0.0', state: 'installed', node_id: 'other' }));
});

void test('an offer of null is an answer; the admin view has pending', () => {
  assert.ok(Value.Check(MyDaemon, { daemon: null }));
  assert.ok(!Value.Check(MyDaemon, {}));
  assert.ok(Value.Check(MyDaemon, { daemon: { node_id: 'n', version: '1.0.0', entry: 'main.js', display_name: 'N', sha256: 'a'.repeat(64), size: 10 } }));
  assert.ok(Value.Check(DaemonDelivery, { node_id: 'n', version: '1.0.0', state: 'pending', error: null, last_report: null }));
});

void test('property: a version a report accepts is a safe folder name', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (version) => {
      if (!Value.Check(DaemonStatusBody, { version, state: 'installed' })) return;
      assert.ok(!version.includes('/') && !version.includes('\\') && version !== '.' && version !== '..', version);
    }),
  );
  fc.assert(fc.property(fc.tuple(fc.nat(999), fc.nat(999), fc.nat(999)), ([a, b, c]) => Value.Check(DaemonStatusBody, { version: `${a}.${b}.${c}`, state: 'running' })));
});
