// The sync section of settings.json: on by default with no static peers; a peer needs a ws(s) URL and a
// brain id, and unknown keys are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { SyncSettings } from '../../../daemon/sync/sync-settings';

void test('defaults: enabled, no static peers', () => {
  assert.deepEqual(Value.Default(SyncSettings, {}), { enabled: true, peers: [] });
});

void test('a peer is a ws(s) URL and a brain id; anything else is refused', () => {
  assert.ok(Value.Check(SyncSettings, { enabled: true, peers: [{ url: 'ws://127.0.0.1:7420/sync', brain_id: 'b-1' }] }));
  assert.ok(!Value.Check(SyncSettings, { enabled: true, peers: [{ url: 'http://127.0.0.1:7420/sync', brain_id: 'b-1' }] }), 'not a WebSocket URL');
  assert.ok(!Value.Check(SyncSettings, { enabled: true, peers: [{ url: 'ws://127.0.0.1:7420/sync' }] }), 'no brain id');
  assert.ok(!Value.Check(SyncSettings, { enabled: true, peers: [], dial: true }), 'unknown key');
});
