// The error classifier: the table of docs/providers.md, plus fast-check properties that hold for any
// status, body and header the outside world can send.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { classifyFailure, parseRetryAfter, type FailureFacts } from '../../../daemon/providers/error-classifier';

const NOW = Date.UTC(2025, 0, 1);
const cls = (f: FailureFacts): string => classifyFailure(f, NOW).errorClass;

void test('the documented table: status, body type and transport flags', () => {
  assert.equal(cls({ status: 429, message: 'Rate limit reached', errorCode: 'rate_limit_exceeded' }), 'rate_limit');
  assert.equal(cls({ status: 429, message: 'You exceeded your current quota', errorType: 'insufficient_quota', errorCode: 'insufficient_quota' }), 'billing');
  assert.equal(cls({ status: 401, message: 'invalid x-api-key', errorType: 'authentication_error' }), 'auth');
  assert.equal(cls({ status: 403, message: 'forbidden', errorType: 'permission_error' }), 'auth');
  assert.equal(cls({ status: 402, message: 'Payment required' }), 'billing');
  assert.equal(cls({ status: 400, message: 'Your credit balance is too low to access the Anthropic API.', errorType: 'invalid_request_error' }), 'billing');
  assert.equal(cls({ status: 529, message: 'Overloaded', errorType: 'overloaded_error' }), 'overloaded');
  assert.equal(cls({ status: 503, message: 'unavailable' }), 'overloaded');
  assert.equal(cls({ status: 500, message: 'Internal server error', errorType: 'api_error' }), 'unknown');
  assert.equal(cls({ status: 502, message: 'bad gateway' }), 'unknown');
  assert.equal(cls({ status: 504, message: 'gateway timeout' }), 'timeout');
  assert.equal(cls({ status: 404, message: 'model not found', errorType: 'not_found_error' }), 'unknown');
  assert.equal(cls({ status: 400, message: "This model's maximum context length is 8192 tokens", errorCode: 'context_length_exceeded' }), 'context_overflow');
  assert.equal(cls({ status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum', errorType: 'invalid_request_error' }), 'context_overflow');
  assert.equal(cls({ status: 400, message: 'the request exceeds the available context size (n_ctx)' }), 'context_overflow');
  assert.equal(cls({ status: 400, message: 'messages: roles must alternate', errorType: 'invalid_request_error' }), 'bad_request');
  assert.equal(cls({ status: 422, message: 'unprocessable' }), 'bad_request');
  assert.equal(cls({ message: 'stalled', timedOut: true }), 'timeout');
  assert.equal(cls({ message: 'ECONNREFUSED', network: true }), 'network');
  assert.equal(cls({ message: 'Overloaded', errorType: 'overloaded_error' }), 'overloaded', 'an error event inside a stream has no status');
  assert.equal(cls({ message: 'weird' }), 'unknown');
});

void test('Retry-After: delta-seconds, HTTP-date, retry-after-ms, garbage', () => {
  assert.equal(parseRetryAfter({ retryAfter: '7' }, NOW), 7000);
  assert.equal(parseRetryAfter({ retryAfter: '1.5' }, NOW), 1500);
  assert.equal(parseRetryAfter({ retryAfter: new Date(NOW + 30_000).toUTCString() }, NOW), 30_000);
  assert.equal(parseRetryAfter({ retryAfter: new Date(NOW - 30_000).toUTCString() }, NOW), 0, 'a date in the past means now');
  assert.equal(parseRetryAfter({ retryAfterMs: '250', retryAfter: '9' }, NOW), 250, 'the ms header is more precise');
  assert.equal(parseRetryAfter({ retryAfter: 'soon' }, NOW), undefined);
  assert.equal(parseRetryAfter({ retryAfter: null }, NOW), undefined);
  assert.equal(classifyFailure({ status: 429, message: 'x', retryAfter: '3' }, NOW).retryAfterMs, 3000);
  assert.equal(classifyFailure({ status: 401, message: 'x', retryAfter: '3' }, NOW).retryAfterMs, undefined, 'only rate limits and overloads carry a wait');
});

const CLASSES = ['rate_limit', 'auth', 'billing', 'overloaded', 'timeout', 'context_overflow', 'bad_request', 'network', 'unknown'];
const facts = fc.record(
  {
    status: fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }),
    errorType: fc.option(fc.string(), { nil: undefined }),
    errorCode: fc.option(fc.string(), { nil: undefined }),
    message: fc.string(),
    retryAfter: fc.option(fc.oneof(fc.string(), fc.nat().map(String)), { nil: undefined }),
    retryAfterMs: fc.option(fc.oneof(fc.string(), fc.nat().map(String)), { nil: undefined }),
    timedOut: fc.boolean(),
    network: fc.boolean(),
  },
  { requiredKeys: ['message'] },
);

void test('property: every input gets exactly one known class and a non-negative finite wait', () => {
  fc.assert(
    fc.property(facts, (f) => {
      const c = classifyFailure(f, NOW);
      assert.ok(CLASSES.includes(c.errorClass), c.errorClass);
      if (c.retryAfterMs !== undefined) assert.ok(Number.isFinite(c.retryAfterMs) && c.retryAfterMs >= 0);
    }),
    { numRuns: 2000 },
  );
});

void test('property: the status decides for the unambiguous codes, whatever the body says', () => {
  fc.assert(
    fc.property(facts, fc.constantFrom<[number, string]>([401, 'auth'], [403, 'auth'], [402, 'billing'], [529, 'overloaded'], [408, 'timeout']), (f, [status, expected]) => {
      assert.equal(classifyFailure({ ...f, status }, NOW).errorClass, expected);
    }),
  );
});

void test('property: a 429 is a rate limit unless the body says the quota or billing is exhausted', () => {
  fc.assert(
    fc.property(fc.string().filter((s) => !/quota|billing|credit|payment/i.test(s)), fc.nat({ max: 100_000 }), (message, seconds) => {
      const c = classifyFailure({ status: 429, message, retryAfter: String(seconds) }, NOW);
      assert.equal(c.errorClass, 'rate_limit');
      assert.equal(c.retryAfterMs, seconds * 1000);
    }),
  );
});

void test('property: transport failures without a status are timeout or network, never bad_request', () => {
  fc.assert(
    fc.property(fc.string(), fc.boolean(), (message, timedOut) => {
      const c = classifyFailure({ message, timedOut, network: !timedOut }, NOW).errorClass;
      assert.equal(c, timedOut ? 'timeout' : 'network');
    }),
  );
});
