// The device layer behind the real link layer: createHardware's listener given to a real NodeHub on the
// real app (127.0.0.1, port 0) and a node speaking /v1/node over a real WebSocket. The node's
// node_ack grants its actions; a generated tool's call reaches the node as hup_action_request and its
// hup_action_response comes back as the tool's result (with the verify read); a device_event reaches
// session clients as a telemetry frame; the node's socket closing makes the tool answer "device
// offline" at once and the node show offline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { buildApp } from '../../../daemon/app';
import { createMetrics } from '../../../daemon/metrics/metrics';
import { Lifecycle } from '../../../daemon/lifecycle/lifecycle';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { EventBus } from '../../../daemon/kernel/event-bus';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import type { BrainMessage } from '../../../protocol/session';
import type { HardwareToolResult } from '../../../protocol/node';
import { NodeHub } from '../../../daemon/hardware/links/node-hub';
import { createHardware } from '../../../daemon/hardware/hardware';
import { ADMIN_KEY, credentials, KEYS, NodePeer } from './links/node-rig';
import { lampManifest, settingsWith } from './hardware-rig';

void test('a node over a real socket: ack, a tool call round trip with verification, telemetry, and offline', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-hardware-hub-'));
  const sqlite = new SqliteStore(join(dir, 'brain.db'));
  const logger = pino({ level: 'silent' });
  const tools = new ToolRegistry();
  const bus = EventBus.logged<BrainEvent>(logger, 'test');
  const frames: BrainMessage[] = [];
  const events: BrainEvent[] = [];
  bus.on('test', (e) => events.push(e));
  const clock = { now: () => Date.now() };
  const hw = createHardware({
    store: sqlite,
    tools,
    owner: 'hardware',
    bus,
    logger,
    clock,
    connections: { list: () => [], close: () => 0, handoff: () => ({ attached: 0, detached: 0 }), broadcast: (f) => (frames.push(f), 1) },
    settings: settingsWith(),
  });
  sqlite.migrate('hardware', hw.migrations);
  const hub = new NodeHub({ listener: hw.listener, credentials, logger, clock, heartbeatMs: 10_000, floodLimit: { frames: 1000, perMs: 1000 } });
  hw.attach(hub);
  for (const part of hw.parts) await part.start?.();
  const app = await buildApp({
    logger,
    version: '0.0.0-test',
    apiToken: ADMIN_KEY,
    metrics: createMetrics(false),
    metricsPublic: false,
    lifecycle: new Lifecycle(),
    bodyLimit: 1024 * 1024,
    sockets: [hub.socketRoute() as never],
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/node`, { headers: { authorization: `Bearer ${KEYS['pi-1']}` } });
  t.after(async () => {
    ws.terminate();
    await hub.stop();
    for (const part of [...hw.parts].reverse()) await part.stop?.();
    await app.close();
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const peer = new NodePeer(ws);
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));

  let on = false;
  ws.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as { type: string; payload: { action_id: string; name: string; params: { on?: boolean } } };
    if (frame.type !== 'hup_action_request') return;
    const { action_id: id, name, params } = frame.payload;
    if (name === 'set_power') on = params.on === true;
    peer.send('hup_action_response', { action_id: id, success: true, result: name === 'read_power' ? { state: { on } } : { accepted: true } });
  });
  const ack = await peer.register('pi-1', { capabilities: ['led'], device_manifest: lampManifest() });
  assert.deepEqual([...(ack.payload.granted_capabilities as string[])].sort(), ['led', 'read_power', 'set_power']);

  const call = async (args: Record<string, unknown>) =>
    (await tools.get('hwdev_lamp__set_power')!.run(args, { sessionId: 's', turnId: 't', specialist: 'home', signal: new AbortController().signal })).data as HardwareToolResult;
  const result = await call({ on: true });
  assert.deepEqual([result.success, result.status, result.data.verified, result.data.accepted], [true, 'success', true, true]);
  assert.equal(on, true);

  peer.send('device_event', { device_id: 'lamp', event_type: 'status', data: { on: true, watts: 6 } });
  await new Promise<void>((resolve) => {
    const poll = (): void => (frames.length > 0 ? resolve() : void setTimeout(poll, 5));
    poll();
  });
  assert.deepEqual((frames[0]!.payload as { readings: unknown }).readings, { on: true, watts: 6 });

  ws.close();
  await peer.closed;
  await new Promise<void>((resolve) => {
    const poll = (): void => (events.some((e) => e.type === 'node_offline') ? resolve() : void setTimeout(poll, 5));
    poll();
  });
  const offline = await call({ on: false });
  assert.deepEqual([offline.success, offline.status, offline.error], [false, 'failure', 'device offline']);
  assert.equal(hw.devices.list()[0]?.online, false);
});
