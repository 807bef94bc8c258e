// daemon/hardware/hardware-capability.ts in an in-process brain with the real capabilities: a node paired through the pairing API that registers on
// /v1/node, whose telemetry crosses a threshold rule (a proactive alert reaches a /v1/session client
// and GET /api/proactive/alerts; dismissing it adapts the threshold), and whose link closes with 4001
// the moment its key is revoked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { HUP_VERSION } from '../../../protocol/node';
import type { DismissResult, ProactiveAlert } from '../../../protocol/hardware';
import type { BrainMessage } from '../../../protocol/session';
import { inProcessBrain } from '../../helpers/assembled-brain';


const frame = (type: string, payload: Record<string, unknown>): string => JSON.stringify({ hup_version: HUP_VERSION, type, ts: Date.now() / 1000, payload });

function collect(ws: WebSocket): { frames: { type: string; payload: Record<string, unknown> }[]; next: (type: string) => Promise<{ type: string; payload: Record<string, unknown> }> } {
  const frames: { type: string; payload: Record<string, unknown> }[] = [];
  const waiters: { type: string; resolve: (f: (typeof frames)[number]) => void }[] = [];
  ws.on('message', (data) => {
    const f = JSON.parse((data as Buffer).toString()) as (typeof frames)[number];
    frames.push(f);
    for (const w of waiters.filter((x) => x.type === f.type)) w.resolve(f);
  });
  return {
    frames,
    next: (type) => {
      const found = frames.find((f) => f.type === type);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ type, resolve }));
    },
  };
}

void test('a paired node registers, its readings raise a proactive alert seen by session clients; dismissing adapts the threshold; revoking its key closes its link with 4001', { timeout: 20_000 }, async (t) => {
  const b = await inProcessBrain(t, { file: { hardware: { alerts: { thresholds: [{ reading: 'celsius', above: 28 }] } } } });
  const port = b.brain.listener.addresses()[0]!.port;
  const base = `http://127.0.0.1:${port}`;
  const api = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${b.token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const minted = (await (await api('/api/devices/pair', { method: 'POST', body: JSON.stringify({ kind: 'node', node_id: 'board-1', name: 'Board' }) })).json()) as { token: string };
  const paired = (await (await fetch(`${base}/api/devices/pair/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: minted.token }) })).json()) as { device_id: string; device_key: string };

  const session = new WebSocket(`ws://127.0.0.1:${port}/v1/session`, ['svc.v1', `svc.bearer.${b.token}`]);
  const sessionFrames: BrainMessage[] = [];
  session.on('message', (d) => sessionFrames.push(JSON.parse((d as Buffer).toString()) as BrainMessage));
  await new Promise((resolve) => session.once('open', resolve));
  t.after(() => session.close());

  const node = new WebSocket(`ws://127.0.0.1:${port}/v1/node`, ['feral.hup.v1'], { headers: { authorization: `Bearer ${paired.device_key}` } });
  const link = collect(node);
  await new Promise((resolve) => node.once('open', resolve));
  node.send(frame('node_register', { node_id: 'board-1', node_type: 'rpi', capabilities: ['temperature'], device_manifest: { device_id: 'thermo', device_type: 'thermometer', name: 'Hall', actions: [{ name: 'read_temperature', category: 'sensor' }] } }));
  const ack = await link.next('node_ack');
  assert.equal(ack.payload.node_id, 'board-1');
  node.send(frame('device_event', { device_id: 'thermo', event_type: 'temperature', data: { celsius: 31 } }));

  for (let i = 0; i < 200 && !sessionFrames.some((f) => f.type === 'proactive_alert'); i++) await new Promise((r) => setTimeout(r, 20));
  const alertFrame = sessionFrames.find((f) => f.type === 'proactive_alert');
  assert.ok(alertFrame, `a proactive_alert frame: ${JSON.stringify(sessionFrames.map((f) => f.type))}`);
  assert.ok(sessionFrames.some((f) => f.type === 'telemetry' && (f.payload as { source: string }).source === 'thermo'), 'telemetry relayed too');
  assert.equal(alertFrame.type, 'proactive_alert');
  const alert: ProactiveAlert = alertFrame.payload;
  assert.deepEqual([alert.kind, alert.device_id, alert.reading, alert.value, alert.threshold], ['threshold', 'thermo', 'celsius', 31, 28]);
  const listed = (await (await api('/api/proactive/alerts?status=active')).json()) as { alerts: ProactiveAlert[] };
  assert.deepEqual(listed.alerts.map((a) => a.alert_id), [alert.alert_id]);

  assert.equal((await api('/api/proactive/dismiss', { method: 'POST', body: JSON.stringify({}) })).status, 400);
  assert.equal((await api('/api/proactive/dismiss', { method: 'POST', body: JSON.stringify({ alert_id: 'alert_nope' }) })).status, 404);
  const dismissed = await api('/api/proactive/dismiss', { method: 'POST', body: JSON.stringify({ alert_id: alert.alert_id, reason: 'it is summer' }) });
  assert.equal(dismissed.status, 200);
  const result = (await dismissed.json()) as DismissResult;
  assert.equal(result.alert.status, 'dismissed');
  assert.ok((result.learned.threshold ?? 0) > 31);
  assert.equal((await api('/api/proactive/dismiss', { method: 'POST', body: JSON.stringify({ alert_id: alert.alert_id }) })).status, 409);

  const closed = new Promise<number>((resolve) => node.once('close', (code) => resolve(code)));
  assert.equal((await api(`/api/devices/${paired.device_id}`, { method: 'DELETE' })).status, 200);
  assert.equal(await closed, 4001);
  assert.ok(link.frames.some((f) => f.type === 'error' && f.payload.code === 1001), 'told why before the close');
  const health = (await (await api('/api/nodes/health')).json()) as { nodes: { node_id: string; online: boolean }[] };
  assert.deepEqual(health.nodes.map((n) => [n.node_id, n.online]), [['board-1', false]]);
});
