// The capability contract (in the style of zigbee2mqtt's extension list): everything the brain can do
// beyond its core is a capability — a folder with a definition that names its settings section and a
// factory that, given the kernel's context and its own settings, returns what it contributes. The
// brain (daemon/brain.ts) creates every capability of the list in daemon/capabilities.ts, in order:
// it runs their migrations, registers their tools under their name, mounts their routes and sockets,
// and starts their parts after the core's (stopping them first). docs/architecture.md has a worked example.
import type { Static, TObject } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { Db, Migration, Store } from '../store/store';
import type { EventBus } from './event-bus';
import type { BrainEvent } from './events';
import type { BrainMessage } from '../../protocol/session';
import type { MetricsRegistry } from './metrics';
import type { Part } from './parts';
import type { ListenerPort } from './listener';
import type { PermissionPlane } from './permissions';
import type { AgentMemory, AuditTrail, ClientConnections, DeviceDirectory, IdentityDocuments, MemoryJournal, MemoryReplicaPort, PairingClaims } from './ports';
import type { Tool } from './tool';
import type { ToolRegistry } from './tool-registry';

export type { Db, Migration, Store };

/** Secrets by namespace (the vault, spec 5.4): never logged, never given to the model. */
export interface SecretStore {
  get(namespace: string, key: string): string | undefined;
  set(namespace: string, key: string, value: string): void;
  delete(namespace: string, key: string): boolean;
  keys(namespace: string): string[];
  /** Namespaces holding secrets (throws while locked): what must be kept from child processes. */
  namespaces(): string[];
  status(): { state: string };
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

/** What the core offers every capability: narrow ports, never the concrete services. */
export interface CorePorts {
  memory: AgentMemory | null;
  /** Applies changes journaled on another brain to this one's notes, episodes and facts (the sync capability). */
  memoryReplica: MemoryReplicaPort;
  /** The share of a question an item must answer to count as evidence (settings memory.search.relevance_floor). */
  relevanceFloor: number;
  identity: IdentityDocuments;
  devices: DeviceDirectory;
  conversations: ConversationPort;
  /** The open client WebSockets and who holds them (revoking a device closes its sockets). */
  connections: ClientConnections;
  /**
   * Whose a credential is, asked of every verifier the brain holds (the API token first): for sockets
   * that must answer a refused credential in their own protocol instead of HTTP 401 (/v1/node's close
   * 4001). Bound once every capability is created; asking earlier throws.
   */
  credentials: CredentialCheck;
  /** Claims and revokes pairing tokens (the pairing capability gives them; refused until it does). */
  pairing: PairingClaims;
  /** Removes every encoding of every vault secret (the tool runner's and the log's scrubber): for tool results a capability hands out itself. */
  secrets: SecretRedactor;
  /** The audit log: record a decision that weakens a safeguard (an unsigned install) before acting on it. */
  audit: AuditTrail;
}

/** What the brain's secret scrubber offers a capability (daemon/agent/tools/secret-scrubber.ts). */
export interface SecretRedactor {
  scrub(text: string): string;
  scrubValue<T>(value: T): T;
}

/** Looks up one presented bearer credential; undefined when no verifier knows it. */
export interface CredentialCheck {
  verify(token: string): { readonly kind: 'admin' } | CredentialPrincipal | undefined;
}

/**
 * Agent turns a capability asks for (a TaskFlow's prompt step): in the session `sessionId` when it is
 * open, so its clients see the turn, else in a session of its own that ends after the turn (its
 * episode is written). `tools: false` offers the model no tool at all.
 */
export interface ConversationPort {
  prompt(request: { sessionId: string; text: string; tools: boolean; signal: AbortSignal }): Promise<{ text: string; finishReason: string; sessionId: string }>;
  /** Sends a capability's own frame (a taskflow_update) to the clients of `sessionId`; false when that session is not open here. */
  tell(sessionId: string, frame: BrainMessage): boolean;
}

export interface CapabilityContext {
  readonly home: string;
  readonly store: Store;
  readonly vault: SecretStore;
  readonly bus: EventBus<BrainEvent>;
  /** A child logger named after the capability. */
  readonly logger: Logger;
  readonly metrics: MetricsRegistry;
  readonly clock: Clock;
  /** The agent's tools; a capability may add and remove its own at run time (owner: its name). */
  readonly tools: ToolRegistry;
  /** Every tool call's permission check; the approvals capability installs its hook here. */
  readonly permissions: PermissionPlane;
  readonly core: CorePorts;
  /** Where the brain listens; the access capability moves it (kernel/listener.ts). */
  readonly listener: ListenerPort;
}

/**
 * A route plugin, mounted by the brain's HTTP layer. Declared opaquely here (the kernel does not import
 * fastify): capabilities write theirs with daemon/http/route-kit.ts, which gives it its real type.
 */
export interface RoutePlugin {
  (app: never, options: never): Promise<void>;
}

/**
 * Who a credential a capability issued belongs to: the same shapes as daemon/auth/principal.ts (the
 * brain hands these verifiers to its authentication, which checks that they fit).
 */
export type CredentialPrincipal =
  | { readonly kind: 'device'; readonly id: string; readonly deviceKind: 'phone' | 'browser'; readonly scopes: readonly string[] }
  | { readonly kind: 'node'; readonly id: string }
  | { readonly kind: 'peer'; readonly id: string };

/**
 * A credential store a capability contributes (daemon/auth/authenticate.ts CredentialVerifier): asked
 * after the API token, in the first hook of every authenticated request — synchronous, cheap, and
 * looking credentials up by a hash so its timing says nothing about which exist.
 */
export interface CapabilityVerifier {
  verify(credential: { readonly scheme: 'bearer'; readonly token: string }): CredentialPrincipal | undefined;
}

/** What a created capability contributes; every field is optional. */
export interface Capability {
  /** Store migrations of the capability's own tables (component: its name). */
  readonly migrations?: readonly Migration[];
  /** Long-lived parts: started after the core in list order, stopped before it in reverse. */
  readonly parts?: readonly Part[];
  readonly routes?: readonly RoutePlugin[];
  /** WebSocket routes (`{ websocket: true }`). */
  readonly sockets?: readonly RoutePlugin[];
  /** Tools registered under the capability's name. */
  readonly tools?: readonly Tool[];
  /** Credentials the capability issues (paired devices, node keys, peer brains). */
  readonly verifiers?: readonly CapabilityVerifier[];
  /** The connected devices, when this capability drives them (core.devices and the agent's device tools read them). At most one capability gives it. */
  readonly devices?: DeviceDirectory;
  /** Records every change of the synced memory tiers in the change's own transaction (daemon/memory/memory-journal.ts). At most one capability gives it. */
  readonly memoryJournal?: MemoryJournal;
  /** Pairing tokens for other capabilities to claim (core.pairing). At most one capability gives them. */
  readonly pairingClaims?: PairingClaims;
}

/** One settings migration: raises settings.json from `version - 1` to `version` (before validation). */
export interface SettingsMigration {
  readonly version: number;
  readonly description: string;
  up(settings: Record<string, unknown>): Record<string, unknown>;
}

export interface CapabilityDefinition<S extends TObject = TObject> {
  /** lower-kebab-case: the settings key, the tools' owner, the migrations' component, the logger's name. */
  readonly name: string;
  /** The capability's section of settings.json (defaults in the schema), absent when it has none. */
  readonly settings?: S;
  readonly settingsMigrations?: readonly SettingsMigration[];
  create(context: CapabilityContext, settings: Static<S>): Capability | Promise<Capability>;
}

/** Declares a capability with its settings type inferred from the schema. */
export const defineCapability = <S extends TObject>(definition: CapabilityDefinition<S>): CapabilityDefinition => definition;
