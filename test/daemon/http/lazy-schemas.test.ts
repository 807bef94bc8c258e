import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { testApp, auth } from '../../helpers/app';

test('route schemas compile on first use: a broken one does not stop start-up, it fails its own request', async (t) => {
  const routes: FastifyPluginAsync = async (app) => {
    app.post('/api/broken', { schema: { body: { type: 'no-such-type' } } }, async () => ({ ok: true }));
    app.post('/api/fine', { schema: { body: Type.Object({ n: Type.Integer() }), response: { 200: Type.Object({ n: Type.Integer() }) } } }, async (req) => ({ n: (req.body as { n: number }).n, dropped: 'not in the schema' }));
  };
  const { app } = await testApp({ routes: [routes] });
  t.after(() => app.close());
  const fine = await app.inject({ method: 'POST', url: '/api/fine', headers: auth, payload: { n: 3 } });
  assert.equal(fine.statusCode, 200);
  assert.equal(fine.body, '{"n":3}', 'the response schema serialises (fast-json-stringify drops unknown fields)');
  const invalid = await app.inject({ method: 'POST', url: '/api/fine', headers: auth, payload: { n: 'x' } });
  assert.equal(invalid.statusCode, 400);
  assert.deepEqual(invalid.json<{ error: { details: { fields: { path: string }[] } } }>().error.details.fields.map((f) => f.path), ['body/n']);
  const broken = await app.inject({ method: 'POST', url: '/api/broken', headers: auth, payload: {} });
  assert.equal(broken.statusCode, 500);
});
