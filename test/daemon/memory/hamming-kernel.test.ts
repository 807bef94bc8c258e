// daemon/memory/hamming-kernel.ts against a plain JavaScript popcount: distances for code lengths that
// are and are not multiples of 64 bits, across the memory growth past the first 1024 rows (the codes
// move up when the distance area grows), and rows moved over others (what delete() does).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HammingKernel } from '../../../daemon/memory/hamming-kernel';

const popcount = (x: number): number => {
  let n = 0;
  for (let v = x >>> 0; v !== 0; v >>>= 1) n += v & 1;
  return n;
};
const distance = (a: Uint32Array, b: Uint32Array): number => a.reduce((sum, w, j) => sum + popcount((w ^ b[j]!) >>> 0), 0);

function randomCode(bits: number, next: () => number): Uint32Array {
  const code = new Uint32Array(Math.ceil(bits / 32));
  for (let j = 0; j < code.length; j++) code[j] = next() >>> 0;
  if (bits % 32 !== 0) code[code.length - 1]! &= (1 << (bits % 32)) - 1;
  return code;
}

void test('distances equal a JavaScript popcount, through growth past 1024 rows and after moves', () => {
  fc.assert(
    fc.property(fc.constantFrom(3, 32, 64, 65, 384, 768), fc.integer({ min: 1, max: 2600 }), fc.integer(), (bits, rows, seed) => {
      let s = seed | 0;
      const next = (): number => (s = (Math.imul(s, 1103515245) + 12345) | 0);
      const kernel = new HammingKernel(Math.ceil(bits / 64));
      const codes: Uint32Array[] = [];
      for (let i = 0; i < rows; i++) {
        const code = randomCode(bits, next);
        kernel.reserve(i + 1, i);
        kernel.set(i, code);
        codes.push(code);
      }
      const query = randomCode(bits, next);
      const got = kernel.distancesTo(query, rows);
      for (let i = 0; i < rows; i++) assert.equal(got[i], distance(query, codes[i]!), `row ${i} of ${rows}, ${bits} bits`);
      kernel.move(rows - 1, 0);
      assert.equal(kernel.distancesTo(query, 1)[0], distance(query, codes[rows - 1]!));
    }),
    { numRuns: 25 },
  );
});
