// sync/hlc.ts: stamps only grow, a received stamp is always overtaken, the skew bound refuses stamps
// from the future without moving the clock, and the text encoding sorts like the stamps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compareHlc, decodeHlc, encodeHlc, HybridClock, MAX_LOGICAL, type Hlc } from '../../sync/hlc';
import { BRAINS } from './sync-fixtures';

const HOUR = 3_600_000;
const T0 = 1_764_000_000_000;
const brain = fc.constantFrom(...BRAINS);
const stamp: fc.Arbitrary<Hlc> = fc.record({ wall: fc.integer({ min: 0, max: 2 ** 48 - 2 }), logical: fc.integer({ min: 0, max: MAX_LOGICAL }), brain });
/** Stamps that often share a wall or a logical counter, so the tie-breaks are exercised. */
const closeStamp: fc.Arbitrary<Hlc> = fc.record({ wall: fc.integer({ min: T0, max: T0 + 3 }), logical: fc.integer({ min: 0, max: 3 }), brain });

type Step = { t: 'now'; advance: number } | { t: 'receive'; advance: number; remote: Hlc };
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ t: fc.constant('now' as const), advance: fc.integer({ min: -2000, max: 2000 }) }),
  fc.record({ t: fc.constant('receive' as const), advance: fc.integer({ min: -2000, max: 2000 }), remote: fc.record({ wall: fc.integer({ min: T0 - HOUR, max: T0 + 2 * HOUR }), logical: fc.integer({ min: 0, max: 50 }), brain }) }),
);

void test('property: stamps only grow, even when the physical clock goes back, and every accepted remote stamp is overtaken', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
      let physical = T0;
      const clock = new HybridClock(BRAINS[0], () => physical, HOUR);
      let last: Hlc = clock.last;
      for (const s of steps) {
        physical += s.advance;
        if (s.t === 'now') {
          const h = clock.now();
          assert.equal(compareHlc(h, last), 1);
          assert.ok(h.wall >= physical, 'a local stamp is never behind the physical clock');
          last = h;
          continue;
        }
        const r = clock.receive(s.remote);
        if (r.ok) {
          assert.equal(compareHlc(r.stamp, last), 1, 'receive never goes backwards');
          assert.equal(compareHlc(r.stamp, s.remote), 1, 'what happens after a stamp is seen is later than it');
          assert.equal(r.stamp.brain, BRAINS[0]);
          last = r.stamp;
        } else {
          assert.ok(s.remote.wall - physical > HOUR);
          assert.deepEqual(clock.last, last, 'a refused stamp leaves the clock as it was');
        }
      }
    }),
  );
});

void test('property: with a physical clock that does not go back, the HLC is never more than the skew bound ahead of it', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
      let physical = T0;
      const clock = new HybridClock(BRAINS[1], () => physical, HOUR);
      for (const s of steps) {
        physical += Math.abs(s.advance);
        if (s.t === 'now') clock.now();
        else clock.receive(s.remote);
        assert.ok(clock.last.wall - physical <= HOUR, `${clock.last.wall - physical} ms ahead`);
      }
    }),
  );
});

void test('receive refuses a stamp more than maxSkewMs ahead of the physical clock, with how far ahead it is; at the bound it is accepted', () => {
  const clock = new HybridClock(BRAINS[0], () => T0, 60_000);
  assert.deepEqual(clock.receive({ wall: T0 + 60_001, logical: 0, brain: BRAINS[1] }), { ok: false, reason: 'clock_skew', aheadMs: 60_001 });
  const ok = clock.receive({ wall: T0 + 60_000, logical: 7, brain: BRAINS[1] });
  assert.deepEqual(ok, { ok: true, stamp: { wall: T0 + 60_000, logical: 8, brain: BRAINS[0] } });
  // The default bound is a day: a brain whose clock is an hour off is accepted.
  assert.equal(new HybridClock(BRAINS[0], () => T0).receive({ wall: T0 + HOUR, logical: 0, brain: BRAINS[1] }).ok, true);
  assert.equal(new HybridClock(BRAINS[0], () => T0).receive({ wall: T0 + 25 * HOUR, logical: 0, brain: BRAINS[1] }).ok, false);
});

void test('a logical counter that would overflow carries into the wall; a restarted clock continues above its last stamp', () => {
  const clock = new HybridClock(BRAINS[0], () => T0, HOUR, { wall: T0, logical: MAX_LOGICAL, brain: BRAINS[0] });
  assert.deepEqual(clock.now(), { wall: T0 + 1, logical: 0, brain: BRAINS[0] });
  const restarted = new HybridClock(BRAINS[0], () => T0 - HOUR, HOUR, { wall: T0 + 5, logical: 2, brain: BRAINS[0] });
  assert.deepEqual(restarted.now(), { wall: T0 + 5, logical: 3, brain: BRAINS[0] });
});

void test('property: the text encoding sorts exactly like compareHlc and decodes to the same stamp', () => {
  fc.assert(
    fc.property(fc.oneof(stamp, closeStamp), fc.oneof(stamp, closeStamp), (a, b) => {
      const [ea, eb] = [encodeHlc(a), encodeHlc(b)];
      assert.equal(Math.sign(ea < eb ? -1 : ea > eb ? 1 : 0), compareHlc(a, b));
      assert.deepEqual(decodeHlc(ea), { ...a });
    }),
  );
});

void test('decodeHlc refuses what is not a stamp', () => {
  const good = encodeHlc({ wall: T0, logical: 1, brain: BRAINS[0] });
  for (const bad of ['', good.toUpperCase(), `0${good}`, good.slice(1), good.replace(BRAINS[0], 'not-a-brain'), `${good} `]) assert.equal(decodeHlc(bad), undefined, bad);
});
