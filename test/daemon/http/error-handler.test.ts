// daemon/http/error-handler.ts, its manifest case (spec 7): an UnverifiedManifestError thrown by a route
// is answered 422 with {error: "UnverifiedManifest", reason, message}, not the envelope; an AppError is
// the envelope with its own status; any other error is a 500 envelope that hides its message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyPluginAsync } from 'fastify';
import { Value } from '@sinclair/typebox/value';
import { AppError, UnverifiedManifestError } from '../../../daemon/kernel/errors';
import { UnverifiedManifestBody } from '../../../protocol/errors';
import { auth, testApp } from '../../helpers/app';

const throwing: FastifyPluginAsync = async (app) => {
  app.post('/unverified', () => {
    throw new UnverifiedManifestError('key_mismatch', 'the envelope\'s public key is not the one pinned');
  });
  app.post('/conflict', () => {
    throw new AppError('CONFLICT', 'already installed', { id: 'x' });
  });
  app.post('/bug', () => {
    throw new Error('secret internal detail');
  });
};

void test('UnverifiedManifestError → 422 {error: "UnverifiedManifest", reason, message}; AppError → its envelope; a bug → 500 without its message', async (t) => {
  const { app } = await testApp({ routes: [throwing] });
  t.after(() => app.close());
  const unverified = await app.inject({ method: 'POST', url: '/unverified', headers: auth });
  assert.equal(unverified.statusCode, 422);
  const body = unverified.json<unknown>();
  assert.deepEqual(body, { error: 'UnverifiedManifest', reason: 'key_mismatch', message: 'the envelope\'s public key is not the one pinned' });
  assert.ok(Value.Check(UnverifiedManifestBody, body));
  const conflict = await app.inject({ method: 'POST', url: '/conflict', headers: auth });
  assert.equal(conflict.statusCode, 409);
  assert.deepEqual(conflict.json(), { error: { code: 'CONFLICT', message: 'already installed', details: { id: 'x' } } });
  const bug = await app.inject({ method: 'POST', url: '/bug', headers: auth });
  assert.equal(bug.statusCode, 500);
  assert.equal(bug.json<{ error: { code: string } }>().error.code, 'INTERNAL');
  assert.ok(!bug.body.includes('secret internal detail'));
});
