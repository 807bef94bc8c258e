// Hardware nodes (issue 14; docs/hardware.md; /v1/node, the HUP 1.4 wire): what 50 nodes cost the brain.
//  - telemetry: 50 simulated nodes, each paired first (a node key minted through the API:
//    POST /api/devices/pair {kind: node} then /pair/complete), each registering one device with a
//    sensor action and an actuator action, each sending a device_event at 10 Hz for `loadSeconds`. The
//    brain's CPU share (% of one core, from its CPU time before and after: lib/brain.mjs cpuOf) and
//    RSS idle (no node), with the 50 nodes linked but quiet, and under the load; p50/p99 from a
//    device_event sent to the matching `telemetry` frame reaching a /v1/session client (matched by
//    the device and a sequence number in the reading; sender and receiver in one process, one clock);
//    frames lost. Baseline in the same run: a bare `ws` relay (this file, role `baseline`: node_ack
//    for a node_register, each device_event broadcast as a telemetry frame to the session sockets),
//    started with the brain's flags and environment, under the same load from the same nodes.
//  - command round trip: the path a user drives with no model configured. POST /api/dashboard/command
//    "turn on lamp 07" runs a full agent turn: the embedded local agent (daemon/providers/local) maps
//    the sentence to set_device, which runs the device's actuator action as a command (recorded,
//    rate-limited, verified), a hup_action_request to the node, its hup_action_response, the answer.
//    That is the cheapest real path from a user to a device and back (the generated hwdev_ tools
//    need a model to call them). Split by the node's own receive and reply times (epoch ms from
//    performance.timeOrigin, same machine) into HTTP→node and node→HTTP reply, and by the command's
//    own record (queued → sent → succeeded). Baselines in the same run: the same agent turn without a
//    tool or a device ("hello", one before each command), and a round trip over one bare `ws` socket
//    to the baseline server, with the hup_action_request frame the node received out and the
//    hup_action_response frame it sent back (same sizes).
//  - re-registration after a restart: the brain is stopped (SIGTERM) while the 50 nodes are linked;
//    they reconnect with the protocol's backoff (node-agent/link.ts backoffMs: 100 ms doubling to
//    30 s, the upper half jittered); the brain is started again on the same home and port, and the
//    time from that spawn to all 50 nodes online in GET /api/nodes/health (polled every 20 ms) is
//    reported with the spread of each node's node_ack after the spawn. Baseline in the same run: the
//    brain's own spawn to its first GET /health 200 for the restart, and the first cold start of the
//    section's fresh home.
// The nodes run in `fleets` child processes (this file, role `fleet`, forked with an IPC channel) so
// their CPU is neither the brain's nor the bench process's; their CPU share is reported too.
//   export async function run(ctx) -> JSON-serialisable numbers
//   ctx (all optional): { root, tmpDir, log(msg), nodes, hz, loadSeconds, commands, fleets }
import { fork, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { brainRuntime, cpuOf, freePort, latency, memoryOf, percentile, pollHealth, round, sleep, startBrain } from '../lib/brain.mjs';

const TOKEN = 'bench-token-hardware-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
const HUP_VERSION = '1.4.0';
/** The contract's backoff (node-protocol.md "Handshake"; node-agent/link.ts). */
const BACKOFF = { minMs: 100, maxMs: 30_000, stableMs: 10_000 };
/** Bound of every wait for a state (nodes online, a node's reply) in polls. */
const MAX_POLLS = 3000;
const epochNow = () => performance.timeOrigin + performance.now();
const frame = (type, payload) => JSON.stringify({ hup_version: HUP_VERSION, type, ts: Math.round(Date.now()) / 1000, payload });

// ── Role `fleet`: simulated nodes and a session client, driven by the bench over IPC ────────────────

/** The device each simulated node registers: a temperature sensor action and a power actuator action. */
function manifest(deviceId, name) {
  return {
    device_id: deviceId,
    device_type: 'lamp',
    name,
    transport: { kind: 'mesh' },
    capabilities: ['temperature', 'led'],
    actions: [
      { name: 'read_state', category: 'sensor', permission_tier: 'passive', description: 'Read the temperature and whether the lamp is on', params: [] },
      // The bench runs many commands per minute on one device: its own limit, above the default 10/min.
      { name: 'set_power', category: 'actuator', permission_tier: 'active', description: 'Switch the lamp on or off', params: [{ name: 'on', type: 'boolean', required: true }], rate_limit_per_minute: 6000 },
    ],
  };
}

const backoffMs = (attempt) => {
  const base = Math.min(BACKOFF.maxMs, BACKOFF.minMs * 2 ** Math.min(attempt, 30));
  return Math.round(base / 2 + Math.random() * (base / 2));
};

/** One node: a /v1/node socket that registers, beats, answers actions, and reconnects with the backoff. */
class SimNode {
  constructor(fleet, spec) {
    this.fleet = fleet;
    this.spec = spec;
    this.ws = null;
    this.attempt = 0;
    this.linkedAt = 0;
    this.acks = []; // epoch ms of each node_ack
    this.heartbeat = null;
    this.retry = null;
    this.stopped = false;
    this.seq = 0;
  }

  connect() {
    const ws = new WebSocket(this.fleet.nodeUrl, ['feral.hup.v1'], { headers: { authorization: `Bearer ${this.spec.key}` } });
    this.ws = ws;
    ws.on('open', () =>
      ws.send(
        frame('node_register', {
          node_id: this.spec.nodeId,
          node_type: 'actuator',
          name: this.spec.name,
          capabilities: ['temperature', 'led'],
          firmware_version: 'bench',
          device_manifest: manifest(this.spec.deviceId, this.spec.name),
        }),
      ),
    );
    ws.on('message', (data) => this.received(ws, data));
    // A refused connection (the brain is down) ends with 'close' after this; the close schedules the retry.
    ws.on('error', (err) => this.fleet.note(`node ${this.spec.nodeId}: ${err.code ?? err.message}`));
    ws.on('close', (code) => this.closed(ws, code));
  }

  received(ws, data) {
    const message = JSON.parse(data.toString('utf8'));
    if (message.type === 'node_ack') {
      this.linkedAt = Date.now();
      this.acks.push(epochNow());
      clearInterval(this.heartbeat);
      this.heartbeat = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send(frame('node_heartbeat', { ts: Date.now() / 1000 })), message.payload.heartbeat_ms);
      this.fleet.acked(this);
    } else if (message.type === 'hup_action_request') {
      const receivedAt = epochNow();
      const p = message.payload;
      const reply = frame('hup_action_response', { action_id: p.action_id, success: true, result: { on: p.params.on ?? null }, error: null, duration_ms: 0 });
      ws.send(reply);
      this.fleet.action({ action_id: p.action_id, received_at: receivedAt, replied_at: epochNow(), request_bytes: data.length, response_bytes: Buffer.byteLength(reply) });
    } else if (message.type === 'error') {
      this.fleet.note(`node ${this.spec.nodeId}: error ${message.payload.code} ${message.payload.name}: ${message.payload.message}`);
    }
  }

  closed(ws, code) {
    if (ws !== this.ws) return;
    clearInterval(this.heartbeat);
    this.ws = null;
    if (this.stopped) return;
    if (code === 4001) {
      this.fleet.note(`node ${this.spec.nodeId}: key refused (4001)`);
      return;
    }
    if (this.linkedAt > 0 && Date.now() - this.linkedAt >= BACKOFF.stableMs) this.attempt = 0;
    this.linkedAt = 0;
    const delay = backoffMs(this.attempt++);
    this.retry = setTimeout(() => this.connect(), delay);
  }

  event() {
    if (this.ws?.readyState !== WebSocket.OPEN || this.linkedAt === 0) return null;
    const seq = ++this.seq;
    this.ws.send(frame('device_event', { node_id: this.spec.nodeId, device_id: this.spec.deviceId, event_type: 'temperature', data: { celsius: 20 + (seq % 50) / 10, seq }, ts: Date.now() / 1000 }));
    return seq;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retry);
    clearInterval(this.heartbeat);
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(frame('node_bye', { reason: 'bench done' }));
    this.ws?.close(1000);
  }
}

function fleetMain() {
  const fleet = {
    nodes: [],
    nodeUrl: null,
    notes: new Map(),
    actionsSeen: [],
    note(text) {
      const key = text.replace(/^node \S+: /, '');
      fleet.notes.set(key, (fleet.notes.get(key) ?? 0) + 1);
    },
    acked() {
      if (fleet.waitingAll && fleet.nodes.every((n) => n.linkedAt > 0)) {
        const done = fleet.waitingAll;
        fleet.waitingAll = null;
        done();
      }
    },
    action(a) {
      process.send({ type: 'action', ...a });
    },
  };
  let session = null;
  const pending = new Map(); // `${device}#${seq}` → performance.now() at send
  let latencies = [];
  let foreign = 0;

  const openSession = (url, token) =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(url, ['svc.v1', `svc.bearer.${token}`]);
      ws.on('message', (data) => {
        const m = JSON.parse(data.toString('utf8'));
        if (m.type !== 'telemetry') return;
        const key = `${m.payload.source}#${m.payload.readings?.seq}`;
        const sentAt = pending.get(key);
        if (sentAt === undefined) return void foreign++;
        pending.delete(key);
        latencies.push(performance.now() - sentAt);
      });
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
      ws.on('error', (err) => fleet.note(`session: ${err.code ?? err.message}`));
    });

  const handlers = {
    async connect({ url, token, nodes }) {
      fleet.nodeUrl = `${url}/v1/node`;
      session = await openSession(`${url}/v1/session`, token);
      const all = new Promise((resolve) => (fleet.waitingAll = resolve));
      fleet.nodes = nodes.map((spec) => new SimNode(fleet, spec));
      for (const node of fleet.nodes) node.connect();
      await all;
      return { linked: fleet.nodes.length };
    },
    async load({ seconds, hz }) {
      latencies = [];
      foreign = 0;
      pending.clear();
      const every = 1000 / hz;
      const timers = [];
      let sent = 0;
      let skipped = 0;
      const ends = fleet.nodes.map(
        (node, i) =>
          new Promise((resolve) => {
            // Spread over the interval, so the fleet's sends are not bursts of 25.
            timers.push(
              setTimeout(() => {
                let ticks = 0;
                const total = Math.round(seconds * hz);
                const timer = setInterval(() => {
                  const seq = node.event();
                  if (seq === null) skipped++;
                  else {
                    sent++;
                    pending.set(`${node.spec.deviceId}#${seq}`, performance.now());
                  }
                  if (++ticks >= total) {
                    clearInterval(timer);
                    resolve();
                  }
                }, every);
                timers.push(timer);
              }, (i * every) / fleet.nodes.length),
            );
          }),
      );
      await Promise.all(ends);
      // Frames still on their way: at most 2 s more.
      for (let i = 0; i < 200 && pending.size > 0; i++) await sleep(10);
      return { sent, skipped, received: latencies.length, lost: pending.size, foreign, latencies };
    },
    /** Each node's node_ack times after `since` (epoch ms). */
    acks({ since }) {
      return { acks: fleet.nodes.map((n) => n.acks.find((t) => t >= since) ?? null) };
    },
    waitLinked() {
      if (fleet.nodes.every((n) => n.linkedAt > 0)) return { linked: fleet.nodes.length };
      return new Promise((resolve) => (fleet.waitingAll = () => resolve({ linked: fleet.nodes.length })));
    },
    async disconnect() {
      for (const node of fleet.nodes) node.stop();
      session?.close(1000);
      session = null;
      await sleep(200);
      fleet.nodes = [];
      return { notes: Object.fromEntries(fleet.notes) };
    },
  };

  process.on('message', async (m) => {
    const result = await handlers[m.type](m);
    process.send({ type: 'done', id: m.id, result });
  });
  process.on('disconnect', () => process.exit(0));
}

// ── Role `baseline`: a bare ws relay and echo, the floor under the brain's numbers ──────────────────

function baselineMain(port) {
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/health' ? 200 : 404, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024, handleProtocols: (offered) => [...offered][0] ?? false });
  const sessions = new Set();
  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url, 'http://x').pathname;
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (path === '/v1/session') {
        sessions.add(ws);
        ws.on('close', () => sessions.delete(ws));
      } else if (path === '/v1/node') {
        ws.on('message', (data) => {
          const m = JSON.parse(data.toString('utf8'));
          if (m.type === 'node_register') ws.send(frame('node_ack', { node_id: m.payload.node_id, session_token: 'x', heartbeat_ms: 10_000, server_time: Date.now() / 1000, granted_capabilities: m.payload.capabilities, denied_capabilities: [] }));
          else if (m.type === 'device_event') {
            const out = JSON.stringify({ type: 'telemetry', session_id: '', payload: { source: m.payload.device_id, readings: m.payload.data, at: Date.now() / 1000 } });
            for (const s of sessions) s.send(out);
          }
        });
      } else if (path === '/echo') {
        // Answers each frame with a frame of `reply` bytes (the size the node's response had).
        const reply = new URL(req.url, 'http://x').searchParams.get('reply') ?? '';
        ws.on('message', () => ws.send(reply));
      } else ws.close(4404, 'no such path');
    });
  });
  server.listen(port, '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));
}

// ── The bench ──────────────────────────────────────────────────────────────────────────────────

async function api(url, method, path, body, expect = 200) {
  const res = await fetch(`${url}${path}`, { method, headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** A forked fleet with request/answer over IPC. */
function startFleet(self) {
  const child = fork(self, ['fleet'], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const waiting = new Map();
  const actions = [];
  let next = 0;
  let exited = null;
  child.on('message', (m) => {
    if (m.type === 'action') actions.push(m);
    else if (m.type === 'done') {
      waiting.get(m.id)?.resolve(m.result);
      waiting.delete(m.id);
    }
  });
  child.on('exit', (code, signal) => {
    exited = code ?? signal;
    for (const w of waiting.values()) w.reject(new Error(`fleet exited with ${exited}: ${stderr.slice(-2000)}`));
    waiting.clear();
  });
  return {
    child,
    actions,
    ask: (type, args = {}) =>
      new Promise((resolve, reject) => {
        if (exited !== null) return reject(new Error(`fleet exited with ${exited}: ${stderr.slice(-2000)}`));
        const id = next++;
        waiting.set(id, { resolve, reject });
        child.send({ type, id, ...args });
      }),
    stop: () =>
      new Promise((resolve) => {
        if (exited !== null) return resolve(exited);
        child.once('exit', (code) => resolve(code));
        child.disconnect();
      }),
  };
}

/** Mints a node key the way docs/pairing.md describes: a pairing token for a node, completed. */
async function pairNode(url, nodeId, name) {
  const minted = await api(url, 'POST', '/api/devices/pair', { kind: 'node', node_id: nodeId, name }, 201);
  const res = await fetch(`${url}/api/devices/pair/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: minted.token }) });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`pair/complete ${nodeId}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text).device_key;
}

/** Nodes with `online: true` in GET /api/nodes/health. */
async function onlineNodes(url) {
  const { nodes } = await api(url, 'GET', '/api/nodes/health');
  return nodes.filter((n) => n.online).length;
}

async function untilOnline(url, count, everyMs = 20) {
  for (let i = 0; i < MAX_POLLS; i++) {
    if ((await onlineNodes(url)) >= count) return;
    await sleep(everyMs);
  }
  throw new Error(`${count} nodes not online after ${MAX_POLLS} polls`);
}

/**
 * The fleets send telemetry for `seconds` to whatever they are linked to; `pid` is the server's
 * process: its CPU share over the load and its RSS sampled every second (last and largest).
 */
async function loadPhase(fleets, pid, seconds, hz) {
  const cpu0 = cpuOf(pid);
  const fleetCpu0 = fleets.map((f) => cpuOf(f.child.pid).ms);
  const t0 = performance.now();
  // CPU and wall time from the start to the moment the last fleet has its answer (the sending window
  // and the few ms its last frames take to arrive).
  let end = null;
  const all = Promise.all(fleets.map((f) => f.ask('load', { seconds, hz }))).then((answers) => {
    end = { wallMs: performance.now() - t0, cpuMs: cpuOf(pid).ms - cpu0.ms, fleetCpuMs: fleets.reduce((sum, f, i) => sum + cpuOf(f.child.pid).ms - fleetCpu0[i], 0) };
    return answers;
  });
  const rss = [];
  for (let i = 0; i < seconds && end === null; i++) {
    await sleep(1000);
    if (end === null) rss.push(memoryOf(pid));
  }
  const answers = await all;
  const { wallMs, cpuMs, fleetCpuMs } = end;
  const lat = answers.flatMap((a) => a.latencies);
  const sum = (k) => answers.reduce((s, a) => s + a[k], 0);
  const peak = rss.reduce((m, r) => (r.rss_mib > (m?.rss_mib ?? 0) ? r : m), null);
  return {
    events_sent: sum('sent'),
    events_per_s: Math.round(sum('sent') / seconds),
    telemetry_received: sum('received'),
    lost: sum('lost'),
    not_sent_while_unlinked: sum('skipped'),
    event_to_telemetry: latency(lat),
    cpu_pct_of_one_core: round((cpuMs / wallMs) * 100, 1),
    cpu_ms_per_event: round(cpuMs / Math.max(1, sum('sent')), 3),
    cpu_clock: cpu0.clock,
    rss_end: rss.at(-1) ?? null,
    rss_peak: peak,
    rss_mib_each_second: rss.map((r) => r.rss_mib),
    fleet_cpu_pct_of_one_core: round((fleetCpuMs / wallMs) * 100, 1),
    wall_s: round(wallMs / 1000, 1),
  };
}

/** One command as a user gives it (dashboard, local agent → set_device → node), with the node's own times. */
async function commandOnce(url, fleets, text) {
  const before = fleets.map((f) => f.actions.length);
  const t0 = epochNow();
  const res = await fetch(`${url}/api/dashboard/command`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ text }) });
  const body = await res.text();
  const t1 = epochNow();
  if (res.status !== 200) return { status: res.status, body: body.slice(0, 300) };
  let action = null;
  for (let i = 0; i < 100 && action === null; i++) {
    action = fleets.map((f, j) => f.actions[before[j]]).find((a) => a !== undefined) ?? null;
    if (action === null) await sleep(10);
  }
  return { status: 200, total: t1 - t0, action, response: JSON.parse(body).response, t0, t1 };
}

/** Round trips over one bare ws socket: `request` out, a frame of `replyBytes` back. */
async function echoRoundTrips(url, request, replyBytes, n) {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/echo?reply=${'x'.repeat(replyBytes)}`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise((resolve) => {
      ws.once('message', resolve);
      ws.send(request);
    });
    ms.push(performance.now() - t0);
  }
  ws.close(1000);
  return ms;
}

async function startBaseline(self, runtime, port) {
  const child = spawn(process.execPath, [...runtime.flags, self, 'baseline', String(port)], { env: { ...process.env, ...runtime.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const url = `http://127.0.0.1:${port}`;
  await pollHealth(url, { what: 'baseline relay', everyMs: 10, down: () => (child.exitCode !== null ? `baseline relay exited with ${child.exitCode}: ${stderr}` : null), detail: () => stderr });
  return {
    child,
    url,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * Counts the brain's log lines at warn and above by message (SVC_LOG_LEVEL=warn: nothing else is
 * written), so a fault under load shows in the report.
 */
function watchLog(brain, counts) {
  let rest = '';
  brain.child.stderr.on('data', (d) => {
    const lines = (rest + d).split('\n');
    rest = lines.pop();
    for (const line of lines) {
      let entry;
      try {
        entry = JSON.parse(line);
      } catch (err) {
        if (!(err instanceof SyntaxError)) throw err;
        entry = { level: 50, msg: line.slice(0, 200) };
      }
      const key = `${entry.level >= 50 ? 'error' : 'warn'}: ${entry.msg ?? ''}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
  });
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[hardware] ${m}\n`));
  const nNodes = ctx.nodes ?? 50;
  const hz = ctx.hz ?? 10;
  const seconds = ctx.loadSeconds ?? 20;
  const nCommands = ctx.commands ?? 200;
  const nFleets = ctx.fleets ?? 2;
  const self = import.meta.filename;
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'hardware-'));
  const home = join(dir, 'home');
  const runtime = await brainRuntime(root);
  const port = await freePort();
  let brain = null;
  let baseline = null;
  const fleets = [];
  try {
    const brainLog = {};
    brain = await startBrain(root, { home, port, runtime, token: TOKEN });
    watchLog(brain, brainLog);
    const coldStartMs = brain.startMs;
    log(`${nNodes} node keys minted through the pairing API`);
    const specs = [];
    for (let i = 0; i < nNodes; i++) {
      const n = String(i + 1).padStart(2, '0');
      const nodeId = `bench-node-${n}`;
      specs.push({ nodeId, name: `Lamp ${n}`, deviceId: `lamp_${n}`, key: await pairNode(brain.url, nodeId, `Bench node ${n}`) });
    }
    await sleep(2000);
    const idleCpu0 = cpuOf(brain.child.pid);
    const idleT0 = performance.now();
    await sleep(2000);
    const idle = { rss: memoryOf(brain.child.pid), cpu_pct_of_one_core: round(((cpuOf(brain.child.pid).ms - idleCpu0.ms) / (performance.now() - idleT0)) * 100, 2) };

    for (let i = 0; i < nFleets; i++) fleets.push(startFleet(self));
    const share = (i) => specs.filter((_, j) => j % nFleets === i);

    log(`baseline: a bare ws relay, ${nNodes} nodes at ${hz} Hz for ${seconds} s`);
    baseline = await startBaseline(self, runtime, await freePort());
    const relayLinkT0 = performance.now();
    const relayLinkCpu0 = cpuOf(baseline.child.pid).ms;
    await Promise.all(fleets.map((f, i) => f.ask('connect', { url: baseline.url.replace('http', 'ws'), token: TOKEN, nodes: share(i) })));
    const relayLinkMs = performance.now() - relayLinkT0;
    const relayLinkCpuMs = cpuOf(baseline.child.pid).ms - relayLinkCpu0;
    const baselineRssLinked = memoryOf(baseline.child.pid);
    const relay = await loadPhase(fleets, baseline.child.pid, seconds, hz);
    await Promise.all(fleets.map((f) => f.ask('disconnect')));

    log(`the brain: ${nNodes} nodes link, then ${hz} Hz each for ${seconds} s`);
    const linkT0 = performance.now();
    const linkCpu0 = cpuOf(brain.child.pid).ms;
    await Promise.all(fleets.map((f, i) => f.ask('connect', { url: `ws://127.0.0.1:${port}`, token: TOKEN, nodes: share(i) })));
    const allAckedMs = performance.now() - linkT0;
    const linkCpuMs = cpuOf(brain.child.pid).ms - linkCpu0;
    await untilOnline(brain.url, nNodes);
    await sleep(1000);
    const linkedQuiet = memoryOf(brain.child.pid);
    const load = await loadPhase(fleets, brain.child.pid, seconds, hz);
    await sleep(1000);
    const rssAfterLoad = memoryOf(brain.child.pid);

    log(`command round trips: ${nCommands} "turn on/off lamp NN" through POST /api/dashboard/command (local agent, set_device)`);
    const rounds = [];
    const failures = [];
    const turns = [];
    for (let i = 0; i < nCommands + 10; i++) {
      // The same agent turn without a tool or a device ("hello": the local agent's greeting), one before each command.
      const h0 = performance.now();
      const hello = await fetch(`${brain.url}/api/dashboard/command`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hello' }) });
      await hello.arrayBuffer();
      if (hello.status !== 200) failures.push({ text: 'hello', status: hello.status });
      else if (i >= 10) turns.push(performance.now() - h0);
      const n = String((i % nNodes) + 1).padStart(2, '0');
      const r = await commandOnce(brain.url, fleets, `turn ${Math.floor(i / nNodes) % 2 === 0 ? 'on' : 'off'} lamp ${n}`);
      if (r.status !== 200 || r.action === null) failures.push({ text: `lamp ${n}`, status: r.status, body: r.body ?? r.response });
      else if (i >= 10) rounds.push(r); // the first 10 warm up
    }
    const recent = await api(brain.url, 'GET', `/api/commands/recent?limit=${Math.min(500, nCommands + 10)}`);
    const statuses = {};
    for (const c of recent.commands) statuses[c.status] = (statuses[c.status] ?? 0) + 1;
    // The brain's own record of each measured command (ms resolution): created (queued, its row
    // committed before it is sent) → sent → succeeded (committed before the tool answers).
    const measured = new Set(rounds.map((r) => r.action.action_id));
    const legs = { queued_to_sent: [], sent_to_succeeded: [] };
    for (const c of recent.commands) {
      if (!measured.has(c.command_id)) continue;
      const at = (status) => Date.parse(c.history.find((h) => h.status === status)?.at ?? '');
      legs.queued_to_sent.push(at('sent') - at('queued'));
      legs.sent_to_succeeded.push(at('succeeded') - at('sent'));
    }
    const sample = rounds.find((r) => r.action)?.action;
    const echo = await echoRoundTrips(baseline.url, 'x'.repeat(sample?.request_bytes ?? 200), sample?.response_bytes ?? 150, nCommands + 10);
    const commandRoundTrip = latency(rounds.map((r) => r.total));
    const echoRoundTrip = latency(echo.slice(10));

    log('restart: SIGTERM with the nodes linked, spawn again on the same home and port, until all are online');
    const stopT0 = performance.now();
    await brain.stop();
    const stopMs = performance.now() - stopT0;
    const spawnedAt = epochNow();
    const spawnT0 = performance.now();
    brain = await startBrain(root, { home, port, runtime, token: TOKEN });
    watchLog(brain, brainLog);
    await untilOnline(brain.url, nNodes);
    const allOnlineMs = performance.now() - spawnT0;
    await Promise.all(fleets.map((f) => f.ask('waitLinked')));
    const acks = (await Promise.all(fleets.map((f) => f.ask('acks', { since: spawnedAt })))).flatMap((a) => a.acks);
    const ackAfterSpawn = acks.filter((t) => t !== null).map((t) => t - spawnedAt);
    const notes = {};
    for (const f of fleets) for (const [k, v] of Object.entries((await f.ask('disconnect')).notes)) notes[k] = (notes[k] ?? 0) + v;

    return {
      setup: {
        nodes: nNodes,
        hz,
        load_seconds: seconds,
        fleets: `${nFleets} child processes (plain ws clients), unpinned, same machine`,
        device: 'one per node: read_state (sensor, passive), set_power (actuator, active, on: boolean)',
        telemetry_latency: 'device_event sent → telemetry frame on a /v1/session socket of the same fleet process (performance.now)',
        command_path: 'POST /api/dashboard/command "turn on lamp NN" → local agent (no model) → set_device → command → hup_action_request → hup_action_response → HTTP answer; sequential, cycling over the devices',
        cpu: 'CPU time of the server process (all threads) over the sending window / wall time; % of one core',
      },
      baseline: {
        brain_idle_no_nodes: idle,
        relay: { link_all_nodes_ms: round(relayLinkMs, 1), link_cpu_ms: round(relayLinkCpuMs, 1), rss_with_nodes_linked: baselineRssLinked, under_load: relay },
        agent_turn_without_device: { ...latency(turns), text: 'hello', note: 'the same POST /api/dashboard/command and session, answered by the local agent without a tool; one before each command' },
        ws_echo_round_trip: { ...echoRoundTrip, request_bytes: sample?.request_bytes ?? null, response_bytes: sample?.response_bytes ?? null },
        brain_cold_start_ms: round(coldStartMs, 1),
      },
      telemetry: {
        link_all_nodes_ms: round(allAckedMs, 1),
        link_cpu_ms: round(linkCpuMs, 1),
        rss_linked_quiet: linkedQuiet,
        under_load: load,
        rss_1s_after_load: rssAfterLoad,
        rss_growth_idle_to_load_end_mib: round((load.rss_end?.rss_mib ?? NaN) - idle.rss.rss_mib, 1),
        p99_over_relay_p99: round(load.event_to_telemetry.p99_ms / relay.event_to_telemetry.p99_ms, 1),
        cpu_over_relay: round(load.cpu_pct_of_one_core / relay.cpu_pct_of_one_core, 1),
      },
      command_round_trip: {
        ...commandRoundTrip,
        http_to_node: latency(rounds.map((r) => r.action.received_at - r.t0)),
        node_reply_to_http_answer: latency(rounds.map((r) => r.t1 - r.action.replied_at)),
        failures: failures.length,
        failure_examples: failures.slice(0, 3),
        command_statuses: statuses,
        command_record: { queued_to_sent: latency(legs.queued_to_sent), sent_to_succeeded: latency(legs.sent_to_succeeded) },
        answer_example: rounds[0]?.response ?? null,
        p50_over_echo_p50: round(commandRoundTrip.p50_ms / echoRoundTrip.p50_ms, 1),
        p50_minus_turn_without_device_p50_ms: round(commandRoundTrip.p50_ms - percentile(turns, 50), 2),
      },
      restart: {
        stop_ms: round(stopMs, 1),
        spawn_to_health_ms: round(brain.startMs, 1),
        spawn_to_all_online_ms: round(allOnlineMs, 1),
        node_ack_after_spawn: { nodes: ackAfterSpawn.length, p50_ms: round(percentile(ackAfterSpawn, 50), 1), p99_ms: round(percentile(ackAfterSpawn, 99), 1), max_ms: round(Math.max(...ackAfterSpawn), 1) },
      },
      node_side_notes: notes,
      brain_log_warnings: brainLog,
      targets: {
        telemetry_p99_ms: { target: 'informational', value: load.event_to_telemetry.p99_ms, pass: null },
        telemetry_lost: { target: 0, value: load.lost, pass: load.lost === 0 },
        brain_cpu_pct_50_nodes_10hz: { target: 'informational', value: load.cpu_pct_of_one_core, pass: null },
        command_round_trip_p99_ms: { target: 'informational', value: commandRoundTrip.p99_ms, pass: null },
        restart_all_online_ms: { target: 'informational', value: round(allOnlineMs, 1), pass: null },
      },
    };
  } finally {
    for (const f of fleets) await f.stop();
    await baseline?.stop();
    await brain?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run as a child of the section: `node hardware.mjs fleet` (forked) or `node hardware.mjs baseline <port>`.
if (process.argv[1] && realpathSync(process.argv[1]) === import.meta.filename) {
  if (process.argv[2] === 'fleet') fleetMain();
  else if (process.argv[2] === 'baseline') baselineMain(Number(process.argv[3]));
}
