import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { ClientErrorLog } from '../../../daemon/http/client-error-log';

function capture(): { lines: Record<string, unknown>[]; log: (now: () => number) => ClientErrorLog } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  return { lines, log: (now) => new ClientErrorLog(logger, { burst: 3, windowMs: 1000, now }) };
}

void test('repeated client errors log a burst per kind, then one line counting the rest', async () => {
  let now = 0;
  const { lines, log } = capture();
  const l = log(() => now);
  for (let i = 0; i < 10; i++) l.record({ status: 400, code: 'BAD_REQUEST', message: `bad ${i}` });
  l.record({ status: 401, code: 'UNAUTHORIZED', message: 'missing bearer token' });
  now = 1000;
  l.record({ status: 400, code: 'BAD_REQUEST', message: 'after the window' });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(
    lines.map((x) => x.msg),
    ['bad 0', 'bad 1', 'bad 2', 'missing bearer token', 'client errors suppressed', 'after the window'],
  );
  assert.equal(lines[4]!.suppressed, 7);
  assert.ok(lines.every((x) => x.level === 30), 'client errors are info, never error');
});

void test('a long message is clipped; nothing of a request body is logged', async () => {
  const { lines, log } = capture();
  log(() => 0).record({ status: 400, code: 'BAD_REQUEST', message: 'x'.repeat(50_000), reqId: 'r1', method: 'POST', route: '/api/memory/note' });
  await new Promise((r) => setImmediate(r));
  assert.ok(JSON.stringify(lines[0]).length < 600);
  assert.deepEqual(Object.keys(lines[0]!).sort(), ['code', 'level', 'method', 'msg', 'pid', 'reqId', 'route', 'status', 'time', 'hostname'].sort());
});
