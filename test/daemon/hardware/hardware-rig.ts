// The device layer (createHardware) on a real SQLite file, the real ToolRegistry and EventBus, a clock
// the test moves, captured session broadcasts, and scripted nodes behind the NodeLinks seam: each
// node answers hup_action_requests with a function the test gives (the link layer itself is tested
// with real sockets in node-hub.test.ts). `restart()` builds the layer again on the same file, as a
// brain restart (or, with `crash`, without stopping the old one first).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { FastifyPluginAsync } from 'fastify';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { EventBus } from '../../../daemon/kernel/event-bus';
import type { BrainEvent } from '../../../daemon/kernel/events';
import { ToolRegistry } from '../../../daemon/kernel/tool-registry';
import type { ClientConnections } from '../../../daemon/kernel/ports';
import type { ToolOutcome } from '../../../daemon/kernel/tool';
import type { BrainMessage } from '../../../protocol/session';
import type { ActionRequest, ActionResponse, DeviceManifest, HardwareToolResult, NodeRegister, VerifyContract } from '../../../protocol/node';
import { createHardware, type Hardware } from '../../../daemon/hardware/hardware';
import type { HardwareSettings } from '../../../daemon/hardware/hardware-settings';
import { NodeUnreachable, type NodeLinks, type RegistrationDecision } from '../../../daemon/hardware/links/node-links';
import { testApp } from '../../helpers/app';

export const settingsWith = (over: Partial<HardwareSettings> = {}): HardwareSettings => ({
  heartbeat_ms: 10_000,
  generic_tools: true,
  opt_in: { camera: false, microphone: false },
  actuator_rate_per_minute: 10,
  flood: { frames: 200, per_ms: 1000 },
  telemetry: { history_points: 240, history_window_s: 86_400, stream_to_sessions: true },
  commands: { keep: 10_000 },
  alerts: { thresholds: [], battery_low_pct: 15, node_offline_after_s: 120 },
  local_agent: { enabled: false },
  ...over,
});

export type Answer = (request: ActionRequest) => ActionResponse | Promise<ActionResponse>;

/** Nodes behind the seam: online ones answer with their script; requests are recorded. */
export class ScriptedNodes implements NodeLinks {
  readonly connected = new Set<string>();
  readonly requests: { nodeId: string; request: ActionRequest }[] = [];
  readonly scripts = new Map<string, Answer>();

  online(nodeId: string): boolean {
    return this.connected.has(nodeId);
  }

  async request(nodeId: string, request: ActionRequest): Promise<ActionResponse> {
    if (!this.connected.has(nodeId)) throw new NodeUnreachable(nodeId, 'offline');
    this.requests.push({ nodeId, request });
    const script = this.scripts.get(nodeId);
    if (!script) throw new NodeUnreachable(nodeId, 'timeout');
    return script(request);
  }

  disconnect(nodeId: string): boolean {
    return this.connected.delete(nodeId);
  }
}

/** A switchable lamp: set_power {on} and read_power, with a verify contract reading `state.on` back. */
export const lampManifest = (over: Partial<DeviceManifest> = {}, verify: VerifyContract | null = { via: 'read_power', field: 'state.on', expect: '$on', delay_ms: 0, retries: 2 }): DeviceManifest => ({
  device_id: 'lamp',
  device_type: 'light',
  name: 'Desk lamp',
  transport: { kind: 'serial' },
  capabilities: ['led'],
  actions: [
    { name: 'set_power', category: 'actuator', permission_tier: 'active', params: [{ name: 'on', type: 'boolean', required: true }], ...(verify ? { verify } : {}) },
    { name: 'read_power', category: 'sensor', params: [] },
  ],
  ...over,
});

/** A lamp's node script: remembers the state set; `drop` makes the next n sets not stick. */
export function lampScript(state = { on: false, drop: 0 }): Answer {
  return (request) => {
    if (request.name === 'set_power') {
      if (state.drop > 0) state.drop--;
      else state.on = request.params.on === true;
      return { action_id: request.action_id, success: true, result: { accepted: true } };
    }
    if (request.name === 'read_power') return { action_id: request.action_id, success: true, result: { state: { on: state.on } } };
    return { action_id: request.action_id, success: false, error: `unknown action ${request.name}` };
  };
}

export interface Rig {
  hw: Hardware;
  sqlite: SqliteStore;
  tools: ToolRegistry;
  bus: EventBus<BrainEvent>;
  events: BrainEvent[];
  frames: BrainMessage[];
  nodes: ScriptedNodes;
  clock: { ms: number; now(): number };
  register(nodeId: string, extra?: Partial<NodeRegister>): RegistrationDecision;
  /** Runs a generated tool as the agent would (the registry's argument check first). */
  call(tool: string, args: Record<string, unknown>, turnId?: string): Promise<ToolOutcome & { data: HardwareToolResult }>;
  restart(opts?: { crash?: boolean; settings?: HardwareSettings }): Promise<void>;
  inject(url: string): Promise<{ statusCode: number; json: () => unknown }>;
}

export async function hardwareRig(t: { after(fn: () => unknown): void }, settings = settingsWith()): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-hardware-'));
  const sqlite = new SqliteStore(join(dir, 'brain.db'));
  const logger = pino({ level: 'silent' });
  const events: BrainEvent[] = [];
  const frames: BrainMessage[] = [];
  const clock = { ms: Date.UTC(2026, 10, 25, 8), now: () => clock.ms };
  const connections: ClientConnections = {
    list: () => [],
    close: () => 0,
    handoff: () => ({ attached: 0, detached: 0 }),
    broadcast: (frame) => {
      frames.push(frame);
      return 1;
    },
  };
  const nodes = new ScriptedNodes();
  let tools = new ToolRegistry();
  let bus = new EventBus<BrainEvent>((owner, err) => {
    throw new Error(`bus listener of ${owner} failed: ${String(err)}`);
  });
  const build = async (s: HardwareSettings): Promise<Hardware> => {
    const hw = createHardware({ store: sqlite, tools, owner: 'hardware', bus, logger, clock, connections, settings: s, sleep: () => Promise.resolve() });
    sqlite.migrate('hardware', hw.migrations);
    hw.attach(nodes);
    for (const part of hw.parts) await part.start?.();
    return hw;
  };
  bus.on('test', (e) => events.push(e));
  const rig: Rig = {
    hw: await build(settings),
    sqlite,
    tools,
    bus,
    events,
    frames,
    nodes,
    clock,
    register: (nodeId, extra = {}) => {
      nodes.connected.add(nodeId);
      return rig.hw.listener.registered({ nodeId, register: { node_id: nodeId, node_type: 'rpi', capabilities: [], ...extra }, heartbeatMs: 10_000, connectedAt: clock.ms });
    },
    call: async (name, args, turnId = 'turn-1') => {
      const tool = rig.tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      const problems = rig.tools.problems(name, args);
      if (problems.length > 0) throw new Error(`bad arguments: ${problems.join('; ')}`);
      return (await tool.run(args, { sessionId: 's1', turnId, specialist: 'home', signal: new AbortController().signal })) as ToolOutcome & { data: HardwareToolResult };
    },
    restart: async (opts = {}) => {
      if (!opts.crash) for (const part of [...rig.hw.parts].reverse()) await part.stop?.();
      nodes.connected.clear();
      rig.tools = tools = new ToolRegistry();
      rig.bus = bus = new EventBus<BrainEvent>((owner, err) => {
        throw new Error(`bus listener of ${owner} failed: ${String(err)}`);
      });
      bus.on('test', (e) => events.push(e));
      rig.hw = await build(opts.settings ?? settings);
    },
    inject: async (url) => {
      const { app } = await testApp({ routes: rig.hw.routes as unknown as FastifyPluginAsync[] });
      try {
        const res = await app.inject({ method: 'GET', url, headers: { authorization: 'Bearer test-token-0123456789' } });
        return { statusCode: res.statusCode, json: () => res.json() };
      } finally {
        await app.close();
      }
    },
  };
  t.after(async () => {
    for (const part of [...rig.hw.parts].reverse()) await part.stop?.();
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return rig;
}
