import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { MAX_CODE_TRIES, POLL_MS, pairByCode, retryAfterMs, type ClientDeps, type PairOutcome } from '../../node-agent/code-pairing-client';
import { newPairCode, type PairCode } from '../../mesh/pair-code';
import { newDeviceKey } from '../../mesh/pair-token';

interface Seen {
  method: string;
  path: string;
  body: unknown;
}
type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

/** A loopback HTTP server answering each request with the next scripted reply (the last one repeats). */
async function fakeBrain(t: { after(fn: () => Promise<void>): void }, answer: (req: Seen, n: number) => Reply): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const s = { method: req.method ?? '', path: req.url ?? '', body: text === '' ? null : (JSON.parse(text) as unknown) };
      seen.push(s);
      const r = answer(s, seen.length - 1);
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(r.body === undefined ? '' : JSON.stringify(r.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** Deps with a virtual clock: sleep advances it at once and is recorded. */
function virtual(codes: string[] = []): ClientDeps & { sleeps: number[] } {
  let now = 1_000_000;
  const queue = [...codes];
  const sleeps: number[] = [];
  return {
    sleeps,
    fetch: (url, init) => fetch(url, init),
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    now: () => now,
    newCode: () => (queue.shift() as PairCode | undefined) ?? newPairCode(),
  };
}

const EXPIRES = 1_700_000_600;
const pending: Reply = { status: 200, body: { status: 'pending', expires_at: EXPIRES } };
const envelope = (code: string, message: string, details: unknown = null): unknown => ({ error: { code, message, details } });

function request(brainUrl: string, deps: ClientDeps, timeoutMs = 600_000): { run: () => Promise<PairOutcome>; shown: string[]; notes: string[] } {
  const shown: string[] = [];
  const notes: string[] = [];
  return {
    shown,
    notes,
    run: () => pairByCode(deps, { brainUrl, nodeId: 'rpi garden'.replace(' ', '-'), name: 'Garden', deadline: deps.now() + timeoutMs, onCode: (c) => shown.push(c), onNote: (m) => notes.push(m) }),
  };
}

void test('announce, poll every 2 s while pending, paired: the token and device id come back', async (t) => {
  const key = newDeviceKey();
  const brain = await fakeBrain(t, (_r, n) => (n < 3 ? pending : { status: 200, body: { status: 'paired', token: key, device_id: 'dev_1', expires_at: EXPIRES } }));
  const deps = virtual(['042917']);
  const r = request(brain.url, deps);
  assert.deepEqual(await r.run(), { status: 'paired', token: key, deviceId: 'dev_1', code: '042917' });
  assert.deepEqual(r.shown, ['042917']);
  assert.deepEqual(brain.seen[0], { method: 'POST', path: '/api/devices/pair/announce', body: { code: '042917', node_id: 'rpi-garden', name: 'Garden' } });
  assert.deepEqual(
    brain.seen.slice(1).map((s) => s.path),
    Array(3).fill('/api/devices/pair/status?code=042917&node_id=rpi-garden'),
  );
  assert.deepEqual(deps.sleeps, [POLL_MS, POLL_MS, POLL_MS]);
});

void test('a code taken by another node (409) is replaced before it is shown; MAX_CODE_TRIES taken codes fail', async (t) => {
  const brain = await fakeBrain(t, (_r, n) => (n === 0 ? { status: 409, body: envelope('CONFLICT', 'taken') } : n === 1 ? pending : { status: 200, body: { status: 'expired', expires_at: EXPIRES } }));
  const r = request(brain.url, virtual(['111111', '222222']));
  assert.deepEqual(await r.run(), { status: 'expired', code: '222222' });
  assert.deepEqual(r.shown, ['222222']);

  const always = await fakeBrain(t, () => ({ status: 409, body: envelope('CONFLICT', 'taken') }));
  const r2 = request(always.url, virtual());
  const out = await r2.run();
  assert.equal(out.status, 'failed');
  assert.equal(always.seen.length, MAX_CODE_TRIES);
  assert.deepEqual(r2.shown, []);
});

void test('429 waits for Retry-After, on announce and on status', async (t) => {
  const key = newDeviceKey();
  const script: Reply[] = [
    { status: 429, body: envelope('RATE_LIMITED', 'too many announces', { retry_after_seconds: 7 }), headers: { 'retry-after': '7' } },
    pending,
    { status: 429, body: envelope('RATE_LIMITED', 'slow down', { retry_after_seconds: 12 }) },
    { status: 200, body: { status: 'paired', token: key, expires_at: EXPIRES } },
  ];
  const brain = await fakeBrain(t, (_r, n) => script[Math.min(n, script.length - 1)]!);
  const deps = virtual(['305118']);
  const r = request(brain.url, deps);
  assert.deepEqual(await r.run(), { status: 'paired', token: key, deviceId: undefined, code: '305118' });
  assert.deepEqual(deps.sleeps, [7000, POLL_MS, 12_000]);
  assert.match(r.notes[0]!, /wait 7 s/);
});

void test('a brain that forgot the code (404 after a restart) hears the same code again; if another node took it, pairing fails', async (t) => {
  const key = newDeviceKey();
  const script: Reply[] = [pending, { status: 404, body: envelope('NOT_FOUND', 'no code') }, pending, { status: 200, body: { status: 'paired', token: key, expires_at: EXPIRES } }];
  const brain = await fakeBrain(t, (_r, n) => script[Math.min(n, script.length - 1)]!);
  const r = request(brain.url, virtual(['777000']));
  assert.equal((await r.run()).status, 'paired');
  assert.deepEqual(brain.seen.map((s) => s.method), ['POST', 'GET', 'POST', 'GET']);
  assert.deepEqual(brain.seen[2]!.body, brain.seen[0]!.body);
  assert.deepEqual(r.shown, ['777000'], 'the code is shown once');

  const lost: Reply[] = [pending, { status: 404, body: envelope('NOT_FOUND', 'no code') }, { status: 409, body: envelope('CONFLICT', 'taken') }];
  const other = await fakeBrain(t, (_r, n) => lost[Math.min(n, lost.length - 1)]!);
  const out = await request(other.url, virtual()).run();
  assert.equal(out.status, 'failed');
  assert.match(out.status === 'failed' ? out.message : '', /another node announced it/);
});

void test('no claim before the deadline is a timeout; the last wait stops at the deadline', async (t) => {
  const brain = await fakeBrain(t, () => pending);
  const deps = virtual(['000001']);
  assert.deepEqual(await request(brain.url, deps, 5000).run(), { status: 'timeout', code: '000001' });
  assert.deepEqual(deps.sleeps, [POLL_MS, POLL_MS, 1000]);
});

void test('an unreachable brain fails the first announce at once; while polling, a 5xx or a refused connection is one note and the next poll', async (t) => {
  const closed = await fakeBrain(t, () => pending);
  const deadUrl = closed.url;
  const gone = request(deadUrl.replace(/:\d+$/, ':1'), virtual());
  const out = await gone.run();
  assert.equal(out.status, 'failed');
  assert.match(out.status === 'failed' ? out.message : '', /cannot reach the brain at http:\/\/127\.0\.0\.1:1/);

  const key = newDeviceKey();
  const script: Reply[] = [pending, { status: 503, body: envelope('UNAVAILABLE', 'closing') }, { status: 500, body: 'x' }, { status: 200, body: { status: 'paired', token: key, expires_at: EXPIRES } }];
  const brain = await fakeBrain(t, (_r, n) => script[Math.min(n, script.length - 1)]!);
  const r = request(brain.url, virtual());
  assert.equal((await r.run()).status, 'paired');
  assert.equal(r.notes.filter((n) => n.includes('did not answer')).length, 1);
});

void test('a refused announce (400) fails with the brain\'s message', async (t) => {
  const brain = await fakeBrain(t, () => ({ status: 400, body: envelope('BAD_REQUEST', 'body/node_id must match pattern') }));
  const out = await request(brain.url, virtual()).run();
  assert.deepEqual(out, { status: 'failed', message: 'the brain refused the code (400: body/node_id must match pattern)' });
});

void test('property: Retry-After is read as seconds, a date, or the envelope, and always clamped to 1 s-15 min', () => {
  assert.equal(retryAfterMs('30', null, 0), 30_000);
  assert.equal(retryAfterMs(new Date(60_000).toUTCString(), null, 0), 60_000);
  assert.equal(retryAfterMs(null, envelope('RATE_LIMITED', 'x', { retry_after_seconds: 4 }), 0), 4000);
  assert.equal(retryAfterMs(null, null, 0), POLL_MS);
  assert.equal(retryAfterMs('999999', null, 0), 900_000);
  fc.assert(
    fc.property(fc.option(fc.string()), fc.anything(), fc.integer({ min: 0, max: 2 ** 42 }), (header, body, now) => {
      const ms = retryAfterMs(header, body, now);
      assert.ok(Number.isInteger(ms) && ms >= 1000 && ms <= 900_000, String(ms));
    }),
  );
});

/** Status answers a brain may give, as a model: the client must end on the first terminal one, within the deadline. */
const answerArb = fc.oneof(
  fc.constant<Reply>(pending),
  fc.constant<Reply>({ status: 200, body: { status: 'expired', expires_at: EXPIRES } }),
  fc.constant<Reply>({ status: 429, body: envelope('RATE_LIMITED', 'x'), headers: { 'retry-after': '3' } }),
  fc.constant<Reply>({ status: 503, body: envelope('UNAVAILABLE', 'x') }),
  fc.constant<Reply>({ status: 200, body: { status: 'paired', token: 'svcdk_' + 'a'.repeat(43), device_id: 'dev_x', expires_at: EXPIRES } }),
  fc.constant<Reply>({ status: 200, body: { status: 'weird' } }),
);

void test('property: for any sequence of status answers the client ends on the first terminal one, or times out, never sleeping past the deadline', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(answerArb, { maxLength: 40 }), fc.integer({ min: 1, max: 120 }), async (answers, timeoutS) => {
      const deps = virtual();
      let polls = 0;
      deps.fetch = async (url) => {
        if (url.includes('/announce')) return Response.json({ status: 'pending', expires_at: EXPIRES });
        const r = answers[polls++] ?? pending;
        return new Response(JSON.stringify(r.body), { status: r.status, headers: { 'content-type': 'application/json', ...r.headers } });
      };
      const start = deps.now();
      const out = await pairByCode(deps, { brainUrl: 'http://brain', nodeId: 'n1', deadline: start + timeoutS * 1000, onCode: () => undefined, onNote: () => undefined });
      assert.ok(deps.now() <= start + timeoutS * 1000, 'never past the deadline');
      const terminal = answers.findIndex((a) => a.status === 200 && ['expired', 'paired'].includes((a.body as { status: string }).status));
      if (out.status === 'timeout') assert.ok(terminal === -1 || terminal >= polls, `timed out after ${polls} polls though answer ${terminal} was terminal`);
      else {
        assert.equal(polls - 1, terminal);
        assert.equal(out.status, (answers[terminal]!.body as { status: string }).status);
      }
    }),
    { numRuns: 200 },
  );
});
