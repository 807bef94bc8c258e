// The brain's logger writes no vault secret, in any field or encoding: every finished line passes the
// secret scrubber (issue 8 §4); and a request that logs nothing (/health) costs no scrub at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { SecretScrubber } from '../../../daemon/agent/tools/secret-scrubber';
import { createLogger, redactUrl, scrubLine, type LineScrubber } from '../../../daemon/kernel/logger';
import { buildApp } from '../../../daemon/app';
import { createMetrics } from '../../../daemon/metrics/metrics';
import { Lifecycle } from '../../../daemon/lifecycle/lifecycle';

const KEY = 'sk-log/+="\\Key-0123456789';
const FORMS = [KEY, encodeURIComponent(KEY), JSON.stringify(KEY).slice(1, -1), JSON.stringify(JSON.stringify(KEY)).slice(1, -1), Buffer.from(KEY).toString('base64'), KEY.slice(0, 8), KEY.slice(-8)];

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

void test('message, fields, nested values, child bindings, err.message and err.stack: no form of a key survives', () => {
  const { lines, stream } = capture();
  const logger = createLogger('info', stream, new SecretScrubber(() => [KEY]));
  const err = new Error(`401 ${JSON.stringify({ key: KEY })}`);
  logger.warn({ provider: 'oai', body: `{"error":"${encodeURIComponent(KEY)}"}`, nested: { list: [Buffer.from(KEY).toString('base64')] } }, `provider failed: ${KEY}`);
  logger.error({ err }, 'call failed');
  logger.child({ echoed: `${KEY.slice(0, 8)}****${KEY.slice(-4)}` }).info('masked');
  logger.info(`twice escaped ${JSON.stringify(JSON.stringify(KEY))}`);
  logger.flush();
  assert.equal(lines.length, 4);
  for (const line of lines) {
    JSON.parse(line);
    for (const form of FORMS) assert.ok(!line.includes(form), `${form} in ${line}`);
    assert.match(line, /\[REDACTED\]/);
  }
  assert.match(lines[0]!, /"msg":"provider failed: \[REDACTED\]"/);
  assert.match(lines[1]!, /"stack":"Error: 401/, 'the stack is kept, scrubbed');
});

void test('a line whose secret took JSON syntax with it is withheld whole, still one JSON line', () => {
  const secret = 'abc","v":';
  const line = `${JSON.stringify({ level: 40, k: 'abc', v: 'defgh' })}\n`;
  assert.ok(line.includes(secret));
  const out = scrubLine(line, new SecretScrubber(() => [secret]));
  const parsed = JSON.parse(out) as { level: number; msg: string };
  assert.equal(parsed.level, 40);
  assert.match(parsed.msg, /withheld/);
  assert.ok(!out.includes(secret));
});

void test('GET /health logs nothing, so the scrubber is never called on it', async (t) => {
  let calls = 0;
  const counting: LineScrubber = {
    scrub: (text) => {
      calls++;
      return text;
    },
  };
  const { stream } = capture();
  const app = await buildApp({
    logger: createLogger('info', stream, counting),
    version: '0.0.0-test',
    apiToken: 'test-token-0123456789',
    metrics: createMetrics(false),
    metricsPublic: false,
    lifecycle: new Lifecycle(),
    bodyLimit: 1024,
    routes: [],
    sockets: [],
  });
  t.after(() => app.close());
  await app.ready();
  calls = 0;
  for (let i = 0; i < 20; i++) assert.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  assert.equal(calls, 0);
});

void test('redactUrl removes the WebSocket access_token and /v1/node\'s api_key from a logged URL, and nothing else', () => {
  assert.equal(redactUrl('/v1/session?access_token=secret&x=1'), '/v1/session?access_token=[REDACTED]&x=1');
  assert.equal(redactUrl('/v1/node?foo=1&api_key=svcdk_abc'), '/v1/node?foo=1&api_key=[REDACTED]');
  assert.equal(redactUrl('/api/notes?q=api_key'), '/api/notes?q=api_key');
});
