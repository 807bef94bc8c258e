// decodeFrame: every way an inbound /v1/node frame can be wrong is a coded error (1002 envelope and
// version, 1003 payload, 1006 size), aliases resolve, unknown types pass as such, and no input throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeFrame, type DecodedFrame } from '../../../../daemon/hardware/links/node-frames';
import { MAX_NODE_FRAME_BYTES, NODE_INBOUND, TYPE_ALIASES } from '../../../../protocol/node';

const frame = (type: string, payload: unknown, extra: Record<string, unknown> = {}): string => JSON.stringify({ hup_version: '1.4.0', type, ts: 1700000000.5, payload, ...extra });
const register = { node_id: 'pi-1', node_type: 'rpi', capabilities: ['temperature'] };

function errorOf(d: DecodedFrame): { code: number; name: string; message: string; ref: string | null } {
  assert.equal(d.kind, 'error', JSON.stringify(d));
  if (d.kind !== 'error') throw new Error('unreachable');
  return d.error;
}

void test('a valid node_register decodes to a typed message with its envelope ts', () => {
  const d = decodeFrame(frame('node_register', register), false);
  assert.equal(d.kind, 'message');
  if (d.kind !== 'message' || d.message.type !== 'node_register') throw new Error('not a register');
  assert.equal(d.message.payload.node_id, 'pi-1');
  assert.equal(d.ts, 1700000000.5);
  assert.equal(d.alias, null);
});

void test('unknown payload fields and extra envelope keys are let through (minor versions are additive)', () => {
  const d = decodeFrame(frame('node_heartbeat', { battery_pct: 50, future_field: { x: 1 } }, { node_id: 'pi-1', seq: 4, msg_id: 'm' }), false);
  assert.equal(d.kind, 'message');
});

void test('binary frames, bad JSON, non-envelopes and 2.x versions are 1002 bad_schema', () => {
  assert.equal(errorOf(decodeFrame(Buffer.from(frame('node_heartbeat', {})), true)).code, 1002);
  assert.equal(errorOf(decodeFrame('{"hup_version":', false)).code, 1002);
  assert.equal(errorOf(decodeFrame('[1,2]', false)).code, 1002);
  assert.equal(errorOf(decodeFrame(JSON.stringify({ type: 'node_heartbeat', payload: {} }), false)).code, 1002);
  const v2 = errorOf(decodeFrame(JSON.stringify({ hup_version: '2.0.0', type: 'node_heartbeat', ts: 1, payload: {} }), false));
  assert.equal(v2.code, 1002);
  assert.match(v2.message, /2\.0\.0/);
  for (const ok of ['1', '1.0', '1.9.3', '1.4.0-beta']) assert.equal(decodeFrame(JSON.stringify({ hup_version: ok, type: 'node_heartbeat', ts: 1, payload: {} }), false).kind, 'message', ok);
});

void test('a payload that breaks its schema is 1003 bad_payload with the type (or the action) as ref', () => {
  const bad = errorOf(decodeFrame(frame('node_register', { node_id: 'has space', node_type: 'rpi', capabilities: [] }), false));
  assert.equal(bad.code, 1003);
  assert.equal(bad.name, 'bad_payload');
  assert.equal(bad.ref, 'node_register');
  assert.match(bad.message, /node_id/);
  const response = errorOf(decodeFrame(frame('hup_action_response', { action_id: 'a-7', success: 'yes' }), false));
  assert.equal(response.ref, 'a-7');
  assert.equal(errorOf(decodeFrame(frame('node_heartbeat', { battery_pct: 101 }), false)).code, 1003);
});

void test('deprecated aliases resolve to their type and say which alias was used', () => {
  const d = decodeFrame(frame('register', register), false);
  assert.ok(d.kind === 'message' && d.message.type === 'node_register' && d.alias === 'register');
  const r = decodeFrame(frame('execute_result', { request_id: 'x', success: true }), false);
  assert.ok(r.kind === 'message' && r.message.type === 'hup_action_response' && r.alias === 'execute_result');
  // Brain-to-node messages under an alias are not something a node sends the brain: an unknown type.
  const c = decodeFrame(frame('command', { action_id: 'a', name: 'n', params: {} }), false);
  assert.deepEqual(c, { kind: 'unknown', type: 'hup_action_request', alias: 'command' });
});

void test('unknown types, including prototype names, are unknown, not errors', () => {
  for (const type of ['genui_event', '__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    const d = decodeFrame(frame(type, {}), false);
    assert.equal(d.kind, 'unknown', type);
  }
});

void test('a frame over 1 MiB is 1006 (ws closes first on the wire; the decoder does not rely on it)', () => {
  const big = frame('node_heartbeat', { pad: 'x'.repeat(MAX_NODE_FRAME_BYTES) });
  assert.equal(errorOf(decodeFrame(big, false)).code, 1006);
  assert.equal(errorOf(decodeFrame([Buffer.from(big.slice(0, 10)), Buffer.from(big.slice(10))], false)).code, 1006);
});

const CODES = new Set([1002, 1003, 1006]);
const KNOWN = new Set([...Object.keys(NODE_INBOUND), ...Object.keys(TYPE_ALIASES)]);

function wellFormed(d: DecodedFrame): void {
  if (d.kind === 'error') {
    assert.ok(CODES.has(d.error.code), `code ${d.error.code}`);
    assert.equal(typeof d.error.message, 'string');
  } else if (d.kind === 'message') assert.ok(Object.hasOwn(NODE_INBOUND, d.message.type));
  else assert.equal(typeof d.type, 'string');
}

void test('property: any string, any bytes, never throws; a typed result or a coded error', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.json()), fc.boolean(), (input, binary) => wellFormed(decodeFrame(input, binary))),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 512 }), fc.boolean(), (bytes, binary) => wellFormed(decodeFrame(Buffer.from(bytes), binary))),
    { numRuns: 1000 },
  );
});

void test('property: envelopes of known types with arbitrary payloads decode or refuse with 1002/1003', () => {
  const types = fc.constantFrom(...KNOWN, 'genui_push', 'x');
  const version = fc.oneof(fc.constant('1.4.0'), fc.constant('2.0'), fc.string({ maxLength: 8 }));
  fc.assert(
    fc.property(types, version, fc.anything(), fc.oneof(fc.double(), fc.anything()), (type, hup_version, payload, ts) => {
      const text = JSON.stringify({ hup_version, type, ts, payload });
      wellFormed(decodeFrame(text, false));
    }),
    { numRuns: 3000 },
  );
});
