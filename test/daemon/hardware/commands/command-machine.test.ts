// daemon/hardware/commands/command-machine.ts: the transition table (final states have no way out; the lifecycle
// of protocol/hardware.ts is allowed), and as a property: any sequence of requested transitions, each
// applied only when the table allows it, leaves a history whose every step is legal and whose times
// never go back — also when the clock steps backwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { COMMAND_STATUSES, TERMINAL_COMMAND_STATUSES, type CommandStatus } from '../../../../protocol/hardware';
import { advance, canCommand, COMMAND_TRANSITIONS, CommandTransitionError, isFinal, type CommandStep } from '../../../../daemon/hardware/commands/command-machine';

void test('final statuses are exactly the terminal ones of the protocol and lead nowhere', () => {
  for (const s of COMMAND_STATUSES) assert.equal(isFinal(s), TERMINAL_COMMAND_STATUSES.includes(s), s);
  for (const s of TERMINAL_COMMAND_STATUSES) for (const to of COMMAND_STATUSES) assert.equal(canCommand(s, to), false, `${s} → ${to}`);
});

void test('the documented paths are allowed', () => {
  const paths: CommandStatus[][] = [
    ['queued', 'sent', 'succeeded'],
    ['queued', 'sent', 'sent', 'succeeded'],
    ['queued', 'sent', 'timeout'],
    ['queued', 'sent', 'failed'],
    ['queued', 'pending_confirmation', 'queued', 'sent', 'succeeded'],
    ['queued', 'pending_confirmation', 'denied'],
    ['queued', 'pending_confirmation', 'cancelled'],
    ['queued', 'denied'],
    ['queued', 'failed'],
    ['queued', 'sent', 'cancelled'],
  ];
  for (const path of paths) {
    let history: CommandStep[] = [];
    path.forEach((s, i) => (history = advance('c', history, s, i, null)));
    assert.deepEqual(history.map((h) => h.status), path);
  }
});

void test('a refused transition throws and names both statuses', () => {
  const history = advance('c1', advance('c1', [], 'queued', 1, null), 'denied', 2, 'rate limited');
  assert.throws(() => advance('c1', history, 'sent', 3, null), (err: unknown) => err instanceof CommandTransitionError && err.from === 'denied' && err.to === 'sent' && /c1/.test(err.message));
  assert.throws(() => advance('c2', advance('c2', [], 'queued', 1, null), 'succeeded', 2, null), CommandTransitionError);
});

void test('property: any event sequence keeps the history legal and ordered in time', () => {
  const status = fc.constantFrom(...COMMAND_STATUSES);
  fc.assert(
    fc.property(fc.array(fc.tuple(status, fc.integer({ min: -1000, max: 1_000_000 })), { maxLength: 40 }), (events) => {
      let history: CommandStep[] = advance('p', [], 'queued', 500, null);
      let refused = 0;
      for (const [to, at] of events) {
        const before = history;
        try {
          history = advance('p', history, to, at, null);
          assert.ok(canCommand(before[before.length - 1]!.status, to));
        } catch (err) {
          assert.ok(err instanceof CommandTransitionError);
          assert.equal(history, before, 'a refused transition changes nothing');
          refused++;
        }
      }
      for (let i = 1; i < history.length; i++) {
        assert.ok(COMMAND_TRANSITIONS[history[i - 1]!.status].includes(history[i]!.status), 'every step is in the table');
        assert.ok(history[i]!.at >= history[i - 1]!.at, 'times never go back');
      }
      assert.equal(history.length - 1 + refused, events.length);
    }),
  );
});
