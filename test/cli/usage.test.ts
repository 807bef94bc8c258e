// "Did you mean" hints for mistyped commands (exit 2; test/e2e/cli.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { closestCommand, EXIT_USAGE } from '../../cli/usage';

const COMMANDS = ['serve', 'start', 'stop', 'status', 'doctor', 'setup', 'devices', 'skills', 'identity', 'memory', 'models'];

test('common typos map to the intended command', () => {
  const cases: [string, string][] = [
    ['stauts', 'status'],
    ['statsu', 'status'],
    ['staus', 'status'],
    ['strat', 'start'],
    ['sevre', 'serve'],
    ['serv', 'serve'],
    ['sotp', 'stop'],
    ['doctr', 'doctor'],
    ['docter', 'doctor'],
    ['skils', 'skills'],
    ['memroy', 'memory'],
  ];
  for (const [typo, meant] of cases) assert.equal(closestCommand(typo, COMMANDS), meant, typo);
});

test('words far from every command get no hint', () => {
  for (const word of ['xyzzy', 'launch', 'q', 'deploy-all']) assert.equal(closestCommand(word, COMMANDS), undefined, word);
});

test('property: a known command is its own closest match; one adjacent swap still finds it', () => {
  fc.assert(
    fc.property(fc.constantFrom(...COMMANDS), fc.nat(), (command, at) => {
      assert.equal(closestCommand(command, COMMANDS), command);
      const i = at % (command.length - 1);
      const swapped = command.slice(0, i) + command[i + 1]! + command[i]! + command.slice(i + 2);
      if (swapped !== command && !COMMANDS.includes(swapped)) assert.equal(closestCommand(swapped, COMMANDS), command, swapped);
    }),
  );
});

test('usage errors exit with 2', () => {
  assert.equal(EXIT_USAGE, 2);
});
