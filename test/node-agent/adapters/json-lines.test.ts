// The JSON-lines device contract (docs/node-agent.md "JSON lines"): readings and replies are told
// apart, anything else is not understood, and no line throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonLine, jsonLineCommand } from '../../../node-agent/adapters/json-lines';

void test('JSON lines: readings and replies; anything else is not understood', () => {
  assert.deepEqual(jsonLine('{"event":"power","data":{"watts":3}}'), { kind: 'event', event: 'power', data: { watts: 3 } });
  assert.deepEqual(jsonLine('{"id":4,"ok":false,"error":"no"}'), { kind: 'reply', reply: { id: 4, ok: false, error: 'no' } });
  for (const line of ['{', 'null', '{"id":"4","ok":true}', '{"event":"x","data":3}', 'TEMP 3']) assert.equal(jsonLine(line), null, line);
});

void test('a command is one line of JSON', () => {
  assert.equal(jsonLineCommand(7, 'set_target', { celsius: 21.5, note: 'a\nb' }), '{"id":7,"action":"set_target","params":{"celsius":21.5,"note":"a\\nb"}}\n');
});

void test('property: no line throws; what parses is a reading or a reply of the right shape', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 100 }), fc.json({ maxDepth: 3 })), (line) => {
      const parsed = jsonLine(line);
      if (parsed?.kind === 'reply') assert.ok(Number.isInteger(parsed.reply.id) && typeof parsed.reply.ok === 'boolean');
      if (parsed?.kind === 'event') assert.ok(typeof parsed.event === 'string' && typeof parsed.data === 'object');
    }),
  );
});
