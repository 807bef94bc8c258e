// daemon/audit/audit-routes.ts through buildApp: GET /api/audit answers the newest 100 entries by
// default, `limit` (1-500) and `tag` (lower snake case) are honoured and anything else is a 400 in the
// spec envelope; it needs the admin token; nothing writes entries over HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { AuditLog } from '../../../daemon/audit/audit-log';
import { auditRoutes } from '../../../daemon/audit/audit-routes';
import type { FastifyPluginAsync } from 'fastify';
import { auth, testApp } from '../../helpers/app';

async function setup(t: { after(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-audit-routes-'));
  const store = new SqliteStore(join(dir, 'brain.db'));
  const log = new AuditLog(store, () => 1_700_000_000_000);
  // The kernel declares route plugins opaquely; here, as in daemon/brain.ts, they meet buildApp.
  const { app } = await testApp({ routes: [auditRoutes(log) as unknown as FastifyPluginAsync] });
  t.after(async () => {
    await app.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { app, log };
}

void test('GET /api/audit: newest first, 100 by default, limit and tag honoured', async (t) => {
  const { app, log } = await setup(t);
  for (let i = 0; i < 105; i++) await log.record({ tag: i < 3 ? 'unsigned_install' : 'other_thing', actor: 'admin', subject: `skill:s${i}@1.0.0` });
  const all = await app.inject({ url: '/api/audit', headers: auth });
  assert.equal(all.statusCode, 200, all.body);
  const entries = all.json<{ entries: { id: number; tag: string; subject: string }[] }>().entries;
  assert.equal(entries.length, 100);
  assert.equal(entries[0]!.subject, 'skill:s104@1.0.0');
  const tagged = (await app.inject({ url: '/api/audit?tag=unsigned_install&limit=2', headers: auth })).json<{ entries: { subject: string }[] }>();
  assert.deepEqual(tagged.entries.map((e) => e.subject), ['skill:s2@1.0.0', 'skill:s1@1.0.0']);
});

void test('GET /api/audit: bad limit or tag → 400 envelope; no token → 401; no write method', async (t) => {
  const { app } = await setup(t);
  for (const query of ['limit=0', 'limit=501', 'limit=x', 'tag=Bad-Tag', 'tag=', 'what=1']) {
    const res = await app.inject({ url: `/api/audit?${query}`, headers: auth });
    assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
    assert.equal(res.json<{ error: { code: string } }>().error.code, 'BAD_REQUEST');
  }
  assert.equal((await app.inject({ url: '/api/audit' })).statusCode, 401);
  for (const method of ['POST', 'DELETE', 'PUT'] as const) assert.equal((await app.inject({ method, url: '/api/audit', headers: auth, payload: {} })).statusCode, 404, method);
});
