// The devices and nodes the brain knows (docs/hardware.md "Devices", "Nodes"): what each node's
// register declared, their tools, liveness from the link layer, and what is stored so a restarted
// brain lists them (offline until their node registers again).
//
// Rules:
// - Device ids are global. A device id another node holds while that node is online is refused: a
//   warning is logged and `device:<id>` is listed in the ack's denied_capabilities. When the holder is
//   offline the device moves to the node that declares it now (a board re-plugged elsewhere).
// - A node that registers again without one of its devices removes it (tools unregistered, row
//   deleted, device_removed on the bus). Phone-bridged peripherals are not part of a node's register:
//   a new peripheral_bridge_register of the same bridge replaces its set, and at `expires_at` they go
//   offline and are removed three heartbeat intervals later.
// - A tool name another tool already holds (two device ids differing only in case) leaves that action
//   without a tool (logged); it can still be run through set_device.
import type { Logger } from 'pino';
import type { EventBus } from '../../kernel/event-bus';
import type { BrainEvent } from '../../kernel/events';
import type { CapabilityContext, Clock, Migration } from '../../kernel/capability';
import type { Tool } from '../../kernel/tool';
import type { ToolRegistry } from '../../kernel/tool-registry';
import { OPT_IN_CAPABILITIES, type DeviceManifest, type NodeRegister, type NormalizedAction, type TransportKind } from '../../../protocol/node';
import type { RegisteredNode, RegistrationDecision } from '../links/node-links';
import { specOf, manifestsOf, type DeviceSpec } from './device-manifest';
import { needsConfirmation, optInOf, toolName } from './device-tools';

type Store = CapabilityContext['store'];

export const DEVICE_MIGRATION: Migration = {
  version: 1,
  description: 'hardware nodes and their devices',
  up: `CREATE TABLE hw_nodes (
    node_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    node_type TEXT NOT NULL,
    heartbeat_ms INTEGER NOT NULL,
    version TEXT,
    uptime_s REAL,
    battery_pct REAL,
    rssi REAL,
    connected_at REAL,
    last_seen_at REAL,
    registered_at REAL NOT NULL
  );
  CREATE TABLE hw_devices (
    device_id TEXT PRIMARY KEY,
    node_id TEXT NOT NULL,
    manifest TEXT NOT NULL,
    transport TEXT NOT NULL,
    bridge_id TEXT,
    expires_at REAL,
    last_seen REAL,
    readings TEXT NOT NULL DEFAULT '{}'
  );
  CREATE INDEX hw_devices_node ON hw_devices (node_id);`,
};

export interface NodeState {
  nodeId: string;
  name: string;
  nodeType: string;
  heartbeatMs: number;
  version: string | null;
  uptimeS: number | null;
  batteryPct: number | null;
  rssi: number | null;
  connectedAt: number | null;
  lastSeenAt: number | null;
  online: boolean;
  /** `<device>/<action>` the node may be sent (never anything else). */
  granted: Set<string>;
}

export interface ActionEntry {
  action: NormalizedAction;
  tool: string | null;
  confirm: boolean;
  optIn: string | null;
}

export interface Device {
  spec: DeviceSpec;
  nodeId: string;
  bridgeId: string | null;
  /** Epoch ms after which a bridged peripheral is offline. */
  expiresAt: number | null;
  lastSeen: number | null;
  actions: Map<string, ActionEntry>;
}

export interface RegistryDeps {
  store: Store;
  tools: ToolRegistry;
  owner: string;
  bus: EventBus<BrainEvent>;
  logger: Logger;
  clock: Clock;
  optIn: Readonly<Record<string, boolean>>;
  genericTools: boolean;
  defaultTransport: (nodeId: string) => TransportKind;
  /** The tool that runs `action` of `deviceId` (built by hardware.ts around the command runner). */
  makeTool: (device: Device, entry: ActionEntry, name: string) => Tool;
  /** Told after a device is removed (its readings are forgotten). */
  removed: (deviceId: string) => void;
}

interface NodeRow {
  node_id: string;
  name: string;
  node_type: string;
  heartbeat_ms: number;
  version: string | null;
  uptime_s: number | null;
  battery_pct: number | null;
  rssi: number | null;
  connected_at: number | null;
  last_seen_at: number | null;
}
interface DeviceRow {
  device_id: string;
  node_id: string;
  manifest: string;
  transport: TransportKind;
  bridge_id: string | null;
  expires_at: number | null;
  last_seen: number | null;
  readings: string;
}

export class DeviceRegistry {
  readonly nodes = new Map<string, NodeState>();
  readonly devices = new Map<string, Device>();
  /** Tool name → device and action. */
  readonly byTool = new Map<string, { deviceId: string; action: string }>();
  private readonly dirtyNodes = new Set<string>();

  constructor(private readonly deps: RegistryDeps) {}

  /** Loads stored nodes and devices (all offline); returns each device's stored readings. */
  load(): Map<string, Record<string, { value: string | number | boolean | null; at: number }>> {
    for (const row of this.deps.store.all<NodeRow>('SELECT * FROM hw_nodes')) {
      this.nodes.set(row.node_id, {
        nodeId: row.node_id,
        name: row.name,
        nodeType: row.node_type,
        heartbeatMs: row.heartbeat_ms,
        version: row.version,
        uptimeS: row.uptime_s,
        batteryPct: row.battery_pct,
        rssi: row.rssi,
        connectedAt: row.connected_at,
        lastSeenAt: row.last_seen_at,
        online: false,
        granted: new Set(),
      });
    }
    const readings = new Map<string, Record<string, { value: string | number | boolean | null; at: number }>>();
    for (const row of this.deps.store.all<DeviceRow>('SELECT * FROM hw_devices')) {
      const spec = specOf(JSON.parse(row.manifest) as DeviceManifest, row.transport);
      this.add({ spec, nodeId: row.node_id, bridgeId: row.bridge_id, expiresAt: row.expires_at, lastSeen: row.last_seen, actions: new Map() });
      readings.set(row.device_id, JSON.parse(row.readings) as Record<string, { value: string | number | boolean | null; at: number }>);
    }
    return readings;
  }

  /** A node_register accepted by the link layer: its devices replace the ones it declared before. */
  registered(node: RegisteredNode): RegistrationDecision {
    const { register, nodeId } = node;
    const state = this.upsertNode(node);
    const denied = new Set<string>(register.capabilities.filter((c) => this.optInOff(c)));
    const declared: DeviceSpec[] = [];
    const seen = new Set<string>();
    for (const manifest of manifestsOf(register)) {
      const spec = specOf(manifest, this.deps.defaultTransport(nodeId));
      if (seen.has(spec.deviceId)) continue;
      seen.add(spec.deviceId);
      const holder = this.devices.get(spec.deviceId);
      if (holder && holder.nodeId !== nodeId && this.nodes.get(holder.nodeId)?.online) {
        this.deps.logger.warn({ node_id: nodeId, device_id: spec.deviceId, holder: holder.nodeId }, 'device id already held by another online node; refused');
        denied.add(`device:${spec.deviceId}`);
        continue;
      }
      declared.push(spec);
    }
    for (const device of [...this.devices.values()]) {
      if (device.nodeId === nodeId && device.bridgeId === null && !seen.has(device.spec.deviceId)) this.remove(device.spec.deviceId, 'no longer registered by its node');
    }
    const actionNames = new Set<string>();
    state.granted.clear();
    for (const spec of declared) this.put(spec, nodeId, null, null);
    for (const device of this.devices.values()) {
      if (device.nodeId !== nodeId) continue;
      for (const entry of device.actions.values()) {
        if (entry.optIn && this.optInOff(entry.optIn)) {
          denied.add(entry.action.name);
          continue;
        }
        state.granted.add(`${device.spec.deviceId}/${entry.action.name}`);
        actionNames.add(entry.action.name);
      }
    }
    this.deps.bus.emit({ type: 'node_online', nodeId, at: node.connectedAt });
    return { granted: register.capabilities.filter((c) => !denied.has(c)), denied: [...denied], actionNames: [...actionNames] };
  }

  /** A phone's peripheral_bridge_register: its peripherals replace the bridge's previous set. */
  bridge(nodeId: string, bridgeId: string, specs: readonly DeviceSpec[], expiresAt: number | null): string[] {
    const state = this.nodes.get(nodeId);
    if (!state) return [];
    const ids = new Set(specs.map((s) => s.deviceId));
    for (const device of [...this.devices.values()]) {
      if (device.nodeId === nodeId && device.bridgeId === bridgeId && !ids.has(device.spec.deviceId)) this.remove(device.spec.deviceId, 'no longer bridged');
    }
    const accepted: string[] = [];
    for (const spec of specs) {
      const holder = this.devices.get(spec.deviceId);
      if (holder && holder.nodeId !== nodeId && this.nodes.get(holder.nodeId)?.online) {
        this.deps.logger.warn({ node_id: nodeId, device_id: spec.deviceId, holder: holder.nodeId }, 'bridged device id already held by another online node; refused');
        continue;
      }
      const device = this.put(spec, nodeId, bridgeId, expiresAt);
      for (const entry of device.actions.values()) if (!(entry.optIn && this.optInOff(entry.optIn))) state.granted.add(`${spec.deviceId}/${entry.action.name}`);
      accepted.push(spec.deviceId);
    }
    return accepted;
  }

  /** The node's socket is gone; false when the node was not online. */
  offline(nodeId: string): boolean {
    const state = this.nodes.get(nodeId);
    if (!state?.online) return false;
    state.online = false;
    this.dirtyNodes.add(nodeId);
    return true;
  }

  heartbeat(nodeId: string, beat: { battery_pct?: number; rssi?: number; uptime_s?: number }, at: number): void {
    const state = this.nodes.get(nodeId);
    if (!state) return;
    if (beat.battery_pct !== undefined) state.batteryPct = beat.battery_pct;
    if (beat.rssi !== undefined) state.rssi = beat.rssi;
    if (beat.uptime_s !== undefined) state.uptimeS = beat.uptime_s;
    state.lastSeenAt = at;
    this.dirtyNodes.add(nodeId);
  }

  /** A device's liveness: its node has a socket and a bridged peripheral has not expired. */
  online(device: Device, now: number): boolean {
    return (this.nodes.get(device.nodeId)?.online ?? false) && (device.expiresAt === null || now < device.expiresAt);
  }

  /** The device a node's event is about: the one it names (if the node holds it), else the node's only device. */
  deviceOfEvent(nodeId: string, deviceId: string | undefined): Device | undefined {
    if (deviceId !== undefined) {
      const device = this.devices.get(deviceId);
      return device?.nodeId === nodeId ? device : undefined;
    }
    let only: Device | undefined;
    for (const device of this.devices.values()) {
      if (device.nodeId !== nodeId || device.bridgeId !== null) continue;
      if (only) return undefined;
      only = device;
    }
    return only;
  }

  optInOff(capability: string): boolean {
    return OPT_IN_CAPABILITIES.includes(capability) && this.deps.optIn[capability] !== true;
  }

  remove(deviceId: string, reason: string): void {
    const device = this.devices.get(deviceId);
    if (!device) return;
    for (const entry of device.actions.values()) {
      if (entry.tool === null) continue;
      this.deps.tools.unregister(entry.tool);
      this.byTool.delete(entry.tool);
    }
    for (const key of [...(this.nodes.get(device.nodeId)?.granted ?? [])]) if (key.startsWith(`${deviceId}/`)) this.nodes.get(device.nodeId)?.granted.delete(key);
    this.devices.delete(deviceId);
    this.persist((db) => db.run('DELETE FROM hw_devices WHERE device_id = ?', [deviceId]));
    this.deps.removed(deviceId);
    this.deps.bus.emit({ type: 'device_removed', deviceId, nodeId: device.nodeId, reason, at: this.deps.clock.now() });
  }

  /** Writes the heartbeat facts of nodes that changed since the last flush (one transaction). */
  async flush(devicesSeen: Iterable<string>): Promise<void> {
    const nodes = [...this.dirtyNodes].map((id) => this.nodes.get(id)).filter((n): n is NodeState => n !== undefined);
    this.dirtyNodes.clear();
    const seen = [...devicesSeen].map((id) => [this.devices.get(id)?.lastSeen ?? null, id] as const);
    if (nodes.length === 0 && seen.length === 0) return;
    await this.deps.store.write((db) => {
      for (const n of nodes) db.run('UPDATE hw_nodes SET uptime_s = ?, battery_pct = ?, rssi = ?, last_seen_at = ? WHERE node_id = ?', [n.uptimeS, n.batteryPct, n.rssi, n.lastSeenAt, n.nodeId]);
      for (const [at, id] of seen) db.run('UPDATE hw_devices SET last_seen = ? WHERE device_id = ?', [at, id]);
    });
  }

  private upsertNode(node: RegisteredNode): NodeState {
    const { register, nodeId } = node;
    const previous = this.nodes.get(nodeId);
    const state: NodeState = {
      nodeId,
      name: register.name ?? nodeId,
      nodeType: register.node_type,
      heartbeatMs: node.heartbeatMs,
      version: versionOf(register),
      uptimeS: register.uptime_s ?? null,
      batteryPct: previous?.batteryPct ?? null,
      rssi: previous?.rssi ?? null,
      connectedAt: node.connectedAt,
      lastSeenAt: node.connectedAt,
      online: true,
      granted: previous?.granted ?? new Set(),
    };
    this.nodes.set(nodeId, state);
    this.persist((db) =>
      db.run(
        `INSERT INTO hw_nodes (node_id, name, node_type, heartbeat_ms, version, uptime_s, battery_pct, rssi, connected_at, last_seen_at, registered_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (node_id) DO UPDATE SET name = excluded.name, node_type = excluded.node_type, heartbeat_ms = excluded.heartbeat_ms, version = excluded.version,
           uptime_s = excluded.uptime_s, connected_at = excluded.connected_at, last_seen_at = excluded.last_seen_at`,
        [nodeId, state.name, state.nodeType, state.heartbeatMs, state.version, state.uptimeS, state.batteryPct, state.rssi, state.connectedAt, state.lastSeenAt, node.connectedAt],
      ),
    );
    return state;
  }

  /** Adds or updates a device; its tools are rebuilt only when its manifest changed. */
  private put(spec: DeviceSpec, nodeId: string, bridgeId: string | null, expiresAt: number | null): Device {
    const existing = this.devices.get(spec.deviceId);
    const same = existing && existing.nodeId === nodeId && JSON.stringify(existing.spec.manifest) === JSON.stringify(spec.manifest) && existing.spec.transport === spec.transport;
    let device: Device;
    if (existing && same) {
      device = existing;
      device.bridgeId = bridgeId;
      device.expiresAt = expiresAt;
    } else {
      if (existing) this.remove(spec.deviceId, existing.nodeId === nodeId ? 'manifest changed' : `moved to node ${nodeId}`);
      device = this.add({ spec, nodeId, bridgeId, expiresAt, lastSeen: null, actions: new Map() });
      this.deps.bus.emit({ type: 'device_registered', deviceId: spec.deviceId, nodeId, transport: spec.transport, at: this.deps.clock.now() });
    }
    this.persist((db) =>
      db.run(
        `INSERT INTO hw_devices (device_id, node_id, manifest, transport, bridge_id, expires_at, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (device_id) DO UPDATE SET node_id = excluded.node_id, manifest = excluded.manifest, transport = excluded.transport, bridge_id = excluded.bridge_id, expires_at = excluded.expires_at`,
        [spec.deviceId, nodeId, JSON.stringify(spec.manifest), spec.transport, bridgeId, expiresAt, device.lastSeen],
      ),
    );
    return device;
  }

  /** Puts a device in the map with its action entries and tools. */
  private add(device: Device): Device {
    this.devices.set(device.spec.deviceId, device);
    for (const action of device.spec.actions) {
      const entry: ActionEntry = { action, tool: null, confirm: needsConfirmation(action, device.spec.capabilities), optIn: optInOf(action, device.spec.capabilities) };
      device.actions.set(action.name, entry);
      if (!this.deps.genericTools) continue;
      const name = toolName(device.spec.deviceId, action.name);
      if (this.deps.tools.get(name)) {
        this.deps.logger.warn({ device_id: device.spec.deviceId, action: action.name, tool: name }, 'tool name already taken; the action has no tool of its own');
        continue;
      }
      entry.tool = name;
      this.deps.tools.register(this.deps.owner, this.deps.makeTool(device, entry, name));
      this.byTool.set(name, { deviceId: device.spec.deviceId, action: action.name });
    }
    return device;
  }

  private persist(fn: Parameters<Store['write']>[0]): void {
    this.deps.store.write(fn).catch((err: unknown) => this.deps.logger.error({ err }, 'could not store a device change'));
  }
}

const versionOf = (register: NodeRegister): string | null => register.agent_version ?? register.firmware_version ?? null;
