import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BleDecodeError, BleEncodeError, decodeValue, encodeValue } from '../../../node-agent/adapters/ble-codec';
import type { BleValueFormat } from '../../../node-agent/adapters/ble-config';

const INT_RANGES: Array<[BleValueFormat, number, number, number]> = [
  ['uint8', 0, 0xff, 1],
  ['int8', -0x80, 0x7f, 1],
  ['uint16le', 0, 0xffff, 2],
  ['int16le', -0x8000, 0x7fff, 2],
  ['uint32le', 0, 0xffffffff, 4],
  ['int32le', -0x80000000, 0x7fffffff, 4],
];

void test('GATT byte order: little-endian integers and float32, as the characteristic formats are', () => {
  assert.deepEqual(encodeValue('int16le', 21.5, 0.01), Buffer.from([0x66, 0x08]));
  assert.equal(decodeValue('int16le', Buffer.from([0x66, 0x08]), 0.01), 21.5);
  assert.equal(decodeValue('int16le', Buffer.from([0xbb, 0xfe]), 0.01), -3.25);
  assert.equal(decodeValue('uint16le', Buffer.from([0x34, 0x12])), 0x1234);
  assert.equal(decodeValue('uint32le', Buffer.from([1, 0, 0, 0x80])), 0x80000001);
  assert.equal(decodeValue('float32le', Buffer.from([0, 0, 0xac, 0x41])), 21.5);
  assert.equal(decodeValue('float32le', encodeValue('float32le', 21.3)), 21.3, 'float32 noise is trimmed to 7 digits');
  assert.equal(decodeValue('uint8', Buffer.from([7, 99, 99])), 7, 'bytes past the format are ignored');
  assert.deepEqual(encodeValue('uint8', true), Buffer.from([1]));
  assert.deepEqual(encodeValue('uint8', false), Buffer.from([0]));
  assert.equal(decodeValue('hex', Buffer.from([0xde, 0xad])), 'dead');
  assert.deepEqual(encodeValue('hex', 'BEEF'), Buffer.from([0xbe, 0xef]));
  assert.deepEqual(decodeValue('json', Buffer.from('{"on":true}')), { on: true });
  assert.equal(decodeValue('utf8', Buffer.from('héllo')), 'héllo');
});

void test('what cannot be written or read is a clear error', () => {
  assert.throws(() => encodeValue('uint8', 256), (e: unknown) => e instanceof BleEncodeError && e.message === '256 does not fit uint8 (0..255)');
  assert.throws(() => encodeValue('int16le', 400, 0.01), /400 does not fit int16le \(-32768\.\.32767 after dividing by 0\.01\)/);
  assert.throws(() => encodeValue('uint8', -1), BleEncodeError);
  assert.throws(() => encodeValue('int8', 'x'), /int8 needs a number, got string/);
  assert.throws(() => encodeValue('uint16le', Number.NaN), /needs a number/);
  assert.throws(() => encodeValue('float32le', null), /float32le needs a number, got null/);
  assert.throws(() => encodeValue('float32le', 1e39), /does not fit float32le/);
  assert.throws(() => encodeValue('utf8', 5), /utf8 needs a string, got number/);
  assert.throws(() => encodeValue('hex', 'abc'), /hex digit pairs/);
  assert.throws(() => decodeValue('int16le', Buffer.from([1])), (e: unknown) => e instanceof BleDecodeError && e.message === 'int16le needs 2 bytes, got 1');
  assert.throws(() => decodeValue('float32le', Buffer.alloc(0)), /float32le needs 4 bytes, got 0/);
  assert.throws(() => decodeValue('json', Buffer.from('{nope')), (e: unknown) => e instanceof BleDecodeError && /^not JSON/.test(e.message));
});

void test('property: every integer in a format round-trips, and one past either end is refused', () => {
  for (const [format, min, max, bytes] of INT_RANGES) {
    fc.assert(
      fc.property(fc.integer({ min, max }), (n) => {
        const b = encodeValue(format, n);
        assert.equal(b.length, bytes);
        assert.equal(decodeValue(format, b), n);
      }),
      { numRuns: 200 },
    );
    assert.throws(() => encodeValue(format, max + 1), BleEncodeError);
    assert.throws(() => encodeValue(format, min - 1), BleEncodeError);
  }
});

void test('property: a scaled reading survives write then read to the scale\'s precision (centi-degrees)', () => {
  fc.assert(
    fc.property(fc.integer({ min: -32768, max: 32767 }), (centi) => {
      const celsius = centi / 100;
      const back = decodeValue('int16le', encodeValue('int16le', celsius, 0.01), 0.01);
      assert.equal(back, celsius);
    }),
    { numRuns: 500 },
  );
});

void test('property: float32 keeps 6 significant digits; text, hex and JSON round-trip exactly', () => {
  fc.assert(
    fc.property(fc.float({ noNaN: true, noDefaultInfinity: true, min: Math.fround(-1e30), max: Math.fround(1e30) }), (f) => {
      const back = decodeValue('float32le', encodeValue('float32le', f)) as number;
      if (f === 0) assert.ok(back === 0, `${f} → ${back}`);
      else assert.ok(Math.abs(back - f) <= Math.abs(f) * 1e-6, `${f} → ${back}`);
    }),
  );
  fc.assert(fc.property(fc.string(), (s) => assert.equal(decodeValue('utf8', encodeValue('utf8', s)), s)));
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (a) => assert.deepEqual(encodeValue('hex', decodeValue('hex', Buffer.from(a))), Buffer.from(a))));
  fc.assert(fc.property(fc.jsonValue(), (v) => assert.deepEqual(decodeValue('json', encodeValue('json', v)), JSON.parse(JSON.stringify(v)))));
});

void test('property: decoding never throws anything but BleDecodeError, whatever the bytes', () => {
  const formats: BleValueFormat[] = ['uint8', 'int8', 'uint16le', 'int16le', 'uint32le', 'int32le', 'float32le', 'utf8', 'hex', 'json'];
  fc.assert(
    fc.property(fc.constantFrom(...formats), fc.uint8Array({ maxLength: 8 }), (format, bytes) => {
      try {
        decodeValue(format, Buffer.from(bytes));
      } catch (err) {
        assert.ok(err instanceof BleDecodeError, String(err));
      }
    }),
    { numRuns: 500 },
  );
});
