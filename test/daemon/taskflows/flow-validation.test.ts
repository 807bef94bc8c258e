// daemon/taskflows/flow-validation.ts: what a flow must mean before it is stored. Every branch of the
// step checks answers with a 400 whose details name {step, field}; a bad time zone or schedule names
// its field; parseInstant reads ISO 8601 with a zone (or epoch seconds) and refuses anything that
// would have to be guessed; nextOccurrence follows the schedule in its zone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../../daemon/kernel/errors';
import { defineTool } from '../../../daemon/kernel/tool';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import type { CreateTaskflow } from '../../../protocol/taskflows';
import { nextOccurrence, parseInstant, validateFlow } from '../../../daemon/taskflows/flow-validation';

const tools = new ToolRegistry();
tools.register('test', defineTool({ spec: { name: 'read_temp', description: 'Reads.', parameters: Type.Object({}) }, safety: 'passive', run: async () => ({ summary: 'ok' }) }));
tools.register('test', defineTool({ spec: { name: 'set_level', description: 'Sets.', parameters: Type.Object({ level: Type.Integer({ minimum: 0, maximum: 10 }) }) }, safety: 'active', run: async () => ({ summary: 'ok' }) }));

const flow = (steps: CreateTaskflow['steps'], extra: Partial<CreateTaskflow> = {}): CreateTaskflow => ({ title: 'v', steps, ...extra });
const read: CreateTaskflow['steps'][number] = { type: 'tool', tool: 'read_temp' };

function refusal(input: CreateTaskflow): AppError {
  let caught: unknown;
  try {
    validateFlow(input, tools);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof AppError, `expected a refusal of ${JSON.stringify(input)}`);
  assert.equal(caught.code, 'BAD_REQUEST');
  assert.equal(caught.status, 400);
  return caught;
}

void test('every step problem is a 400 naming the step index and the field', () => {
  const cases: [string, CreateTaskflow['steps'], number, string, RegExp][] = [
    ['no such tool', [read, { type: 'tool', tool: 'teleport' }], 1, 'tool', /^step 1 \(tool\): there is no tool named teleport$/],
    ['args that do not fit', [{ type: 'tool', tool: 'set_level', args: { level: 11 } }], 0, 'args', /invalid arguments for set_level/],
    ['args missing', [{ type: 'tool', tool: 'set_level' }], 0, 'args', /invalid arguments for set_level/],
    ['a reference in args to a later step', [{ type: 'tool', tool: 'set_level', args: { level: '{{steps.0.result}}' } }], 0, 'args', /only earlier steps/],
    ['a prompt with a bad reference', [{ type: 'prompt', text: 'about {{weather.today}}' }], 0, 'text', /references start with/],
    ['a note with a stray {{', [{ type: 'note', text: 'hello {{ there' }], 0, 'text', /not a reference/],
    ['a wait with nothing', [{ type: 'wait' }], 0, 'until', /exactly one of until, seconds or event/],
    ['a wait with two kinds', [{ type: 'wait', until: 0, seconds: 5 }], 0, 'until', /exactly one/],
    ['a wait with all three', [{ type: 'wait', until: 0, seconds: 5, event: { type: 'turn_finished' } }], 0, 'until', /exactly one/],
    ['a wait until a time without an offset', [{ type: 'wait', until: '2026-11-25T07:00:00' }], 0, 'until', /is not a time: use ISO 8601 with an offset/],
    ['a wait until February 30', [{ type: 'wait', until: '2026-02-30T07:00:00Z' }], 0, 'until', /is not a time/],
    ['a wait until a negative epoch', [{ type: 'wait', until: -5 }], 0, 'until', /is not a time/],
    ['a timeout without an event', [{ type: 'wait', seconds: 5, timeout_seconds: 10 }], 0, 'timeout_seconds', /timeout_seconds goes with event/],
    ['a goto past the end', [read, { type: 'branch', if: { ref: '{{steps.0.result}}', op: 'truthy' }, goto: 3 }], 1, 'goto', /goto 3 is past the end of the flow \(2 steps; 2 ends it\)/],
    ['a backward goto without max_loops', [read, { type: 'branch', if: { ref: '{{steps.0.result}}', op: 'truthy' }, goto: 0 }], 1, 'max_loops', /jumps backwards; give max_loops/],
    ['a goto to itself without max_loops', [read, { type: 'branch', if: { ref: '{{steps.0.result}}', op: 'truthy' }, goto: 1 }], 1, 'max_loops', /jumps backwards/],
    ['a ref that is text around a reference', [read, { type: 'branch', if: { ref: 'is {{steps.0.result}}', op: 'truthy' }, goto: 2 }], 1, 'if.ref', /ref is one reference/],
    ['a ref of two references', [read, { type: 'branch', if: { ref: '{{steps.0.result}}{{now}}', op: 'truthy' }, goto: 2 }], 1, 'if.ref', /ref is one reference/],
    ['a ref to the branch itself', [read, { type: 'branch', if: { ref: '{{steps.1.result}}', op: 'truthy' }, goto: 2 }], 1, 'if.ref', /only earlier steps \(0 to 0\)/],
    ['a ref into the prototype', [read, { type: 'branch', if: { ref: '{{context.constructor}}', op: 'exists' }, goto: 2 }], 1, 'if.ref', /"constructor" may not appear/],
    ['a comparison without a value', [read, { type: 'branch', if: { ref: '{{steps.0.result.temp}}', op: 'gt' }, goto: 2 }], 1, 'if.value', /op gt compares with a value/],
  ];
  for (const [what, steps, step, field, message] of cases) {
    const err = refusal(flow(steps));
    assert.deepEqual(err.details, { step, field }, `${what}: ${err.message}`);
    assert.match(err.message, message, what);
    assert.match(err.message, new RegExp(`^step ${step} \\(${steps[step]!.type}\\): `), what);
  }
});

void test('the first bad step is the one named; what is fine passes', () => {
  const err = refusal(flow([read, { type: 'wait' }, { type: 'tool', tool: 'teleport' }]));
  assert.deepEqual(err.details, { step: 1, field: 'until' });
  const fine: CreateTaskflow['steps'] = [
    read,
    { type: 'tool', tool: 'set_level', args: { level: '{{steps.0.result.temp}}' } },
    { type: 'wait', until: '2026-11-25T07:00:00+01:00' },
    { type: 'wait', until: 1_800_000_000 },
    { type: 'wait', seconds: 0 },
    { type: 'wait', event: { type: 'turn_finished', match: { session_id: 'x' } }, timeout_seconds: 60 },
    { type: 'branch', if: { ref: ' {{ steps.0.result.temp }} ', op: 'exists' }, goto: 8 },
    { type: 'branch', if: { ref: '{{context.go}}', op: 'eq', value: null }, goto: 0, max_loops: 3 },
    { type: 'branch', if: { ref: '{{steps.0.status}}', op: 'truthy' }, goto: 9 },
    { type: 'prompt', text: 'It is {{steps.0.result.temp}} at {{now}} in {{flow.title}}' },
    { type: 'note', text: '{{context.city}}' },
  ];
  validateFlow(flow(fine, { schedule: '0 7 * * 1-5', timezone: 'Europe/Berlin' }), tools);
});

void test('a time zone that is not IANA and a schedule croner cannot read or that never occurs name their field', () => {
  const zone = refusal(flow([read], { schedule: '0 7 * * *', timezone: 'Mars/Olympus' }));
  assert.deepEqual(zone.details, { field: 'timezone' });
  assert.match(zone.message, /^timezone: Mars\/Olympus is not an IANA time zone/);
  assert.deepEqual(refusal(flow([read], { timezone: 'Nowhere/Town' })).details, { field: 'timezone' }, 'checked without a schedule too');
  for (const [schedule, message] of [
    ['61 * * * *', /is not a cron expression \(minute hour day month weekday/],
    ['every morning', /is not a cron expression/],
    ['* * * * * * *', /is not a cron expression/],
    ['0 0 30 2 *', /0 0 30 2 \* never occurs again/],
  ] as const) {
    const err = refusal(flow([read], { schedule }));
    assert.deepEqual(err.details, { field: 'schedule' }, schedule);
    assert.match(err.message, message, schedule);
  }
  const stepFirst = refusal(flow([{ type: 'wait' }], { schedule: 'nonsense', timezone: 'Nowhere/Town' }));
  assert.deepEqual(stepFirst.details, { step: 0, field: 'until' }, 'steps are checked before the schedule');
});

void test('parseInstant: ISO 8601 with Z or an offset, or epoch seconds; no offset, impossible dates and times before 1970 are refused', () => {
  const cases: [string | number, number | null][] = [
    ['2026-11-25T07:00:00Z', 1_795_590_000],
    ['2026-11-25T07:00:00+01:00', 1_795_586_400],
    ['2026-11-25T07:00:00+0100', 1_795_586_400],
    ['2026-11-25T07:00:00-05:30', 1_795_609_800],
    ['2026-11-25T07:00Z', 1_795_590_000],
    ['2026-11-25T07:00:00.250Z', 1_795_590_000.25],
    ['2028-02-29T00:00:00Z', 1_835_395_200],
    [0, 0],
    [1_795_590_000.5, 1_795_590_000.5],
    ['2026-11-25T07:00:00', null],
    ['2026-11-25 07:00:00Z', null],
    ['2026-11-25', null],
    ['2026-11-25T07:00:00+1', null],
    ['1795590000', null],
    ['tomorrow', null],
    ['', null],
    ['2026-02-30T07:00:00Z', null],
    ['2027-02-29T07:00:00Z', null],
    ['2026-13-01T07:00:00Z', null],
    ['2026-00-10T07:00:00Z', null],
    ['2026-11-00T07:00:00Z', null],
    ['2026-11-25T24:00:00Z', null],
    ['2026-11-25T07:60:00Z', null],
    ['2026-11-25T07:00:60Z', null],
    ['1969-12-31T23:59:59Z', null],
    [-1, null],
    [Number.NaN, null],
    [Number.POSITIVE_INFINITY, null],
  ];
  for (const [value, seconds] of cases) assert.equal(parseInstant(value), seconds, JSON.stringify(value));
});

void test('property: an instant written in any offset parses back to the same epoch second', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4_102_444_800 }), fc.integer({ min: -12 * 60, max: 14 * 60 }), fc.boolean(), (seconds, offsetMinutes, colon) => {
      const local = new Date((seconds + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
      const abs = Math.abs(offsetMinutes);
      const hh = String(Math.floor(abs / 60)).padStart(2, '0');
      const mm = String(abs % 60).padStart(2, '0');
      const zone = `${offsetMinutes < 0 ? '-' : '+'}${hh}${colon ? ':' : ''}${mm}`;
      const text = `${local}${zone}`;
      // A local time before 1970 (an instant near 0 written with a negative offset) is still after 1970 as an instant.
      assert.equal(parseInstant(text), seconds, text);
      assert.equal(parseInstant(new Date(seconds * 1000).toISOString()), seconds);
    }),
    { numRuns: 500 },
  );
});

void test('property: a string without a zone never parses', () => {
  fc.assert(
    fc.property(fc.date({ min: new Date(0), max: new Date(4_102_444_800_000), noInvalidDate: true }), (date) => {
      assert.equal(parseInstant(date.toISOString().slice(0, 19)), null);
      assert.equal(parseInstant(date.toISOString().slice(0, 10)), null);
    }),
    { numRuns: 200 },
  );
});

void test('nextOccurrence: the next time after `after` in the schedule\'s zone, strictly later; null when there is none', () => {
  const at = (iso: string): number => Date.parse(iso) / 1000;
  assert.equal(nextOccurrence('0 7 * * *', 'Europe/Berlin', at('2026-11-25T00:00:00Z')), at('2026-11-25T06:00:00Z'), 'winter: Berlin is UTC+1');
  assert.equal(nextOccurrence('0 7 * * *', 'Europe/Berlin', at('2026-07-01T00:00:00Z')), at('2026-07-01T05:00:00Z'), 'summer: UTC+2');
  assert.equal(nextOccurrence('0 7 * * *', 'UTC', at('2026-11-25T07:00:00Z')), at('2026-11-26T07:00:00Z'), 'an occurrence at `after` is not the next one');
  assert.equal(nextOccurrence('30 9 * * 1', 'America/New_York', at('2026-11-25T12:00:00Z')), at('2026-11-30T14:30:00Z'), 'the next Monday');
  assert.equal(nextOccurrence('*/15 * * * * *', 'UTC', at('2026-11-25T07:00:01Z')), at('2026-11-25T07:00:15Z'), 'six fields: seconds');
  assert.equal(nextOccurrence('0 0 31 4 *', 'UTC', at('2026-01-01T00:00:00Z')), null, 'April 31 never comes');
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4_000_000_000 }), (after) => {
      const next = nextOccurrence('0 * * * *', 'UTC', after)!;
      assert.ok(next > after && next - after <= 3600 && next % 3600 === 0, `${after} → ${next}`);
    }),
    { numRuns: 200 },
  );
});
