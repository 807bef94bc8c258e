// svc key helpers: where the secret comes from (never argv) and how tables line up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { readSecret, table } from '../../../cli/commands/key';

const sink = (): Writable => new Writable({ write: (_c, _e, cb) => cb() });
const io = (stdin: string, env: Record<string, string> = {}) => ({ out: sink(), err: sink(), stdin: Readable.from([Buffer.from(stdin)]) as unknown as NodeJS.ReadStream, env });

void test('readSecret takes the first line of piped stdin, trimmed', async () => {
  assert.equal(await readSecret(io('  sk-piped-123  \nsecond line\n'), 'oai/main', undefined), 'sk-piped-123');
  assert.equal(await readSecret(io(''), 'oai/main', undefined), '');
});

void test('readSecret --secret-env reads the named variable and ignores stdin', async () => {
  assert.equal(await readSecret(io('sk-from-stdin', { MY_KEY: 'sk-from-env ' }), 'oai/main', 'MY_KEY'), 'sk-from-env');
  assert.equal(await readSecret(io('sk-from-stdin'), 'oai/main', 'UNSET'), '');
});

void test('table pads every column but the last', () => {
  assert.equal(table([['A', 'BB', 'C'], ['long', 'x', 'tail text']]), 'A     BB  C\nlong  x   tail text\n');
});
