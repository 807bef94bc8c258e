// The hardware capability (issue 14; spec 1.7, 3.4, 4.6, 4.13; node-protocol.md; docs/hardware.md):
// the /v1/node link layer (node-hub.ts) and the device layer (hardware.ts: devices, generated tools,
// commands, telemetry, routes), joined through the seam of node-links.ts. A revoked node key closes
// that node's link at once; a phone peer's chat_request is a turn through the conversation port.
import { defineCapability } from '../kernel/capability';
import { NodeCloseCode } from '../../protocol/node';
import { HardwareSettings } from './hardware-settings';
import { NodeHub } from './links/node-hub';
import { createHardware } from './hardware';
import { answerChat } from './links/node-chat';
import { PROACTIVE_COMPONENT, PROACTIVE_MIGRATIONS, ProactiveAlerts } from './alerts/proactive';
import { proactiveRoutes } from './alerts/proactive-routes';
import { routes } from '../http/route-kit';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { LOCAL_NODE_ID, LocalAgentKey, LocalAgentSupervisor } from './local-agent';
import { DeviceSkills } from './skills/device-skills';

export const HARDWARE = 'hardware';

export const hardwareCapability = defineCapability({
  name: HARDWARE,
  settings: HardwareSettings,
  create: (context, settings) => {
    const hardware = createHardware({
      store: context.store,
      tools: context.tools,
      owner: HARDWARE,
      bus: context.bus,
      logger: context.logger,
      clock: context.clock,
      connections: context.core.connections,
      settings,
      defaultTransport: (nodeId) => (nodeId === LOCAL_NODE_ID ? 'local' : 'mesh'),
    });
    // settings generic_tools false (SVC_GENERIC_HARDWARE_SKILLS=0): the hand-written device skills instead of generated tools.
    const skills = new DeviceSkills({ hardware, tools: context.tools, owner: HARDWARE, bus: context.bus, clock: context.clock, logger: context.logger, genericTools: settings.generic_tools });
    // Proactive alerts keep tables of their own, migrated here as a component of their own.
    context.store.migrate(PROACTIVE_COMPONENT, PROACTIVE_MIGRATIONS);
    const alerts = new ProactiveAlerts({ store: context.store, clock: context.clock, bus: context.bus, connections: context.core.connections, logger: context.logger, settings: settings.alerts });
    const chats = new AbortController();
    const hub = new NodeHub({
      listener: {
        registered: (node) => hardware.listener.registered(node),
        heartbeat: (nodeId, beat, at) => {
          hardware.listener.heartbeat(nodeId, beat, at);
          if (beat.battery_pct !== undefined) alerts.battery(nodeId, beat.battery_pct);
        },
        deviceEvent: (nodeId, event, at) => hardware.listener.deviceEvent(nodeId, event, at),
        bridgeRegistered: (nodeId, bridge, at) => hardware.listener.bridgeRegistered(nodeId, bridge, at),
        disconnected: (nodeId, reason, at, superseded) => hardware.listener.disconnected(nodeId, reason, at, superseded),
        chatRequest: (nodeId, request, reply) => void answerChat(context.core.conversations, context.logger, chats.signal, nodeId, request, reply),
      },
      credentials: context.core.credentials,
      logger: context.logger,
      clock: context.clock,
      heartbeatMs: settings.heartbeat_ms,
      floodLimit: { frames: settings.flood.frames, perMs: settings.flood.per_ms },
    });
    hardware.attach(hub);
    // The brain-local transport: a node-agent child for this board's own serial/BLE devices.
    const localKey = settings.local_agent.enabled ? new LocalAgentKey() : null;
    const local = localKey
      ? new LocalAgentSupervisor({
          script: fileURLToPath(new URL('./node-agent.mjs', import.meta.url)),
          config: settings.local_agent.config ?? join(context.home, 'node-agent.json'),
          key: localKey,
          logger: context.logger.child({ part: 'local-agent' }),
        })
      : null;
    if (local) context.listener.onListening((addresses) => local.listening(addresses));
    context.bus.on(HARDWARE, (event) => {
      switch (event.type) {
        case 'device_revoked':
          if (event.nodeId !== null) hub.disconnect(event.nodeId, NodeCloseCode.unauthorized, 'node key revoked');
          return;
        // The device layer's own events feed the proactive alerts (readings with the device id it resolved).
        case 'device_telemetry':
          return alerts.readings(event.deviceId, event.nodeId, event.readings);
        case 'node_online':
          return alerts.nodeUp(event.nodeId);
        case 'node_offline':
          return alerts.nodeDown(event.nodeId);
        default:
          return;
      }
    });
    return {
      migrations: hardware.migrations,
      parts: [
        ...hardware.parts,
        skills.part(),
        { name: 'proactive-alerts', start: () => alerts.start(), stop: () => alerts.stop() },
        {
          name: 'node-links',
          stop: async () => {
            await local?.stop();
            chats.abort();
            await hub.stop();
          },
        },
      ],
      routes: [...hardware.routes, routes(proactiveRoutes(alerts))],
      sockets: [hub.socketRoute()],
      devices: hardware.devices,
      verifiers: localKey ? [localKey] : [],
    };
  },
});
