// What an svc command line means: commands, messages (spec 4.14 svc '<message>'), text-valued flags,
// --no-<flag>, a lone `-`, and usage errors. The grammar comes from a real sade program, as in cli/main.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import sade from 'sade';
import { grammarOf, parseCommandLine, type CommandLine, type SadeTree } from '../../cli/command-line';

const noop = (): void => undefined;
const prog = sade('svc');
prog.option('--url', 'u').option('--home', 'h').option('--session', 's');
prog.command('start').option('--host', 'h').option('--port', 'p').action(noop);
prog.command('stop').action(noop);
prog.command('status').option('--json', 'j').action(noop);
prog.command('identity [action] [file]').option('--json', 'j').action(noop);
prog.command('key').action(noop);
prog.command('key add <provider> [label]').option('--replace', 'r').option('--no-probe', 'n').option('--secret-env', 'e').action(noop);
prog.command('memory note <text>').option('--tags', 't').option('--json', 'j').action(noop);
prog.command('memory knowledge').option('--subject', 's').option('--depth', 'd').action(noop);
const grammar = grammarOf((prog as unknown as { tree: SadeTree }).tree, new Set(['json', 'probe', 'replace']), new Set(['memory note']));
const parse = (...args: string[]): CommandLine => parseCommandLine(args, grammar);

const command = (line: CommandLine): { path: string; args: (string | undefined)[]; flags: Record<string, string | boolean> } => {
  assert.equal(line.kind, 'command', JSON.stringify(line));
  if (line.kind !== 'command') throw new Error('unreachable');
  return { path: line.spec.path.join(' '), args: line.args, flags: line.flags };
};

void test('a command word followed by words the command does not take is a message', () => {
  assert.deepEqual(parse('stop', 'the', 'music'), { kind: 'message', text: 'stop the music', flags: {} });
  assert.deepEqual(parse('status', 'of', 'the', 'lights'), { kind: 'message', text: 'status of the lights', flags: {} });
  assert.deepEqual(parse('key', 'to', 'the', 'door', '--url', 'http://pi:9090'), { kind: 'message', text: 'key to the door', flags: { url: 'http://pi:9090' } });
  assert.deepEqual(parse('identity', 'theft', 'is', 'on', 'the', 'rise'), { kind: 'message', text: 'identity theft is on the rise', flags: {} });
  assert.deepEqual(parse('set', 'the', 'heating', 'to', '-5'), { kind: 'message', text: 'set the heating to -5', flags: {} });
  assert.equal(command(parse('stop')).path, 'stop');
  assert.equal(command(parse('status', '--json')).path, 'status');
});

void test('values of options stay text: --label 00123, --subject 007, --tags ""', () => {
  assert.deepEqual(command(parse('key', 'add', 'openai', '00123')).args, ['openai', '00123']);
  assert.deepEqual(command(parse('memory', 'knowledge', '--subject', '007', '--depth=2')).flags, { subject: '007', depth: '2' });
  assert.deepEqual(command(parse('memory', 'note', 'x', '--tags', '')).flags, { tags: '' });
  assert.deepEqual(command(parse('start', '--port', '09091')).flags, { port: '09091' });
});

void test('--no-<flag> sets a boolean flag false; booleans take no value', () => {
  assert.deepEqual(command(parse('key', 'add', 'openai', 'main', '--no-probe', '--replace')).flags, { probe: false, replace: true });
  assert.deepEqual(command(parse('status', '--json=false')).flags, { json: false });
  assert.deepEqual(parse('status', '--json=yes'), { kind: 'usage', message: '--json takes no value (or =true, =false)' });
});

void test('optional and rest positionals; a lone - is a word (stdin where a text is expected)', () => {
  assert.deepEqual(command(parse('key', 'add', 'openai')).args, ['openai', undefined]);
  assert.deepEqual(command(parse('memory', 'note', 'buy', 'milk', 'and', 'eggs')).args, ['buy milk and eggs']);
  assert.deepEqual(command(parse('memory', 'note', '-')).args, ['-']);
  assert.deepEqual(command(parse('identity', 'set-user', '-')).args, ['set-user', '-']);
  assert.deepEqual(parse('-'), { kind: 'message', text: '-', flags: {} });
  assert.deepEqual(command(parse('memory', 'note', '--', '--not-a-flag')).args, ['--not-a-flag']);
});

void test('usage errors: missing arguments with the usage line, unknown and misplaced options, typos, a flag without its value', () => {
  assert.deepEqual(parse('key', 'add'), { kind: 'usage', message: 'missing <provider>\nUsage: svc key add <provider> [label]' });
  assert.deepEqual(parse('memory', 'note'), { kind: 'usage', message: 'missing <text>\nUsage: svc memory note <text>' });
  assert.deepEqual(parse('status', '--colour'), { kind: 'usage', message: 'unknown option --colour' });
  assert.deepEqual(parse('--colour'), { kind: 'usage', message: 'unknown option --colour' });
  assert.deepEqual(parse('stop', '--json'), { kind: 'usage', message: 'svc stop takes no option --json' });
  assert.deepEqual(parse('stauts'), { kind: 'usage', message: "unknown command 'stauts'; did you mean 'status'?" });
  assert.deepEqual(parse('start', '--port'), { kind: 'usage', message: '--port needs a value' });
  assert.deepEqual(parse('--help'), { kind: 'meta' });
  assert.deepEqual(parse('--session', 'ses_1'), { kind: 'chat', flags: { session: 'ses_1' } });
});

const word = fc.stringMatching(/^[a-z0-9][a-z0-9'.,]{0,8}$/);

void test('property: any line of plain words is a command or a message, never lost, and a message keeps every word in order', () => {
  fc.assert(
    fc.property(fc.array(word, { minLength: 1, maxLength: 8 }), (words) => {
      const line = parse(...words);
      if (line.kind === 'message') assert.equal(line.text, words.join(' '));
      else if (line.kind === 'command') assert.equal([...line.spec.path, ...line.args.filter((a) => a !== undefined)].join(' '), words.join(' '));
      else assert.equal(line.kind, 'usage'); // a lone near-typo, or a command missing its argument
    }),
  );
});

void test('property: option values come back as the exact text given, whatever it looks like', () => {
  fc.assert(
    fc.property(fc.string(), fc.boolean(), (value, inline) => {
      const args = inline ? ['memory', 'knowledge', `--subject=${value}`] : ['memory', 'knowledge', '--subject', value];
      assert.deepEqual(command(parse(...args)).flags, { subject: value });
    }),
  );
});

void test('an option that is a flag elsewhere takes a value in the command that says so (`svc sync pair <url> --pin 1234`)', () => {
  const p = sade('svc');
  p.command('pair').option('--pin', 'p').action(noop);
  p.command('sync pair <url>').option('--pin', 'p').option('--json', 'j').action(noop);
  const g = grammarOf((p as unknown as { tree: SadeTree }).tree, new Set(['json', 'pin']), new Set(), new Map([['sync pair', new Set(['pin'])]]));
  const line = (...args: string[]): CommandLine => parseCommandLine(args, g);
  assert.deepEqual(command(line('sync', 'pair', 'svc://pair?x', '--pin', '0042', '--json')), { path: 'sync pair', args: ['svc://pair?x'], flags: { pin: '0042', json: true } });
  assert.deepEqual(command(line('sync', 'pair', '--pin=1234', 'svc://pair?x')).flags, { pin: '1234' });
  assert.deepEqual(line('sync', 'pair', 'svc://pair?x', '--pin'), { kind: 'usage', message: '--pin needs a value' });
  assert.deepEqual(command(line('pair', '--pin')).flags, { pin: true }, 'still a flag in svc pair');
  assert.deepEqual(line('pair', '--pin=1234'), { kind: 'usage', message: '--pin takes no value (or =true, =false)' });
});
