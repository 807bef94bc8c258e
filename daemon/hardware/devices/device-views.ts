// What GET /api/devices/connected, GET /api/nodes/health and the agent's device directory show of the
// registry (protocol/hardware.ts; docs/hardware.md "Devices", "Node health").
//
// Freshness of a node: `offline` when its socket is gone or its last sign of life (register,
// heartbeat or event) is 3 heartbeat intervals old or more; `fresh` under 1.5 intervals; `stale` between.
import type { DeviceSummary } from '../../kernel/ports';
import type { ConnectedDevice, Freshness, NodeHealthEntry } from '../../../protocol/hardware';
import type { Device, DeviceRegistry, NodeState } from './device-registry';
import type { TelemetryStore } from './telemetry-store';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function freshness(node: NodeState, now: number): Freshness {
  if (!node.online || node.lastSeenAt === null) return 'offline';
  const age = now - node.lastSeenAt;
  if (age >= 3 * node.heartbeatMs) return 'offline';
  return age < 1.5 * node.heartbeatMs ? 'fresh' : 'stale';
}

export function connectedDevice(registry: DeviceRegistry, telemetry: TelemetryStore, device: Device, now: number): ConnectedDevice {
  const node = registry.nodes.get(device.nodeId);
  const readings: ConnectedDevice['readings'] = {};
  for (const [name, r] of telemetry.last(device.spec.deviceId)) readings[name] = { value: r.value, at: new Date(r.at).toISOString() };
  return {
    device_id: device.spec.deviceId,
    name: device.spec.name,
    type: device.spec.type,
    transport: device.spec.transport,
    bus: device.spec.bus,
    node_id: device.nodeId,
    online: registry.online(device, now),
    last_seen: iso(device.lastSeen ?? (node?.online ? node.lastSeenAt : null)),
    readings,
    battery_pct: node?.batteryPct ?? null,
    rssi: node?.rssi ?? null,
    capabilities: device.spec.capabilities,
    actions: [...device.actions.values()].map((e) => ({
      name: e.action.name,
      tool: e.tool,
      category: e.action.category,
      permission_tier: e.action.permission_tier,
      requires_confirmation: e.confirm,
    })),
  };
}

export function connectedDevices(registry: DeviceRegistry, telemetry: TelemetryStore, now: number): ConnectedDevice[] {
  return [...registry.devices.values()].sort((a, b) => a.spec.deviceId.localeCompare(b.spec.deviceId)).map((d) => connectedDevice(registry, telemetry, d, now));
}

export function nodeHealth(registry: DeviceRegistry, now: number): NodeHealthEntry[] {
  const counts = new Map<string, number>();
  for (const d of registry.devices.values()) counts.set(d.nodeId, (counts.get(d.nodeId) ?? 0) + 1);
  return [...registry.nodes.values()]
    .sort((a, b) => a.nodeId.localeCompare(b.nodeId))
    .map((n) => ({
      node_id: n.nodeId,
      name: n.name,
      node_type: n.nodeType,
      online: n.online,
      freshness: freshness(n, now),
      heartbeat_age_s: n.lastSeenAt === null ? null : Math.max(0, now - n.lastSeenAt) / 1000,
      last_heartbeat_at: iso(n.lastSeenAt),
      heartbeat_ms: n.heartbeatMs,
      version: n.version,
      uptime_s: n.uptimeS,
      battery_pct: n.batteryPct,
      rssi: n.rssi,
      devices: counts.get(n.nodeId) ?? 0,
      connected_at: iso(n.connectedAt),
    }));
}

export function summary(registry: DeviceRegistry, telemetry: TelemetryStore, device: Device, now: number): DeviceSummary {
  const state: DeviceSummary['state'] = {};
  for (const [name, r] of telemetry.last(device.spec.deviceId)) state[name] = r.value;
  return { id: device.spec.deviceId, name: device.spec.name, kind: device.spec.type, online: registry.online(device, now), state };
}
