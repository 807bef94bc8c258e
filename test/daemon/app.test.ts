import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { HealthResponse } from '../../protocol/health';
import type { FastifyPluginAsync } from 'fastify';
import { testApp, auth } from '../helpers/app';
import { AppError } from '../../daemon/kernel/errors';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { buildApp } from '../../daemon/app';
import { createMetrics } from '../../daemon/metrics/metrics';
import { Lifecycle } from '../../daemon/lifecycle/lifecycle';

const probe: FastifyPluginAsync = async (app) => {
  app.post('/api/probe', { schema: { body: Type.Object({ name: Type.String({ minLength: 1 }), n: Type.Integer({ minimum: 1 }) }) } }, async () => ({ ok: true }));
  app.get('/api/boom', async () => {
    throw new Error('secret internal detail');
  });
  app.get('/api/conflict', async () => {
    throw new AppError('CONFLICT', 'already there', { id: 'x' });
  });
  app.get('/api/items/:id', async () => ({ ok: true }));
};

test('GET /health answers without a token', async (t) => {
  const { app } = await testApp();
  t.after(() => app.close());
  const r = await app.inject({ method: 'GET', url: '/health' });
  assert.equal(r.statusCode, 200);
  const body = r.json<{ status: string; version: string; uptime_s: number }>();
  assert.equal(body.status, 'ok');
  assert.equal(body.version, '0.0.0-test');
  assert.ok(body.uptime_s >= 0);
  // Written by JSON.stringify (health-routes.ts), so the schema is checked here instead.
  assert.deepEqual([...Value.Errors(HealthResponse, body)], []);
  assert.deepEqual(Object.keys(body).sort(), ['status', 'uptime_s', 'version']);
});

test('/api without or with a wrong token is 401 in the envelope; unknown route with token is 404 NOT_FOUND', async (t) => {
  const { app } = await testApp({ routes: [probe] });
  t.after(() => app.close());
  const missing = await app.inject({ method: 'GET', url: '/api/anything' });
  assert.equal(missing.statusCode, 401);
  assert.equal(missing.json<{ error: { code: string } }>().error.code, 'UNAUTHORIZED');
  const wrong = await app.inject({ method: 'GET', url: '/api/anything', headers: { authorization: 'Bearer nope' } });
  assert.equal(wrong.statusCode, 401);
  const v1 = await app.inject({ method: 'GET', url: '/v1/webhooks' });
  assert.equal(v1.statusCode, 401);
  const unknown = await app.inject({ method: 'GET', url: '/api/anything', headers: auth });
  assert.equal(unknown.statusCode, 404);
  assert.deepEqual(unknown.json(), { error: { code: 'NOT_FOUND', message: 'Route GET /api/anything not found', details: null } });
});

test('schema failures are 400 BAD_REQUEST listing every offending field', async (t) => {
  const { app } = await testApp({ routes: [probe] });
  t.after(() => app.close());
  const r = await app.inject({ method: 'POST', url: '/api/probe', headers: auth, payload: { n: 0 } });
  assert.equal(r.statusCode, 400);
  const body = r.json<{ error: { code: string; details: { fields: { path: string }[] } } }>();
  assert.equal(body.error.code, 'BAD_REQUEST');
  const paths = body.error.details.fields.map((f) => f.path).sort();
  assert.deepEqual(paths, ['body/n', 'body/name']);
  const notJson = await app.inject({ method: 'POST', url: '/api/probe', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"name":' });
  assert.equal(notJson.statusCode, 400);
  assert.equal(notJson.json<{ error: { code: string } }>().error.code, 'BAD_REQUEST');
});

test('a 5xx never leaks the internal message; it carries the request id', async (t) => {
  const { app } = await testApp({ routes: [probe] });
  t.after(() => app.close());
  const r = await app.inject({ method: 'GET', url: '/api/boom', headers: auth });
  assert.equal(r.statusCode, 500);
  const body = r.json<{ error: { code: string; message: string; details: { request_id: string } } }>();
  assert.equal(body.error.code, 'INTERNAL');
  assert.doesNotMatch(r.body, /secret internal detail/);
  assert.match(body.error.details.request_id, /^[0-9a-f]{8}-[0-9a-z]+$/);
});

test('AppError keeps its code, status and details', async (t) => {
  const { app } = await testApp({ routes: [probe] });
  t.after(() => app.close());
  const r = await app.inject({ method: 'GET', url: '/api/conflict', headers: auth });
  assert.equal(r.statusCode, 409);
  assert.deepEqual(r.json(), { error: { code: 'CONFLICT', message: 'already there', details: { id: 'x' } } });
});

test('bodies over the limit are 413 PAYLOAD_TOO_LARGE', async (t) => {
  const { app } = await testApp({ routes: [probe], bodyLimit: 2048 });
  t.after(() => app.close());
  const r = await app.inject({ method: 'POST', url: '/api/probe', headers: auth, payload: { name: 'x'.repeat(5000), n: 1 } });
  assert.equal(r.statusCode, 413);
  assert.equal(r.json<{ error: { code: string } }>().error.code, 'PAYLOAD_TOO_LARGE');
});

test('while stopping requests get 503 UNAVAILABLE; /health answers 503 with status stopping', async (t) => {
  const { app, lifecycle } = await testApp({ routes: [probe] });
  t.after(() => app.close());
  lifecycle.stopping = true;
  const r = await app.inject({ method: 'GET', url: '/api/items/1', headers: auth });
  assert.equal(r.statusCode, 503);
  assert.equal(r.json<{ error: { code: string } }>().error.code, 'UNAVAILABLE');
  const health = await app.inject({ method: 'GET', url: '/health' });
  assert.equal(health.statusCode, 503);
  assert.equal(health.json<{ status: string }>().status, 'stopping');
});

test('codes that share a status keep the generic code for framework errors', async (t) => {
  const { app } = await testApp({ routes: [probe] });
  t.after(() => app.close());
  const r = await app.inject({ method: 'POST', url: '/api/probe', headers: { ...auth, 'content-type': 'text/csv' }, payload: 'a,b' });
  assert.equal(r.statusCode, 415);
  assert.equal(r.json<{ error: { code: string } }>().error.code, 'UNSUPPORTED_MEDIA_TYPE');
});

test('metrics label the route template and status class, never the raw URL', async (t) => {
  const { app } = await testApp({ routes: [probe] });
  t.after(() => app.close());
  for (const id of ['a', 'b', 'c']) await app.inject({ method: 'GET', url: `/api/items/${id}`, headers: auth });
  const text = (await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).body;
  assert.match(text, /svc_http_requests_total\{method="GET",route="\/api\/items\/\{id\}",status="2xx"\} 3/);
  assert.doesNotMatch(text, /\/api\/items\/a/);
});

test('/metrics: loopback allowed, off-loopback gets the 404 of an unmounted route unless public', async (t) => {
  const { app } = await testApp();
  t.after(() => app.close());
  const local = await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '::1' });
  assert.equal(local.statusCode, 200);
  assert.equal(local.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const remote = await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.9.8.7' });
  const unmounted = await app.inject({ method: 'GET', url: '/not-mounted', remoteAddress: '10.9.8.7' });
  assert.equal(remote.statusCode, 404);
  assert.equal(remote.body, unmounted.body.replace('/not-mounted', '/metrics'));
  const pub = await testApp({ metricsPublic: true });
  t.after(() => pub.app.close());
  assert.equal((await pub.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.9.8.7' })).statusCode, 200);
  const off = await testApp({ metricsEnabled: false });
  t.after(() => off.app.close());
  assert.equal((await off.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode, 404);
});

test('the route table logged at debug names the principals each route accepts', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString('utf8')), done()) });
  const app = await buildApp({
    logger: pino({ level: 'debug' }, sink),
    version: '0.0.0-test',
    apiToken: 'test-token-0123456789',
    metrics: createMetrics(true),
    metricsPublic: false,
    lifecycle: new Lifecycle(),
    bodyLimit: 1024,
    routes: [probe, async (scope) => void scope.get('/api/devices-too', { config: { principals: ['admin', 'device'] } }, async () => ({}))],
  });
  t.after(() => app.close());
  const logged = lines.map((l) => JSON.parse(l) as { msg: string; routes?: { method: string; url: string; principals: string[]; public: boolean }[] }).find((l) => l.msg === 'routes');
  const byUrl = new Map(logged?.routes?.map((r) => [`${r.method} ${r.url}`, r]));
  assert.deepEqual(byUrl.get('GET /health'), { method: 'GET', url: '/health', principals: ['anonymous'], public: true, websocket: false });
  assert.deepEqual(byUrl.get('GET /metrics')?.principals, ['anonymous']);
  assert.deepEqual(byUrl.get('GET /api/items/:id'), { method: 'GET', url: '/api/items/:id', principals: ['admin'], public: false, websocket: false });
  assert.deepEqual(byUrl.get('GET /api/devices-too')?.principals, ['admin', 'device']);
});
