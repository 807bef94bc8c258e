// GET /api/proactive/alerts and POST /api/proactive/dismiss (daemon/hardware/alerts/proactive-routes.ts) on
// the real app with the real ProactiveAlerts over a SQLite file: the envelope's 400, 404 and 409, the
// status filter, and what a dismissal answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { FastifyPluginAsync } from 'fastify';
import { SqliteStore } from '../../../../daemon/store/sqlite-store';
import { PROACTIVE_COMPONENT, PROACTIVE_MIGRATIONS, ProactiveAlerts } from '../../../../daemon/hardware/alerts/proactive';
import { proactiveRoutes } from '../../../../daemon/hardware/alerts/proactive-routes';
import { routes } from '../../../../daemon/http/route-kit';
import type { DismissResult, ProactiveAlert } from '../../../../protocol/hardware';
import { auth, testApp } from '../../../helpers/app';

void test('alerts are listed by status; dismiss answers what was learned; bad, unknown and repeated dismissals are 400, 404 and 409 in the envelope', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-proactive-routes-'));
  const store = new SqliteStore(join(dir, 'brain.db'));
  store.migrate(PROACTIVE_COMPONENT, PROACTIVE_MIGRATIONS);
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const alerts = new ProactiveAlerts({
    store,
    clock: { now: () => 1_767_000_000_000 },
    bus: { emit: () => undefined },
    connections: { broadcast: () => 0 },
    logger: pino({ level: 'silent' }),
    settings: { thresholds: [{ reading: 'humidity', above: 70 }], battery_low_pct: 15, node_offline_after_s: 60 },
  });
  alerts.start();
  alerts.readings('bath', 'pi-1', { humidity: 85 });
  await store.write(() => undefined);
  const { app } = await testApp({ routes: [routes(proactiveRoutes(alerts)) as unknown as FastifyPluginAsync] });
  t.after(() => app.close());

  const list = async (query: string) => (await app.inject({ url: `/api/proactive/alerts${query}`, headers: auth })).json<{ alerts: ProactiveAlert[] }>();
  const [alert] = (await list('')).alerts;
  assert.equal(alert?.device_id, 'bath');
  assert.equal((await list('?status=active')).alerts.length, 1);
  assert.equal((await list('?status=dismissed')).alerts.length, 0);
  assert.equal((await app.inject({ url: '/api/proactive/alerts?status=snoozed', headers: auth })).statusCode, 400);
  assert.equal((await app.inject({ url: '/api/proactive/alerts' })).statusCode, 401);

  const dismiss = (body: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/proactive/dismiss', headers: auth, payload: body });
  const bad = await dismiss({ alert_id: 'x', extra: 1 });
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json<{ error: { code: string } }>().error.code, 'BAD_REQUEST');
  const unknown = await dismiss({ alert_id: 'alert_missing' });
  assert.equal(unknown.statusCode, 404);
  assert.equal(unknown.json<{ error: { code: string } }>().error.code, 'NOT_FOUND');
  const done = await dismiss({ alert_id: alert.alert_id, reason: 'the shower was on' });
  assert.equal(done.statusCode, 200);
  const result = done.json<DismissResult>();
  assert.equal(result.alert.status, 'dismissed');
  assert.deepEqual(result.learned, { threshold: 89.25, suppressed_until: null, dismissals: 1 });
  assert.equal((await dismiss({ alert_id: alert.alert_id })).statusCode, 409);
  assert.equal((await list('?status=dismissed')).alerts.length, 1);
});
