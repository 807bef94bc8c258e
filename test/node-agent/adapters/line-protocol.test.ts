// The line protocol (pure): splitting a byte stream into lines, rendering command templates without
// letting a parameter add a line, matching replies and telemetry with typed named groups; and, as
// properties, that no input line or chunking makes any of it throw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LineProtocol, LineSplitter, MAX_LINE_CHARS, parseTemplate } from '../../../node-agent/adapters/line-protocol';
import { parseAgentConfig, type LineProtocolFraming, type SerialDevice } from '../../../node-agent/config';
import { thermostatConfig } from '../../helpers/serial-device';

const framing = (parseAgentConfig({ devices: [thermostatConfig('/dev/x')] }).devices[0] as SerialDevice).framing as LineProtocolFraming;
const thermostat = LineProtocol.compile(framing);

const templateProblem = (template: string): string => {
  const r = parseTemplate(template);
  assert.equal(typeof r, 'string', template);
  return r as string;
};

void test('templates: placeholders, literal braces, malformed ones named', () => {
  assert.deepEqual(parseTemplate('SET {celsius} {{x}}'), [{ text: 'SET ' }, { param: 'celsius' }, { text: ' {x}' }]);
  assert.match(templateProblem('SET {cel sius}'), /placeholder at character 4/);
  assert.match(templateProblem('SET }'), /unmatched "}"/);
  assert.match(templateProblem('SET {'), /placeholder/);
});

void test('render: values on the wire, the line ending added once, defaults, refusals', () => {
  assert.deepEqual(thermostat.render('set_target', { celsius: 21.5 }), { line: 'SET 21.5\n' });
  assert.deepEqual(thermostat.render('set_target', {}, { celsius: 19 }), { line: 'SET 19\n' });
  assert.deepEqual(thermostat.render('read_state', {}), { line: 'GET\n' });
  assert.deepEqual(thermostat.render('set_target', { celsius: 'x\rSET 35' }), { problem: 'celsius may not contain control characters' });
  assert.deepEqual(thermostat.render('set_target', { celsius: Number.NaN }), { problem: 'celsius must be a finite number' });
  assert.deepEqual(thermostat.render('set_target', { celsius: { a: 1 } }), { problem: 'celsius must be a number, a boolean or a string' });
  assert.deepEqual(thermostat.render('fly', {}), { problem: 'no command is declared for action fly' });
  const crlf = LineProtocol.compile({ line_ending: '\r\n', commands: { a: { send: 'A\n' }, b: { send: 'B {on}' } }, telemetry: [] });
  assert.deepEqual(crlf.render('a', {}), { line: 'A\n' });
  assert.deepEqual(crlf.render('b', { on: true }), { line: 'B true\r\n' });
});

void test('replies and telemetry: typed groups, error patterns, conversions that fail do not match', () => {
  const set = thermostat.command('set_target')!;
  assert.deepEqual(LineProtocol.reply(set, 'OK 21.5'), { ok: true, result: { celsius: 21.5 } });
  assert.deepEqual(LineProtocol.reply(set, 'ERR out of range'), { ok: false, error: 'out of range' });
  assert.equal(LineProtocol.reply(set, 'TEMP 20.0'), null);
  assert.deepEqual(LineProtocol.reply(thermostat.command('read_state')!, 'TEMP 20.9 TARGET 21.5'), { ok: true, result: { celsius: 20.9, target: 21.5 } });
  assert.deepEqual(LineProtocol.reply(thermostat.command('read_state')!, 'TEMP n/a TARGET 21.5'), { ok: true, result: { celsius: 'n/a', target: 21.5 } }, 'untyped groups stay strings when they are not numbers');
  assert.deepEqual(thermostat.telemetry('TEMP -3.5'), { event: 'temperature', data: { celsius: -3.5 } });
  assert.equal(thermostat.telemetry('TEMP 20.9 TARGET 21.5'), null);
  const typed = LineProtocol.compile({ commands: {}, telemetry: [{ match: '^S (?<on>\\w+) (?<n>\\S+)$', event: 'switch', types: { on: 'boolean', n: 'integer' } }] });
  assert.deepEqual(typed.telemetry('S on 3'), { event: 'switch', data: { on: true, n: 3 } });
  assert.equal(typed.telemetry('S maybe 3'), null);
  assert.equal(typed.telemetry('S on 3.5'), null);
});

void test('the splitter: \\n, \\r\\n and \\r across chunks; empty lines skipped; overlong lines dropped and counted', () => {
  const s = new LineSplitter();
  assert.deepEqual(s.push('TEMP 1\r'), ['TEMP 1']);
  assert.deepEqual(s.push('\nTEMP 2\nTE'), ['TEMP 2']);
  assert.deepEqual(s.push('MP 3\n\n'), ['TEMP 3']);
  assert.deepEqual(s.push('x'.repeat(MAX_LINE_CHARS + 10)), []);
  assert.deepEqual(s.push('yyy\nOK\n'), ['OK'], 'the rest of the overlong line is dropped with it');
  assert.equal(s.dropped, 1);
});

void test('property: no line makes telemetry or reply matching throw', () => {
  const commands = [thermostat.command('set_target')!, thermostat.command('read_state')!];
  const line = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('TEMP 1e400', 'OK -', 'TEMP 20.9 TARGET ', '{"id":1e999,"ok":true}', '{"__proto__":{"x":1},"event":"a","data":{}}'));
  fc.assert(
    fc.property(line, (l) => {
      thermostat.telemetry(l);
      for (const c of commands) LineProtocol.reply(c, l);
    }),
  );
});

void test('property: a rendered command is exactly one line, whatever the parameter', () => {
  const value = fc.oneof(fc.string({ maxLength: 50 }), fc.double(), fc.boolean(), fc.constant(undefined), fc.object({ maxDepth: 1 }));
  fc.assert(
    fc.property(value, (v) => {
      const r = thermostat.render('set_target', { celsius: v });
      if ('line' in r) {
        assert.ok(r.line.endsWith('\n'));
        assert.ok(!/[\r\n]/.test(r.line.slice(0, -1)), JSON.stringify(r.line));
      }
    }),
  );
});

void test('property: any chunking of a stream gives the same lines', () => {
  fc.assert(
    fc.property(fc.array(fc.stringMatching(/^[A-Z0-9 .]{1,12}$/), { maxLength: 10 }), fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }), fc.constantFrom('\n', '\r\n', '\r'), (lines, cuts, ending) => {
      const stream = lines.map((l) => l + ending).join('');
      const s = new LineSplitter();
      const out: string[] = [];
      let at = 0;
      for (let i = 0; at < stream.length; i++) {
        const n = cuts[i % cuts.length]!;
        out.push(...s.push(stream.slice(at, at + n)));
        at += n;
      }
      // A trailing \r\n cut between \r and \n yields no extra line (empty lines are skipped).
      assert.deepEqual(out, lines.filter((l) => l !== ''));
    }),
  );
});
