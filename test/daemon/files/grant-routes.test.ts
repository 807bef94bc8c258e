// /api/grants in an assembled brain: list, grant, revoke (by body or query), bad input as 400
// envelopes, and a grant or revoke applying to the very next file tool call, without a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ToolFailure } from '../../../daemon/kernel/tool';
import { filesBrain } from './files-brain';

void test('/api/grants: grant, list, revoke by body or query; a change applies to the next tool call', async (t) => {
  const { brain, dir, headers, call } = await filesBrain(t);
  const docs = join(dir, 'docs');
  writeFileSync(join(docs, 'a.txt'), 'alpha');
  await assert.rejects(call('read_file', { path: join(docs, 'a.txt') }), (e: Error) => e instanceof ToolFailure && /outside every granted folder/.test(e.message));

  const created = await brain.app.inject({ method: 'POST', url: '/api/grants', headers, payload: { path: `${docs}/`, for: '2h' } });
  assert.equal(created.statusCode, 201, created.body);
  const grant = created.json<{ path: string; mode: string; expires_at: string }>();
  assert.equal(grant.path, docs);
  assert.equal(grant.mode, 'read');
  assert.ok(Date.parse(grant.expires_at) > Date.now());
  assert.deepEqual((await brain.app.inject({ method: 'GET', url: '/api/grants', headers })).json(), { grants: [grant] });

  assert.equal(((await call('read_file', { path: join(docs, 'a.txt') })).data as { content: string }).content, 'alpha');
  await assert.rejects(call('write_file', { path: join(docs, 'b.txt'), content: 'x' }), /granted read-only/);
  await brain.app.inject({ method: 'POST', url: '/api/grants', headers, payload: { path: docs, write: true } });
  await call('write_file', { path: join(docs, 'b.txt'), content: 'beta' });
  assert.equal(readFileSync(join(docs, 'b.txt'), 'utf8'), 'beta');

  const revoked = await brain.app.inject({ method: 'DELETE', url: `/api/grants?path=${encodeURIComponent(docs)}`, headers });
  assert.equal(revoked.statusCode, 200, revoked.body);
  assert.equal(revoked.json<{ revoked: { mode: string } }>().revoked.mode, 'write');
  await assert.rejects(call('read_file', { path: join(docs, 'a.txt') }), /outside every granted folder/);

  await brain.app.inject({ method: 'POST', url: '/api/grants', headers, payload: { path: docs } });
  const byBody = await brain.app.inject({ method: 'DELETE', url: '/api/grants', headers, payload: { path: docs } });
  assert.equal(byBody.statusCode, 200, byBody.body);
  assert.deepEqual((await brain.app.inject({ method: 'GET', url: '/api/grants', headers })).json(), { grants: [] });
});

void test('/api/grants: bad input is a 400 envelope and stores nothing; an unknown grant is a 404', async (t) => {
  const { brain, dir, headers } = await filesBrain(t);
  writeFileSync(join(dir, 'file.txt'), 'x');
  const bad: Array<[unknown, RegExp]> = [
    [{ path: 'docs' }, /absolute path/],
    [{ path: join(dir, 'missing') }, /does not exist/],
    [{ path: join(dir, 'file.txt') }, /not a directory/],
    [{ path: join(dir, 'docs'), for: 'soon' }, /duration/],
    [{ path: join(dir, 'docs'), mode: 'write' }, /./],
    [{}, /./],
  ];
  for (const [payload, why] of bad) {
    const r = await brain.app.inject({ method: 'POST', url: '/api/grants', headers, payload: payload as Record<string, unknown> });
    assert.equal(r.statusCode, 400, JSON.stringify(payload));
    const body = r.json<{ error: { code: string; message: string } }>();
    assert.equal(body.error.code, 'BAD_REQUEST');
    assert.match(body.error.message, why);
  }
  assert.deepEqual((await brain.app.inject({ method: 'GET', url: '/api/grants', headers })).json(), { grants: [] });
  const none = await brain.app.inject({ method: 'DELETE', url: '/api/grants', headers });
  assert.equal(none.statusCode, 400);
  const unknown = await brain.app.inject({ method: 'DELETE', url: '/api/grants', headers, payload: { path: join(dir, 'docs') } });
  assert.equal(unknown.statusCode, 404);
  assert.equal(unknown.json<{ error: { code: string } }>().error.code, 'NOT_FOUND');
  assert.equal((await brain.app.inject({ method: 'GET', url: '/api/grants' })).statusCode, 401);
});
