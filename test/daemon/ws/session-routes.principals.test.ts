// WS /v1/session keys a connection's sessions on the principal the app authenticated (docs/security.md
// "Principals"), not on a constant: a fake device credential store is plugged in next to the API token,
// on a real listening fastify with the real `ws` client.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { testApp, TEST_TOKEN } from '../../helpers/app';
import { sessionRoutes } from '../../../daemon/ws/session-routes';
import type { CredentialVerifier } from '../../../daemon/auth/authenticate';
import type { PrincipalKind } from '../../../daemon/auth/principal';
import type { BrainMessage } from '../../../protocol/session';
import { ScriptedProvider, makeAgent, say, silent } from '../agent/agent-fixtures';

const DEVICE_TOKEN = 'device-token-abcdef';
const devices: CredentialVerifier = { verify: (c) => (c.token === DEVICE_TOKEN ? { kind: 'device', id: 'phone-1', deviceKind: 'phone', scopes: [] } : undefined) };

async function setup(t: TestContext, principals?: readonly PrincipalKind[]) {
  const fx = makeAgent(new ScriptedProvider([() => say('ok')]), { settings: { max_sessions_per_principal: 1 } });
  const sockets = [sessionRoutes({ sessions: fx.agent.sessions, logger: silent, options: { heartbeatMs: 60_000, maxBufferedBytes: 1 << 20 }, ...(principals ? { principals } : {}) })];
  const { app } = await testApp({ sockets, verifiers: [devices] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/session`;
  const open: WebSocket[] = [];
  t.after(async () => {
    for (const ws of open) ws.terminate();
    await app.close();
  });
  /** Connects with a bearer token and opens a session: its id, or the HTTP status of a refused upgrade. */
  const openSession = (token: string) =>
    new Promise<{ session: string } | { status: number }>((resolve, reject) => {
      const ws = new WebSocket(url, ['svc.v1'], { headers: { authorization: `Bearer ${token}` } });
      open.push(ws);
      ws.once('open', () => ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} })));
      ws.on('message', (d: Buffer) => {
        const m = JSON.parse(d.toString('utf8')) as BrainMessage;
        if (m.type === 'session_opened') resolve({ session: m.session_id });
        else reject(new Error(`unexpected ${m.type}: ${JSON.stringify(m.payload)}`));
      });
      ws.once('unexpected-response', (req, res) => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0 });
      });
      ws.once('error', reject);
    });
  return { ...fx, openSession };
}

const sessionOf = (r: { session: string } | { status: number }): string => {
  if (!('session' in r)) throw new Error(`refused with HTTP ${r.status}`);
  return r.session;
};

void test('sessions belong to the authenticated principal and count against its own limit', async (t) => {
  const { agent, openSession } = await setup(t, ['admin', 'device']);
  const byDevice = sessionOf(await openSession(DEVICE_TOKEN));
  const byAdmin = sessionOf(await openSession(TEST_TOKEN));
  assert.equal(agent.sessions.get(byDevice)?.owner.principal, 'device:phone-1');
  assert.equal(agent.sessions.get(byAdmin)?.owner.principal, 'admin');
  // One session per principal (settings): each holds one with a client, so the second of each is refused
  // without touching the other principal's.
  await assert.rejects(openSession(DEVICE_TOKEN), /RATE_LIMITED|principal/);
  assert.ok(agent.sessions.get(byAdmin), "the admin's session was not taken to make room for the device");
});

void test('by default only the admin may open sessions: a device gets 403', async (t) => {
  const { openSession } = await setup(t);
  assert.deepEqual(await openSession(DEVICE_TOKEN), { status: 403 });
  assert.match(sessionOf(await openSession(TEST_TOKEN)), /^ses_/);
});
