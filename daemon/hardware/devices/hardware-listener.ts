// What the device layer does with each thing the link layer tells it (node-links.ts NodeHubListener;
// docs/hardware.md "Telemetry", "Phone bridges"). device_event is the hot path (50 nodes × 10 Hz): it
// runs no SQL (last values and last-seen times are written by the one-second flush of hardware.ts)
// and compiles nothing.
//
// - Readings are timed by the brain's clock when the event arrives, not by the node's `ts` (a node's
//   clock may be wrong; readings of different nodes stay comparable).
// - camera/microphone events (event types camera*, video_frame, audio_frame, microphone*) are dropped
//   while that opt-in tier is off.
// - An event for a device the node does not hold (or without device_id from a node with several
//   devices) is dropped; the first of each kind per node is logged.
// - Telemetry frames to /v1/session clients carry `at` in epoch seconds (as the envelopes' `ts`).
// - Phone bridges: `expires_at` (epoch seconds; a value above 1e11 is taken as ms) makes the
//   peripherals offline then, and removes them three heartbeat intervals later.
// - chat_request is answered by hardware-capability.ts through the conversation port; this listener's
//   own answer (when it is used alone) says that chat is not available.
import type { Logger } from 'pino';
import type { EventBus } from '../../kernel/event-bus';
import type { BrainEvent } from '../../kernel/events';
import type { ClientConnections } from '../../kernel/ports';
import type { DeviceEvent, NodeHeartbeat, PeripheralBridgeRegister } from '../../../protocol/node';
import type { HardwareSettings } from '../hardware-settings';
import type { NodeHubListener, RegisteredNode, RegistrationDecision } from '../links/node-links';
import type { DeviceRegistry } from './device-registry';
import { manifestOfPeripheral, specOf } from './device-manifest';
import { flatten, type TelemetryStore } from './telemetry-store';

export interface ListenerDeps {
  registry: DeviceRegistry;
  telemetry: TelemetryStore;
  bus: EventBus<BrainEvent>;
  connections: ClientConnections;
  logger: Logger;
  settings: HardwareSettings;
  /** Devices that sent an event since the last flush (their last_seen is written then). */
  seen: Set<string>;
}

/** The opt-in capability an event type belongs to, or null. */
export function optInOfEvent(eventType: string): string | null {
  if (eventType.startsWith('camera') || eventType === 'video_frame') return 'camera';
  if (eventType.startsWith('microphone') || eventType === 'audio_frame') return 'microphone';
  return null;
}

export const expiresAtMs = (expiresAt: number): number => (expiresAt > 1e11 ? expiresAt : expiresAt * 1000);

export function createListener(deps: ListenerDeps): NodeHubListener & { stop(): void } {
  const { registry, telemetry, logger, settings } = deps;
  const expiry = new Map<string, NodeJS.Timeout>();
  const unknownLogged = new Set<string>();

  function deviceEvent(nodeId: string, event: DeviceEvent, at: number): void {
    const node = registry.nodes.get(nodeId);
    if (!node?.online) return;
    node.lastSeenAt = at;
    const optIn = optInOfEvent(event.event_type);
    if (optIn !== null && registry.optInOff(optIn)) return;
    const device = registry.deviceOfEvent(nodeId, event.device_id);
    if (!device) {
      const key = `${nodeId}\u0000${event.device_id ?? ''}`;
      if (!unknownLogged.has(key)) {
        unknownLogged.add(key);
        logger.info({ node_id: nodeId, device_id: event.device_id ?? null, event_type: event.event_type }, 'device_event for a device the node does not hold; dropped');
      }
      return;
    }
    const deviceId = device.spec.deviceId;
    device.lastSeen = at;
    deps.seen.add(deviceId);
    const readings = telemetry.record(deviceId, flatten(event.data), at);
    if (settings.telemetry.stream_to_sessions) deps.connections.broadcast({ type: 'telemetry', session_id: '', payload: { source: deviceId, readings, at: at / 1000 } });
    deps.bus.emit({ type: 'device_telemetry', deviceId, nodeId, eventType: event.event_type, readings, at });
  }

  function bridgeRegistered(nodeId: string, bridge: PeripheralBridgeRegister, at: number): void {
    const expiresAt = bridge.expires_at === undefined ? null : expiresAtMs(bridge.expires_at);
    const specs = bridge.devices.map((p) => specOf(manifestOfPeripheral(p), 'phone_ble'));
    const accepted = registry.bridge(nodeId, bridge.bridge_id, specs, expiresAt);
    logger.info({ node_id: nodeId, bridge_id: bridge.bridge_id, devices: accepted }, 'peripheral bridge registered');
    const key = `${nodeId}\u0000${bridge.bridge_id}`;
    clearTimeout(expiry.get(key));
    expiry.delete(key);
    if (expiresAt === null) return;
    const grace = 3 * (registry.nodes.get(nodeId)?.heartbeatMs ?? settings.heartbeat_ms);
    const timer = setTimeout(() => {
      expiry.delete(key);
      for (const device of [...registry.devices.values()]) {
        if (device.nodeId === nodeId && device.bridgeId === bridge.bridge_id && device.expiresAt === expiresAt) registry.remove(device.spec.deviceId, 'bridge expired');
      }
    }, Math.max(0, expiresAt - at) + grace);
    timer.unref();
    expiry.set(key, timer);
  }

  return {
    registered: (node: RegisteredNode): RegistrationDecision => registry.registered(node),
    heartbeat: (nodeId: string, beat: NodeHeartbeat, at: number) => registry.heartbeat(nodeId, beat, at),
    deviceEvent,
    bridgeRegistered,
    chatRequest: (nodeId, request, reply) => {
      logger.info({ node_id: nodeId, session_id: request.session_id }, 'chat_request without a chat handler');
      reply('chat is not available on this brain', true);
    },
    disconnected: (nodeId: string, reason: string, at: number, superseded: boolean) => {
      if (superseded) return;
      if (registry.offline(nodeId)) deps.bus.emit({ type: 'node_offline', nodeId, reason, at });
    },
    stop: () => {
      for (const timer of expiry.values()) clearTimeout(timer);
      expiry.clear();
    },
  };
}
