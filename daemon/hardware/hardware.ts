// The device layer of the hardware capability (issue 14; docs/hardware.md): it listens to the link
// layer (NodeHubListener), keeps devices and nodes (device-registry.ts), offers each device action as
// a tool, runs commands (command-runner.ts), keeps telemetry (telemetry-store.ts), answers the agent's
// device directory and serves the HTTP views. hardware-capability.ts wires it to the NodeHub.
import type { Logger } from 'pino';
import type { CapabilityContext, Clock, Migration, RoutePlugin } from '../kernel/capability';
import type { EventBus } from '../kernel/event-bus';
import type { BrainEvent } from '../kernel/events';
import type { Part } from '../kernel/parts';
import type { ClientConnections, DeviceDirectory } from '../kernel/ports';
import type { ToolRegistry } from '../kernel/tool-registry';
import { defineTool, type ToolOutcome } from '../kernel/tool';
import { routes } from '../http/route-kit';
import type { HardwareToolResult, TransportKind } from '../../protocol/node';
import type { ConnectedDevice } from '../../protocol/hardware';
import type { HardwareSettings } from './hardware-settings';
import type { NodeHubListener, NodeLinks } from './links/node-links';
import { CommandStore, COMMAND_MIGRATION } from './commands/command-store';
import { CommandRunner, type ResolvedAction } from './commands/command-runner';
import { DeviceRegistry, DEVICE_MIGRATION, type ActionEntry, type Device } from './devices/device-registry';
import type { DeviceSpec } from './devices/device-manifest';
import { argumentSchema, safetyOf, TOOL_PREFIX, toolDescription, withDefaults } from './devices/device-tools';
import { HardwareDirectory, type Chosen } from './devices/device-directory';
import { connectedDevices, nodeHealth, summary } from './devices/device-views';
import { hardwareRoutes } from './hardware-routes';
import { PendingConfirmations } from './commands/pending-confirmations';
import { TelemetryStore, type HistoryPoint } from './devices/telemetry-store';
import { createListener } from './devices/hardware-listener';

export interface HardwareDeps {
  store: CapabilityContext['store'];
  tools: ToolRegistry;
  owner: string;
  bus: EventBus<BrainEvent>;
  logger: Logger;
  clock: Clock;
  connections: ClientConnections;
  settings: HardwareSettings;
  /** The transport of a device whose manifest names none: `mesh` unless given (the brain-local child: `local`). */
  defaultTransport?: (nodeId: string) => TransportKind;
  /** The verify loop's wait (tests); default setTimeout. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface Hardware {
  migrations: Migration[];
  listener: NodeHubListener;
  devices: DeviceDirectory;
  routes: RoutePlugin[];
  parts: Part[];
  attach(links: NodeLinks): void;
  /** Every device with its capabilities, actions, readings and liveness (what GET /api/devices/connected shows). */
  connected(): ConnectedDevice[];
  /**
   * Runs one action of a device as a command through the same checks, rate limit, verification and
   * record as the generated tools (hand-written device skills bind to devices by capability and call
   * this). `tool` and `turnId` name the caller in the command's record.
   */
  runAction(deviceId: string, action: string, params: Record<string, unknown>, origin: { tool: string | null; turnId: string | null }): Promise<HardwareToolResult>;
  /** A reading's downsampled history (RAM only; telemetry-store.ts), oldest first. */
  history(deviceId: string, reading: string): readonly HistoryPoint[];
  /** Every device's spec: type, capabilities and normalised actions with their params (what the device skills bind by). */
  specs(): DeviceSpec[];
}

/** How often last readings and heartbeat facts are written (one transaction each time). */
export const FLUSH_MS = 1000;

export function createHardware(deps: HardwareDeps): Hardware {
  const { settings, clock, logger } = deps;
  let links: NodeLinks | null = null;
  const commands = new CommandStore(deps.store, clock, logger.child({ part: 'commands' }), settings.commands.keep);
  const telemetry = new TelemetryStore(deps.store, logger, settings.telemetry);
  const pending = new PendingConfirmations(commands);
  const seen = new Set<string>();

  const registry: DeviceRegistry = new DeviceRegistry({
    store: deps.store,
    tools: deps.tools,
    owner: deps.owner,
    bus: deps.bus,
    logger,
    clock,
    optIn: settings.opt_in,
    genericTools: settings.generic_tools,
    defaultTransport: deps.defaultTransport ?? (() => 'mesh'),
    makeTool: (device, entry, name) => deviceTool(device, entry, name),
    removed: (deviceId) => telemetry.forget(deviceId),
  });

  const resolve = (deviceId: string, actionName: string): ResolvedAction | null => {
    const device = registry.devices.get(deviceId);
    const entry = device?.actions.get(actionName);
    if (!device || !entry) return null;
    return {
      deviceId,
      nodeId: device.nodeId,
      action: entry.action,
      actions: device.spec.actions,
      online: registry.online(device, clock.now()),
      granted: registry.nodes.get(device.nodeId)?.granted.has(`${deviceId}/${actionName}`) ?? false,
      optInOff: entry.optIn !== null && registry.optInOff(entry.optIn) ? entry.optIn : null,
      deviceIdInParams: device.bridgeId !== null,
    };
  };

  const runner = new CommandRunner({ commands, links: () => links, resolve, clock, logger, actuatorRatePerMinute: settings.actuator_rate_per_minute, ...(deps.sleep ? { sleep: deps.sleep } : {}) });

  /** Runs an action as a command; a call approvals held continues its waiting command. */
  async function runAction(deviceId: string, actionName: string, params: Record<string, unknown>, origin: { tool: string | null; turnId: string | null; refuse?: string }): Promise<HardwareToolResult> {
    const continues = origin.tool !== null && origin.turnId !== null ? pending.take(origin.tool, origin.turnId, params) : undefined;
    const { result } = await runner.run({ deviceId, action: actionName, params, tool: origin.tool, turnId: origin.turnId, ...(continues ? { continues } : {}), ...(origin.refuse ? { refuse: origin.refuse } : {}) });
    return result;
  }

  function deviceTool(device: Device, entry: ActionEntry, name: string) {
    const deviceId = device.spec.deviceId;
    const actionName = entry.action.name;
    return defineTool({
      spec: { name, description: toolDescription(device.spec.name, deviceId, entry.action, entry.confirm), parameters: argumentSchema(entry.action.params) },
      safety: safetyOf(entry.action, device.spec.capabilities),
      // Offered to the general and home specialists (router/specialists.ts: `hwdev_*`), not to every turn: a house of devices would crowd every prompt.
      run: async (args, ctx): Promise<ToolOutcome> => {
        const params = withDefaults(entry.action.params, (args ?? {}) as Record<string, unknown>);
        const result = await runAction(deviceId, actionName, params, { tool: name, turnId: ctx.turnId });
        return { summary: describe(device.spec.name, actionName, result), data: result, sources: [`device:${deviceId}`] };
      },
    });
  }

  const directory = new HardwareDirectory({
    devices: () => registry.devices.values(),
    find: (id) => registry.devices.get(id),
    summary: (device) => summary(registry, telemetry, device, clock.now()),
    run: (device: Device, chosen: Chosen, refuse, origin) =>
      runAction(device.spec.deviceId, chosen.entry.action.name, withDefaults(chosen.entry.action.params, chosen.params), { tool: origin?.tool ?? null, turnId: origin?.turnId ?? null, ...(refuse ? { refuse } : {}) }),
  });

  deps.bus.on(deps.owner, (event) => {
    if (event.type === 'approval_requested' && event.tool.startsWith(TOOL_PREFIX)) {
      const target = registry.byTool.get(event.tool);
      const device = target && registry.devices.get(target.deviceId);
      const entry = target && device?.actions.get(target.action);
      if (!target || !device || !entry) return;
      const params = withDefaults(entry.action.params, event.args);
      void pending.requested(event, { deviceId: target.deviceId, nodeId: device.nodeId, action: target.action, params });
    } else if (event.type === 'approval_resolved' && event.tool.startsWith(TOOL_PREFIX)) {
      pending.resolved(event).catch((err: unknown) => logger.error({ err, request_id: event.requestId }, 'could not end a command waiting for confirmation'));
    }
  });

  const listener = createListener({ registry, telemetry, bus: deps.bus, connections: deps.connections, logger, settings, seen });

  let flushTimer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    const devicesSeen = [...seen];
    seen.clear();
    flushing = flushing
      .then(() => Promise.all([telemetry.flush(), registry.flush(devicesSeen)]))
      .then(() => undefined)
      .catch((err: unknown) => logger.error({ err }, 'could not store readings'));
    return flushing;
  };

  const part: Part = {
    name: 'hardware-devices',
    start: async () => {
      for (const [deviceId, readings] of registry.load()) telemetry.load(deviceId, readings);
      // Bridged peripherals whose bridge expired while the brain was down (their removal timer died with it).
      for (const device of [...registry.devices.values()]) if (device.expiresAt !== null && device.expiresAt <= clock.now()) registry.remove(device.spec.deviceId, 'bridge expired');
      pending.restore(await commands.recover());
      flushTimer = setInterval(() => void flush(), FLUSH_MS);
      flushTimer.unref();
    },
    stop: async () => {
      clearInterval(flushTimer);
      runner.stop();
      listener.stop();
      await flush();
      for (const name of [...registry.byTool.keys()]) deps.tools.unregister(name);
    },
  };

  return {
    migrations: [DEVICE_MIGRATION, COMMAND_MIGRATION],
    listener,
    devices: directory,
    routes: [
      routes(
        hardwareRoutes({
          devices: () => connectedDevices(registry, telemetry, clock.now()),
          nodes: () => nodeHealth(registry, clock.now()),
          recent: (filter) => commands.recent(filter),
          command: (id) => commands.get(id),
        }),
      ),
    ],
    parts: [part],
    attach: (given) => {
      links = given;
    },
    connected: () => connectedDevices(registry, telemetry, clock.now()),
    runAction: (deviceId, action, params, origin) => {
      const entry = registry.devices.get(deviceId)?.actions.get(action);
      return runAction(deviceId, action, entry ? withDefaults(entry.action.params, params) : params, origin);
    },
    history: (deviceId, reading) => telemetry.history(deviceId, reading),
    specs: () => [...registry.devices.values()].map((d) => d.spec),
  };
}

function describe(deviceName: string, action: string, r: HardwareToolResult): string {
  if (r.success) return `${deviceName} ${action}: done${r.data.verified === true ? ' (verified)' : r.data.verified === false ? ' (not verified)' : ''}.`;
  return `${deviceName} ${action}: ${r.status}: ${r.error ?? 'no reason given'}.`;
}
