// Reading the brain's frames: known messages checked against protocol/node.ts, unknown types let
// through, every way a frame can be wrong reported (never thrown), with the action_id kept when a
// request can still be answered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { nodeFrame } from '../../protocol/node';
import { decodeBrainFrame } from '../../phone-bridge/frames';

void test('known, unknown and invalid frames', () => {
  const request = decodeBrainFrame(nodeFrame('hup_action_request', { action_id: 'a1', name: 'set_power', params: { device_id: 'bulb', on: true }, extra: 1 }));
  assert.deepEqual(request, { kind: 'message', message: { type: 'hup_action_request', payload: { action_id: 'a1', name: 'set_power', params: { device_id: 'bulb', on: true }, extra: 1 } } });
  assert.deepEqual(decodeBrainFrame(nodeFrame('genui_push', { x: 1 })), { kind: 'unknown', type: 'genui_push' });
  assert.deepEqual(decodeBrainFrame('{'), { kind: 'invalid', problem: 'not JSON', actionId: null });
  assert.match((decodeBrainFrame('{"type":"node_ack"}') as { problem: string }).problem, /^not an envelope/);
  assert.deepEqual(decodeBrainFrame(JSON.stringify({ hup_version: '2.0.0', type: 'node_ack', ts: 1, payload: {} })), { kind: 'invalid', problem: 'hup_version 2.0.0 is not 1.x', actionId: null });
  const bad = decodeBrainFrame(nodeFrame('hup_action_request', { action_id: 'a2', params: {} }));
  assert.equal(bad.kind === 'invalid' && bad.actionId, 'a2');
  const worse = decodeBrainFrame(nodeFrame('hup_action_request', { action_id: 'x'.repeat(65), params: {} }));
  assert.equal(worse.kind === 'invalid' && worse.actionId, null, 'an action_id the brain could not have sent is not answered');
});

void test('property: no input throws', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.json(), fc.record({ hup_version: fc.constantFrom('1.4.0', '1', 'x'), type: fc.constantFrom('node_ack', 'hup_action_request', 'error', 'chat_response', 'node_bye', 'z'), ts: fc.double(), payload: fc.object() }).map((o) => JSON.stringify(o))), (text) => {
      assert.ok(['message', 'unknown', 'invalid'].includes(decodeBrainFrame(text).kind));
    }),
  );
});
