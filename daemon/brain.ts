// Assembles a whole brain from a context and a list of capabilities, without touching the process
// (no environment, no signals, no lock: daemon/main.ts owns those), so a test can assemble a real
// brain in-process. The core — store, vault, metrics, memory, providers, identity files, agent — is
// wired here explicitly and typed; everything else is a capability of the list (kernel/capability.ts),
// created in order after the core. docs/architecture.md describes the layers and the data flow.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { SettingsSchema, type Settings } from './config/settings-schema';
import type { Lifecycle } from './lifecycle/lifecycle';
import { buildApp } from './app';
import { EventBus } from './kernel/event-bus';
import type { BrainEvent } from './kernel/events';
import type { Capability, CapabilityContext, CapabilityDefinition, CapabilityVerifier, Clock, CorePorts, RoutePlugin } from './kernel/capability';
import type { Part } from './kernel/parts';
import { DeviceSlot, MemoryJournalSlot, PairingSlot, type DeviceDirectory, type MemoryJournal, type PairingClaims } from './kernel/ports';
import { apiTokenVerifier } from './auth/api-token';
import { LateCredentialCheck } from './auth/credential-check';
import { ToolRegistry } from './kernel/tool-registry';
import { PermissionPlane } from './kernel/permissions';
import { SqliteStore } from './store/sqlite-store';
import { createMetrics, type Metrics } from './metrics/metrics';
import { Vault } from './vault/vault';
import { vaultMetrics } from './vault/vault-metrics';
import { createMemory } from './memory/create-memory';
import { llmSummariser } from './memory/llm-summariser';
import { memoryTools } from './memory/memory-tools';
import { DeferredSessionPort } from './memory/session-port';
import { memoryRoutes } from './http/memory-routes';
import { createProviderChain } from './providers/create-provider-chain';
import { LocalProvider } from './providers/local/local-provider';
import { providerRoutes } from './http/provider-routes';
import { Agent } from './agent/agent';
import { vaultSecrets, type SecretScrubber } from './agent/tools/secret-scrubber';
import { IdentityFiles } from './identity/identity-files';
import { sessionRoutes } from './ws/session-routes';
import { ConnectionRegistry } from './ws/connection-registry';
import { dashboardRoutes } from './http/dashboard-routes';
import { HttpListener } from './http/listener';
import { AuditLog } from './audit/audit-log';
import { auditRoutes } from './audit/audit-routes';

export interface BrainContext {
  home: string;
  /** Validated, defaulted and deep-frozen; capability sections are read by name (settings.json). */
  settings: Settings & Readonly<Record<string, unknown>>;
  logger: Logger;
  version: string;
  lifecycle: Lifecycle;
  apiToken: string;
  vaultKey: Buffer;
  /** The log's scrubber: it learns the vault's secrets once the vault is open. */
  scrubber: SecretScrubber;
  clock?: Clock;
}

/** The HTTP/WebSocket server buildApp made (fastify stays behind http/ and app.ts). */
export type BrainApp = Awaited<ReturnType<typeof buildApp>>;

export interface Brain {
  app: BrainApp;
  /** Start in order, stop in reverse: store, memory parts, agent, capability parts, http. */
  parts: Part[];
  agent: Agent;
  tools: ToolRegistry;
  bus: EventBus<BrainEvent>;
  metrics: Metrics;
  vault: Vault;
  /** The names of the capabilities created, in order. */
  capabilities: string[];
  /** Where the brain listens (the access capability moves it: docs/access.md). */
  listener: HttpListener;
}

/** The brain could not listen where it was told to (port in use, address not available). */
export class ListenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ListenError';
  }
}

export async function assembleBrain(context: BrainContext, capabilities: readonly CapabilityDefinition[]): Promise<Brain> {
  const { home, settings, logger, lifecycle } = context;
  const clock = context.clock ?? { now: Date.now };
  // Each part declares the metrics it emits; those of capabilities not built yet wait in one place.
  const metrics = createMetrics(settings.metrics.endpoint);
  const store = new SqliteStore(join(home, 'brain.db'), { synchronous: settings.storage.synchronous, groupCommit: settings.storage.group_commit, logger: logger.child({ part: 'store' }) });
  const parts: Part[] = [{ name: 'store', stop: () => store.close() }];

  const vault = new Vault({ file: join(home, 'vault.json'), key: context.vaultKey, onDecryptError: vaultMetrics(metrics.registry).decryptError });
  const vaultStatus = vault.open();
  if (vaultStatus.state === 'locked') logger.error({ reason: vaultStatus.reason }, 'vault is locked; secrets are unavailable until the right key is provided');
  const secrets = vaultSecrets(vault, [context.apiToken]);
  context.scrubber.use(secrets);

  const audit = new AuditLog(store, () => clock.now());
  const bus = EventBus.logged<BrainEvent>(logger, 'brain event');
  const tools = new ToolRegistry();
  const devices = new DeviceSlot();
  const credentials = new LateCredentialCheck();
  const pairingClaims = new PairingSlot();
  const permissions = new PermissionPlane();
  const embeddingKey = settings.memory.embeddings.api_key;
  const sessionPort = new DeferredSessionPort();
  const local = new LocalProvider();
  const journal = new MemoryJournalSlot();
  const memory = createMemory({
    journal,
    sessions: sessionPort,
    cannedReplies: local.cannedReplies(),
    store,
    settings: settings.memory,
    logger: logger.child({ part: 'memory' }),
    embeddingApiKey: embeddingKey && vaultStatus.state === 'ok' ? vault.get('providers', embeddingKey) : undefined,
  });
  parts.push(...memory.parts);
  memory.events.on('brain-bus', (change) => bus.emit({ type: 'memory_changed', ...change }));
  const identity = new IdentityFiles(home);
  const created = identity.start();
  if (created.length > 0) logger.info({ created }, 'created identity files from templates; edit them or run `svc setup`');
  // The failover chain (docs/providers.md): providers.chain is the Provider the turn loop streams from.
  const scrub = (text: string): string => context.scrubber.scrub(text);
  const providers = createProviderChain({ settings: settings.providers, vault, store, metrics: metrics.registry, logger, local, reloadVault: () => vault.open().state, scrub });
  // Episodes are summarised by the model once there is one (extractive when it fails, is busy or is the local agent).
  memory.memory.useSummariser(llmSummariser({ provider: providers.chain }));
  const agent = new Agent({
    provider: providers.chain,
    memory: memory.memory,
    identity,
    devices,
    store,
    metrics: metrics.registry,
    logger: logger.child({ part: 'agent' }),
    settings: settings.agent,
    brain: { version: context.version, uptimeSeconds: () => lifecycle.uptimeSeconds(), stopping: () => lifecycle.stopping },
    secrets,
    tools,
    permissions,
    bus,
    workingLimits: { maxItems: settings.memory.working.max_items, maxBytes: settings.memory.working.max_bytes },
  });
  agent.events.on('brain-bus', (event) => bus.emit(event));
  if (agent.memory) for (const tool of memoryTools(agent.memory)) tools.register('memory', tool);
  sessionPort.attach(agent.sessions);
  // Listed before http: stop runs in reverse, so sockets close first, then sessions end and write their episodes.
  parts.push({ name: 'agent', start: () => agent.start(), stop: () => agent.stop() });

  // server.host left at its default lets the access capability choose where to listen; any other
  // value (settings, SVC_HOST, --host) pins the listener there (docs/access.md).
  const pinned = settings.server.host === SettingsSchema.properties.server.properties.host.default ? null : settings.server.host;
  const listener = new HttpListener({ hosts: [settings.server.host], port: settings.server.port, pinnedHost: pinned, logger: logger.child({ part: 'listener' }) });
  const connections = new ConnectionRegistry(agent.sessions);
  const core: CorePorts = { memory: agent.memory, memoryReplica: memory.memory, relevanceFloor: settings.memory.search.relevance_floor, identity, devices, conversations: agent, connections, credentials: credentials.check, pairing: pairingClaims, secrets: context.scrubber, audit };
  const contributed = await createCapabilities(capabilities, { home, store, vault, bus, logger, metrics: metrics.registry, clock, tools, permissions, core, listener }, settings);
  parts.push(...contributed.parts);
  if (contributed.devices) devices.use(contributed.devices);
  if (contributed.memoryJournal) journal.use(contributed.memoryJournal);
  if (contributed.pairingClaims) pairingClaims.use(contributed.pairingClaims);
  credentials.bind([apiTokenVerifier(context.apiToken), ...contributed.verifiers]);

  const ws = settings.agent.websocket;
  const app = await buildApp({
    logger,
    version: context.version,
    apiToken: context.apiToken,
    verifiers: contributed.verifiers,
    metrics,
    metricsPublic: settings.metrics.public,
    lifecycle,
    bodyLimit: settings.server.body_limit_bytes,
    timeouts: { requestMs: settings.server.request_timeout_ms, headersMs: Math.min(settings.server.headers_timeout_ms, settings.server.request_timeout_ms) },
    routes: [memoryRoutes(memory), providerRoutes({ keys: providers.keys, models: providers.models, scrubber: context.scrubber }), dashboardRoutes({ agent, identity }), ...routePlugins([auditRoutes(audit)]), ...routePlugins(contributed.routes)],
    // Paired phones and browsers (device principals, docs/pairing.md) open sessions too.
    sockets: [
      sessionRoutes({ sessions: agent.sessions, logger: logger.child({ part: 'ws' }), options: { heartbeatMs: ws.heartbeat_ms, maxBufferedBytes: ws.max_buffered_bytes }, principals: ['admin', 'device'], registry: connections }),
      ...routePlugins(contributed.sockets),
    ],
  });
  listener.attach(app.server, app.websocketServer);
  parts.push(httpPart(app, listener, settings, logger));
  return { app, parts, agent, tools, bus, metrics, vault, capabilities: contributed.names, listener };
}

interface Contributed {
  names: string[];
  parts: Part[];
  routes: RoutePlugin[];
  sockets: RoutePlugin[];
  verifiers: CapabilityVerifier[];
  devices: DeviceDirectory | null;
  memoryJournal: MemoryJournal | null;
  pairingClaims: PairingClaims | null;
}

/** Creates each capability in list order with its own settings section and a context named after it. */
async function createCapabilities(definitions: readonly CapabilityDefinition[], base: CapabilityContext, settings: Readonly<Record<string, unknown>>): Promise<Contributed> {
  const out: Contributed = { names: [], parts: [], routes: [], sockets: [], verifiers: [], devices: null, memoryJournal: null, pairingClaims: null };
  for (const definition of definitions) {
    const { name } = definition;
    if (out.names.includes(name)) throw new Error(`capability ${name} is listed twice`);
    const context: CapabilityContext = { ...base, logger: base.logger.child({ capability: name }) };
    const section = (settings[name] ?? {}) as Record<string, unknown>;
    const capability: Capability = await definition.create(context, section);
    if (capability.migrations?.length) base.store.migrate(name, capability.migrations);
    for (const tool of capability.tools ?? []) base.tools.register(name, tool);
    // Named after their capability; bound, so a part that is a class instance keeps its `this`.
    out.parts.push(...(capability.parts ?? []).map((part): Part => ({ name: `${name}:${part.name}`, start: () => part.start?.(), stop: () => part.stop?.() })));
    out.routes.push(...(capability.routes ?? []));
    out.sockets.push(...(capability.sockets ?? []));
    out.verifiers.push(...(capability.verifiers ?? []));
    if (capability.devices) {
      if (out.devices) throw new Error(`capability ${name} gives the device directory, which another capability already gives`);
      out.devices = capability.devices;
    }
    if (capability.memoryJournal) {
      if (out.memoryJournal) throw new Error(`capability ${name} gives the memory journal, which another capability already gives`);
      out.memoryJournal = capability.memoryJournal;
    }
    if (capability.pairingClaims) {
      if (out.pairingClaims) throw new Error(`capability ${name} gives pairing claims, which another capability already gives`);
      out.pairingClaims = capability.pairingClaims;
    }
    out.names.push(name);
  }
  return out;
}

/** The kernel declares route plugins opaquely (it does not import fastify); here they meet buildApp. */
const routePlugins = (plugins: readonly RoutePlugin[]): NonNullable<Parameters<typeof buildApp>[0]['routes']> =>
  plugins as unknown as NonNullable<Parameters<typeof buildApp>[0]['routes']>;

function httpPart(app: BrainApp, listener: HttpListener, settings: Settings, logger: Logger): Part {
  return {
    name: 'http',
    start: async () => {
      await app.ready();
      try {
        await listener.start();
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
          // The address that failed: with the access mode the brain binds more than server.host (::1 next to 127.0.0.1).
          const { address = settings.server.host, port = settings.server.port } = err as NodeJS.ErrnoException & { address?: string; port?: number };
          throw new ListenError(`cannot listen on ${address.includes(':') ? `[${address}]` : address}:${port}: ${code} (set --port, SVC_PORT or server.port)`);
        }
        throw err;
      }
    },
    stop: async () => {
      // Clients hear "going away" (1001) before the listener closes (spec: WebSockets told).
      for (const client of app.websocketServer.clients) client.close(1001, 'brain shutting down');
      await listener.stop();
      await app.close();
      logger.debug('http closed');
    },
  };
}
