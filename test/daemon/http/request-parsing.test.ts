import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { testApp, auth } from '../../helpers/app';
import { ajvOptionsFor, maxParamLength, nonFiniteNumbers } from '../../../daemon/http/request-parsing';
import { Id, Line, MAX_ID_LENGTH, Text } from '../../../protocol/text';

interface Envelope {
  error: { code: string; message: string; details: { fields?: { path: string; message: string }[] } | null };
}

const routes: FastifyPluginAsync = async (app) => {
  const echo = async (req: { body: unknown; query: unknown; params: unknown }) => ({ body: req.body ?? 'absent', query: req.query, params: req.params });
  app.post('/t/typed', { schema: { body: Type.Object({ n: Type.Integer(), on: Type.Optional(Type.Boolean()), s: Type.Optional(Type.String()) }) } }, echo);
  app.get('/t/query', { schema: { querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })), x: Type.Optional(Type.Number()), on: Type.Optional(Type.Boolean()) }) } }, echo);
  app.get('/t/num/:n', { schema: { params: Type.Object({ n: Type.Number({ minimum: 0, maximum: 10 }) }) } }, echo);
  app.get('/t/id/:id', { schema: { params: Type.Object({ id: Id() }) } }, echo);
  const withDefault = Type.Object({ text: Type.Optional(Type.String()), tags: Type.Optional(Type.Array(Type.String(), { default: [] })) }, { additionalProperties: false, minProperties: 1 });
  app.patch('/t/defaults', { schema: { body: withDefault } }, echo);
  app.post('/t/defaults', { schema: { body: withDefault } }, echo);
  app.delete('/t/thing', echo);
  app.post('/t/optional', { schema: { body: Type.Optional(Type.Object({ session_id: Type.Optional(Type.String()) }, { additionalProperties: false })) } }, echo);
  app.post('/t/text', { schema: { body: Type.Object({ text: Text({ maxLength: 4000 }), line: Type.Optional(Line({ maxLength: 4000 })) }) } }, echo);
};

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const { app } = await testApp({ routes: [routes] });
  t.after(() => app.close());
  return app;
}

const post = (url: string, payload: string, headers: Record<string, string> = {}) => ({ method: 'POST' as const, url, headers: { ...auth, 'content-type': 'application/json', ...headers }, payload });

void test('JSON bodies are not coerced: a number or boolean sent as a string is a 400, query strings still are', async (t) => {
  const app = await setup(t);
  for (const payload of ['{"n":"5"}', '{"n":5,"on":"false"}', '{"n":5,"s":123}', '{"n":true}', '{"n":[5]}']) {
    const r = await app.inject(post('/t/typed', payload));
    assert.equal(r.statusCode, 400, payload);
    assert.equal(r.json<Envelope>().error.code, 'BAD_REQUEST');
  }
  assert.deepEqual((await app.inject(post('/t/typed', '{"n":5,"on":false,"s":"x"}'))).json<{ body: unknown }>().body, { n: 5, on: false, s: 'x' });
  const q = await app.inject({ method: 'GET', url: '/t/query?limit=7&x=2.5&on=false', headers: auth });
  assert.deepEqual(q.json<{ query: unknown }>().query, { limit: 7, x: 2.5, on: false });
  assert.deepEqual(ajvOptionsFor({ httpPart: 'querystring', method: 'GET' }), { allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false });
});

void test('a non-finite number in a query string or a path parameter is a 400, whatever spelling ajv would coerce', async (t) => {
  const app = await setup(t);
  for (const v of ['Infinity', '-Infinity', '1e309', '-1e309', '%2BInfinity']) {
    for (const url of [`/t/query?limit=${v}`, `/t/query?x=${v}`, `/t/query?limit=5&limit=${v}`, `/t/num/${v}`]) {
      const r = await app.inject({ method: 'GET', url, headers: auth });
      assert.equal(r.statusCode, 400, url);
      const body = r.json<Envelope>();
      assert.equal(body.error.code, 'BAD_REQUEST', url);
      assert.match(body.error.message, /finite|must be/, url);
    }
  }
  for (const v of ['1.5', 'abc', '0', '201', '']) assert.equal((await app.inject({ method: 'GET', url: `/t/query?limit=${v}`, headers: auth })).statusCode, 400, v);
  const fine = await app.inject({ method: 'GET', url: '/t/query', headers: auth });
  assert.deepEqual(fine.json<{ query: unknown }>().query, { limit: 50 }, 'query defaults are still filled in');
  assert.deepEqual(nonFiniteNumbers({ a: 1, b: Number.NaN, c: [2, -Infinity], d: 'Infinity' }).map((e) => e.instancePath), ['/b', '/c']);
});

void test('a number in a query string or a path is written in decimal digits: 1e2, 0x10, +5 and spaces are a 400, not 100, 16 and 5', async (t) => {
  const app = await setup(t);
  for (const v of ['1e2', '0x10', '%2B5', '%205', '5%20', '0b11', '1_0']) {
    for (const url of [`/t/query?limit=${v}`, `/t/query?x=${v}`, `/t/query?limit=5&limit=${v}`, `/t/num/${v}`]) {
      const r = await app.inject({ method: 'GET', url, headers: auth });
      assert.equal(r.statusCode, 400, `${url}: ${r.body}`);
      assert.equal(r.json<Envelope>().error.code, 'BAD_REQUEST', url);
    }
  }
  const q = await app.inject({ method: 'GET', url: '/t/query?limit=007&x=-2.5', headers: auth });
  assert.deepEqual(q.json<{ query: unknown }>().query, { limit: 7, x: -2.5 });
  assert.equal((await app.inject({ method: 'GET', url: '/t/num/3.25', headers: auth })).statusCode, 200);
});

void test('a PATCH body changes only the fields it names: no defaults are filled in, and {} is a 400', async (t) => {
  const app = await setup(t);
  const patch = await app.inject({ method: 'PATCH', url: '/t/defaults', headers: auth, payload: { text: 'new' } });
  assert.deepEqual(patch.json<{ body: unknown }>().body, { text: 'new' });
  const empty = await app.inject({ method: 'PATCH', url: '/t/defaults', headers: auth, payload: {} });
  assert.equal(empty.statusCode, 400);
  assert.match(empty.json<Envelope>().error.message, /fewer than 1 properties/);
  const created = await app.inject({ method: 'POST', url: '/t/defaults', headers: auth, payload: { text: 'new' } });
  assert.deepEqual(created.json<{ body: unknown }>().body, { text: 'new', tags: [] }, 'a create still gets its defaults');
});

void test('an empty body with content-type application/json is no body; malformed JSON is still a 400 envelope', async (t) => {
  const app = await setup(t);
  const del = await app.inject({ method: 'DELETE', url: '/t/thing', headers: { ...auth, 'content-type': 'application/json' }, payload: '' });
  assert.equal(del.statusCode, 200);
  assert.equal(del.json<{ body: unknown }>().body, 'absent');
  for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'application/json; charset=utf-8' }, {}]) {
    const opt = await app.inject({ method: 'POST', url: '/t/optional', headers: { ...auth, ...headers }, payload: '' });
    assert.equal(opt.statusCode, 200, JSON.stringify(headers));
    assert.equal(opt.json<{ body: unknown }>().body, 'absent');
  }
  assert.deepEqual((await app.inject(post('/t/optional', '{"session_id":"s1"}'))).json<{ body: unknown }>().body, { session_id: 's1' });
  assert.equal((await app.inject(post('/t/optional', '{"bogus":1}'))).statusCode, 400, 'an optional body that is present is validated');
  const required = await app.inject(post('/t/typed', ''));
  assert.equal(required.statusCode, 400);
  assert.deepEqual(required.json<Envelope>().error.details?.fields, [{ path: 'body', message: 'must be object' }]);
  for (const payload of ['{bad', ' ', '{"n":1', '{"__proto__":{"x":1},"n":1}']) {
    const r = await app.inject(post('/t/typed', payload));
    assert.equal(r.statusCode, 400, payload);
    assert.equal(r.json<Envelope>().error.code, 'BAD_REQUEST', payload);
  }
});

void test('path parameters: the router takes ids as long as the schemas do; longer is a 400 envelope, not a bare 414', async (t) => {
  const app = await setup(t);
  assert.equal(maxParamLength, MAX_ID_LENGTH);
  const at = (n: number) => app.inject({ method: 'GET', url: `/t/id/${'a'.repeat(n)}`, headers: auth });
  assert.equal((await at(150)).statusCode, 200);
  assert.equal((await at(MAX_ID_LENGTH)).statusCode, 200);
  const long = await at(MAX_ID_LENGTH + 1);
  assert.equal(long.statusCode, 400);
  assert.equal(long.json<Envelope>().error.code, 'BAD_REQUEST');
  const nul = await app.inject({ method: 'GET', url: '/t/id/a%00b', headers: auth });
  assert.equal(nul.statusCode, 400);
});

// Characters the text types refuse: C0 controls (tab, LF, CR only in multi-line text), DEL, C1, and unpaired surrogates.
const refusedInText = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }).filter((c) => c !== 0x09 && c !== 0x0a && c !== 0x0d),
  fc.integer({ min: 0x7f, max: 0x9f }),
  fc.integer({ min: 0xd800, max: 0xdfff }),
).map((c) => String.fromCharCode(c));
const refusedInLine = fc.oneof(refusedInText, fc.constantFrom('\t', '\n', '\r', '\u2028', '\u2029'));
const allowedChar = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 3 }),
  fc.constantFrom(' ', 'é', '日本', '🙂', '\uFFFE', '\u00A0', '\\', '"', '#'),
).filter((s) => !/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(s));
const allowedText = fc.array(fc.oneof(allowedChar, fc.constantFrom('\t', '\n', '\r\n')), { maxLength: 40 }).map((parts) => parts.join(''));
const allowedLine = fc.array(allowedChar, { maxLength: 40 }).map((parts) => parts.join(''));

void test('property: a string with a control character or an unpaired surrogate is refused with a clear message', async (t) => {
  const app = await setup(t);
  await fc.assert(
    fc.asyncProperty(allowedText, refusedInText, allowedText, async (before, bad, after) => {
      const r = await app.inject(post('/t/text', JSON.stringify({ text: before + bad + after })));
      assert.equal(r.statusCode, 400);
      const [field] = r.json<Envelope>().error.details?.fields ?? [];
      assert.equal(field?.path, 'body/text');
      assert.match(field?.message ?? '', /control characters/);
    }),
    { numRuns: 150 },
  );
  await fc.assert(
    fc.asyncProperty(allowedLine, refusedInLine, allowedLine, async (before, bad, after) => {
      const r = await app.inject(post('/t/text', JSON.stringify({ text: 'x', line: before + bad + after })));
      assert.equal(r.statusCode, 400);
      assert.match(r.json<Envelope>().error.message, /body\/line must be one line/);
    }),
    { numRuns: 150 },
  );
});

void test('property: text without refused characters arrives exactly as sent', async (t) => {
  const app = await setup(t);
  await fc.assert(
    fc.asyncProperty(allowedText, allowedLine, async (text, line) => {
      const r = await app.inject(post('/t/text', JSON.stringify({ text, line })));
      assert.equal(r.statusCode, 200, JSON.stringify({ text, line }));
      assert.deepEqual(r.json<{ body: unknown }>().body, { text, line });
    }),
    { numRuns: 200 },
  );
});
