// Long-lived parts start in order and stop in reverse (STYLE.md 2, 13). A stop that hangs is cut off
// by its timeout and one that fails is logged; neither keeps the remaining parts from stopping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { startParts, stopParts, type Part } from '../../../daemon/kernel/parts';

interface Logged {
  level: number;
  msg: string;
  part?: string;
  err?: { message: string };
}

function capture(): { logger: Logger; lines: Logged[] } {
  const lines: Logged[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Logged);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

function recorder(): { order: string[]; part: (name: string, stop?: () => Promise<void> | void) => Part } {
  const order: string[] = [];
  return {
    order,
    part: (name, stop) => ({
      name,
      start: () => void order.push(`start ${name}`),
      stop: () => {
        order.push(`stop ${name}`);
        return stop?.();
      },
    }),
  };
}

test('parts start in order and stop in reverse order', async () => {
  const { logger } = capture();
  const { order, part } = recorder();
  const parts = [part('store'), part('vault'), part('http')];
  await startParts(parts, logger);
  await stopParts(parts, logger, 1000);
  assert.deepEqual(order, ['start store', 'start vault', 'start http', 'stop http', 'stop vault', 'stop store']);
});

test('a start that fails stops the start sequence (later parts never start)', async () => {
  const { logger } = capture();
  const { order, part } = recorder();
  const broken: Part = { name: 'broken', start: () => Promise.reject(new Error('port in use')) };
  await assert.rejects(startParts([part('store'), broken, part('http')], logger), /port in use/);
  assert.deepEqual(order, ['start store']);
});

test('a stop that never settles is cut off by the timeout; the parts before it still stop', async () => {
  const { logger, lines } = capture();
  const { order, part } = recorder();
  const hanging = part('sync', () => new Promise<void>(() => undefined));
  await stopParts([part('store'), hanging, part('http')], logger, 20);
  assert.deepEqual(order, ['stop http', 'stop sync', 'stop store']);
  const warn = lines.find((l) => l.msg === 'stop timed out; continuing');
  assert.equal(warn?.part, 'sync');
  assert.equal(warn?.level, 40);
});

test('a stop that throws or rejects is logged at error and does not block the rest', async () => {
  const { logger, lines } = capture();
  const { order, part } = recorder();
  const throwing = part('mdns', () => {
    throw new Error('socket gone');
  });
  const rejecting = part('channels', () => Promise.reject(new Error('bridge down')));
  await stopParts([part('store'), throwing, rejecting, part('http')], logger, 1000);
  assert.deepEqual(order, ['stop http', 'stop channels', 'stop mdns', 'stop store']);
  const errors = lines.filter((l) => l.msg === 'stop failed; continuing');
  assert.deepEqual(
    errors.map((l) => [l.part, l.level, l.err?.message]),
    [
      ['channels', 50, 'bridge down'],
      ['mdns', 50, 'socket gone'],
    ],
  );
});

test('parts without start or stop are skipped', async () => {
  const { logger } = capture();
  await startParts([{ name: 'nothing' }], logger);
  await stopParts([{ name: 'nothing' }], logger, 10);
});
