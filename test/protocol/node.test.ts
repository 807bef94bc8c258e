// protocol/node.ts: the helpers every side of /v1/node shares — which hup_version is spoken, an
// action's aliases and defaults, and a frame as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HUP_VERSION, nodeFrame, normalizeAction, supportedVersion } from '../../protocol/node';

void test('supportedVersion: any 1.x, never 2.x or later, never garbage', () => {
  for (const v of ['1', '1.0', '1.4.0', '1.9.12', '1.4.0-beta', HUP_VERSION]) assert.equal(supportedVersion(v), true, v);
  for (const v of ['2.0.0', '0.9', '10.0', '1.x', '', 'v1.4', '1.4.0.1']) assert.equal(supportedVersion(v), false, v);
  fc.assert(fc.property(fc.nat({ max: 99 }), fc.nat({ max: 99 }), fc.nat({ max: 99 }), (major, minor, patch) => supportedVersion(`${major}.${minor}.${patch}`) === (major === 1)));
});

void test('normalizeAction: id and parameters are aliases, defaults from the contract, no name at all is null', () => {
  assert.deepEqual(normalizeAction({ id: 'set_power', parameters: [{ name: 'on', type: 'boolean' }] }), {
    name: 'set_power',
    category: 'actuator',
    permission_tier: 'passive',
    requires_confirmation: false,
    reversible: true,
    description: '',
    params: [{ name: 'on', type: 'boolean' }],
    rate_limit_per_minute: null,
    verify: null,
    safety_notes: null,
    capability: null,
  });
  assert.equal(normalizeAction({ name: 'a', id: 'b' })?.name, 'a', 'name wins over id');
  assert.equal(normalizeAction({ description: 'nameless' }), null);
});

void test('nodeFrame: the envelope with the version, the type, ts in epoch seconds with ms precision, and the payload', () => {
  assert.deepEqual(JSON.parse(nodeFrame('node_ack', { node_id: 'n' }, 1_767_000_000_123)), { hup_version: HUP_VERSION, type: 'node_ack', ts: 1_767_000_000.123, payload: { node_id: 'n' } });
});
