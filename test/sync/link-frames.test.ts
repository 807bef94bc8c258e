// Frame decoding (and the hello of an upgrade request's header): any input (text, JSON of any shape, frames with a field broken, binary, oversized)
// gives a typed frame or a coded refusal and never throws; every valid frame survives a round trip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_SYNC_FRAME_BYTES, SYNC_FRAMES, SYNC_REFUSAL_CODES, type SyncFrame } from '../../protocol/sync-link';
import { decodeHelloHeader, decodeSyncFrame, encodeHelloHeader, encodeSyncFrame } from '../../sync/link-frames';

const b64 = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((u) => Buffer.from(u).toString('base64url'));
const brainId = fc.uuid({ version: 4 }).map((u) => u.toLowerCase());
const cursor = fc.dictionary(brainId, fc.nat(), { maxKeys: 5 });
const frames: fc.Arbitrary<SyncFrame> = fc.oneof(
  fc.record({ type: fc.constant('hello' as const), v: fc.nat(5), from: brainId, to: brainId, key: b64(32), nonce: b64(32) }),
  fc.record({ type: fc.constant('challenge' as const), v: fc.nat(5), from: brainId, key: b64(32), nonce: b64(32), sig: b64(64) }),
  fc.record({ type: fc.constant('proof' as const), sig: b64(64) }),
  fc.constant({ type: 'welcome' as const }),
  fc.record({ type: fc.constant('cursor' as const), cursor, window: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ type: fc.constant('batch' as const), seq: fc.integer({ min: 1 }), cursor, ops: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }) }),
  fc.record({ type: fc.constant('ack' as const), seq: fc.integer({ min: 1 }), cursor }),
  fc.record({ type: fc.constant('ping' as const), n: fc.nat() }),
  fc.record({ type: fc.constant('pong' as const), n: fc.nat() }),
  fc.record({ type: fc.constant('bye' as const) }),
  fc.record({ type: fc.constant('refuse' as const), code: fc.constantFrom(...SYNC_REFUSAL_CODES), message: fc.string({ maxLength: 100 }) }),
);

const wellTyped = (text: string | Buffer, isBinary = false): void => {
  const d = decodeSyncFrame(text, isBinary);
  if (d.ok) assert.ok(Object.hasOwn(SYNC_FRAMES, d.frame.type));
  else assert.ok(SYNC_REFUSAL_CODES.includes(d.refusal.code) && d.refusal.message.length > 0);
};

void test('property: every valid frame decodes to itself', () => {
  fc.assert(
    fc.property(frames, (frame) => {
      const d = decodeSyncFrame(encodeSyncFrame(frame));
      assert.ok(d.ok, JSON.stringify(d));
      assert.deepEqual(d.frame, JSON.parse(JSON.stringify(frame)));
    }),
  );
});

void test('property: any text, JSON value or byte string is a frame or a coded refusal, never a throw', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v)), fc.uint8Array().map((u) => Buffer.from(u))), fc.boolean(), (input, isBinary) => {
      wellTyped(input, isBinary);
    }),
  );
});

void test('property: a valid frame with one field replaced or added by anything is a frame or a coded refusal', () => {
  fc.assert(
    fc.property(frames, fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), (frame, key, value) => {
      const field = Object.keys(frame)[key.length % Object.keys(frame).length] ?? key;
      wellTyped(JSON.stringify({ ...frame, [field]: value }));
      const extra = decodeSyncFrame(JSON.stringify({ ...frame, [`x${key}`]: value }));
      assert.equal(extra.ok, false, 'unknown fields are refused: frames are exact');
    }),
  );
});

void test('refusals: binary, not JSON, not an object, an unknown type, bad fields, oversized, a deeply nested value', () => {
  const code = (input: string | Buffer, isBinary = false): string => {
    const d = decodeSyncFrame(input, isBinary);
    return d.ok ? 'ok' : d.refusal.code;
  };
  assert.equal(code(Buffer.from('{"type":"welcome"}'), true), 'malformed');
  assert.equal(code('{"type":"welcome"'), 'malformed');
  assert.equal(code('[1,2]'), 'malformed');
  assert.equal(code('null'), 'malformed');
  assert.equal(code('{"type":"gossip"}'), 'malformed');
  assert.equal(code('{"type":{"x":1}}'), 'malformed');
  assert.equal(code('{"type":"ack","seq":0,"cursor":{}}'), 'malformed');
  assert.equal(code('{"type":"cursor","cursor":{"not-a-brain":1},"window":1}'), 'malformed');
  assert.equal(code(`{"type":"batch","seq":1,"cursor":{},"ops":["${'x'.repeat(MAX_SYNC_FRAME_BYTES)}"]}`), 'too_large');
  assert.equal(code(`{"type":${'['.repeat(100_000)}${']'.repeat(100_000)}}`), 'malformed');
  assert.equal(code('{"type":"welcome"}'), 'ok');
});

void test('property: the hello header round-trips a hello and refuses anything else with a code, never a throw', () => {
  fc.assert(
    fc.property(frames, fc.string({ maxLength: 2000 }), (frame, junk) => {
      const header = Buffer.from(encodeSyncFrame(frame)).toString('base64url');
      const d = decodeHelloHeader(frame.type === 'hello' ? encodeHelloHeader(frame) : header);
      if (frame.type === 'hello') assert.deepEqual(d.ok && JSON.parse(d.text), JSON.parse(JSON.stringify(frame)));
      else assert.equal(d.ok ? 'ok' : d.refusal.code, header.length > 1024 ? 'too_large' : 'unexpected');
      const j = decodeHelloHeader(junk);
      assert.ok(j.ok || SYNC_REFUSAL_CODES.includes(j.refusal.code));
    }),
  );
});
