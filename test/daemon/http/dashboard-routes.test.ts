// /api/dashboard over app.inject: a command runs a full turn (spec 2.10 shape), status/context/
// timeline answer with empty sections where no source exists yet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp, auth } from '../../helpers/app';
import { dashboardRoutes } from '../../../daemon/http/dashboard-routes';
import { LocalProvider } from '../../../daemon/providers/local/local-provider';
import { identity, makeAgent } from '../agent/agent-fixtures';

void test('command, status, context and timeline', async (t) => {
  const { agent } = makeAgent(new LocalProvider());
  const { app } = await testApp({ routes: [dashboardRoutes({ agent, identity: identity() })] });
  t.after(() => app.close());
  const post = (payload: object) => app.inject({ method: 'POST', url: '/api/dashboard/command', headers: auth, payload });

  const status = await post({ text: 'status' });
  assert.equal(status.statusCode, 200);
  const body = status.json<{ response: string; sdui: { template: string } | null; sources: string[]; session_id: string }>();
  assert.match(body.response, /is running/);
  assert.equal(body.sdui?.template, 'card');
  assert.ok(body.sources.includes('identity:USER.md'));
  assert.equal(body.session_id, 'dashboard');
  const remembered = (await post({ text: 'remember that the plants need water on Fridays' })).json<{ sources: string[]; sdui: null }>();
  assert.equal(remembered.sdui, null);
  assert.ok(remembered.sources.some((s) => s.startsWith('note_')));
  assert.equal((await post({ text: '' })).statusCode, 400);
  assert.equal((await post({ text: 'hi', session_id: 'ses_missing' })).statusCode, 404);

  const st = (await app.inject({ url: '/api/dashboard/status', headers: auth })).json<{ sessions: { open: number; turns_total: number }; devices: { items: unknown[] }; tools: string[] }>();
  assert.equal(st.sessions.open, 1);
  assert.equal(st.sessions.turns_total, 2);
  assert.deepEqual(st.devices.items, []);
  assert.ok(st.tools.includes('remember'));

  const ctx = (await app.inject({ url: '/api/dashboard/context', headers: auth })).json<Record<string, unknown>>();
  assert.deepEqual(ctx.identity, { user_name: 'Ada', assistant_name: 'svc' });
  assert.deepEqual(ctx.health, { readings: [] });
  assert.deepEqual(ctx.calendar, { events: [] });

  const tl = (await app.inject({ url: '/api/dashboard/timeline?limit=2', headers: auth })).json<{ items: { kind: string; title: string }[] }>();
  assert.deepEqual(tl.items.map((i) => i.kind), ['turn', 'turn']);
  assert.match(tl.items[0]!.title, /plants/);
  assert.equal((await app.inject({ url: '/api/dashboard/timeline?limit=0', headers: auth })).statusCode, 400);
});
