// The events on the brain's bus: one vocabulary, so a capability can listen to another without
// importing it. The agent and memory announce on buses of their own (instances of the same EventBus);
// the brain forwards both onto the one bus capabilities listen to (daemon/brain.ts).
import type { SafetyLevel, SpecialistName } from '../../protocol/session';
import type { Tier } from '../../protocol/memory';
import type { FlowStatus, StepStatus } from '../../protocol/taskflows';
import type { ProactiveAlert } from '../../protocol/hardware';

export type AgentEvent =
  | { type: 'session_opened'; sessionId: string; at: number }
  | { type: 'session_closed'; sessionId: string; reason: string; episodeId: string | null; at: number }
  | { type: 'turn_finished'; sessionId: string; turnId: string; text: string; answer: string; specialist: SpecialistName; finishReason: string; at: number }
  | { type: 'tool_denied'; sessionId: string; turnId: string; tool: string; reason: string; at: number }
  /** Facts a turn stated, stored in the knowledge graph (ids; empty when none was found). */
  | { type: 'knowledge_extracted'; sessionId: string; turnId: string; via: 'rules' | 'model'; facts: string[]; at: number };

export interface MemoryChange {
  /** `annotate`: only metadata changed (a fact's confidence), not the text: nothing to re-embed. */
  kind: 'upsert' | 'annotate' | 'delete';
  tier: Tier;
  id: string;
  /** The searchable text of the item after the change (absent on delete). */
  text?: string;
  /**
   * The brain's memory revision of the change (daemon/memory/memory-journal.ts): for a local change,
   * the revision its journal entry carries, taken in the change's own transaction, so a listener can
   * tell every local change from the one before and the journal (the op log) already holds it. A change
   * applied from another brain (Memory.applyRemote) is not journaled and takes no revision of its own:
   * it carries the revision the memory was at when it was applied, which is never above the last local
   * change's — so a listener that keeps the greatest revision seen learns of no new local change from it.
   */
  revision: number;
}

/**
 * The approvals capability (spec 2.6, 2.7): a tool call held for a person, and how it ended (with the
 * tool's result when it was approved). `createdAt` is the request's created_at (epoch seconds). A request
 * is a notification of category `approval`, priority high (spec 2.14), for push and channels to deliver.
 */
export type ApprovalEvent =
  | { type: 'approval_requested'; category: 'approval'; priority: 'high'; requestId: string; sessionId: string; turnId: string; tool: string; safety: SafetyLevel; args: Record<string, unknown>; createdAt: number; at: number }
  | { type: 'approval_resolved'; requestId: string; sessionId: string; turnId: string; tool: string; args: Record<string, unknown>; status: 'approved' | 'rejected' | 'expired'; result?: ApprovedToolResult; at: number };

/** What an approved tool call returned (spec 2.7 `result`): told to the originating session and its model. */
export interface ApprovedToolResult {
  status: 'ok' | 'error';
  summary: string;
  /** The tool's structured result, for the model's continuation (capped and scrubbed like any tool result). */
  data?: unknown;
}

/**
 * A TaskFlow changed (docs/taskflows.md): announced after the change is durable, for other capabilities
 * (the engine also tells the flow's session's clients, through the conversation port); `step` is the step
 * that changed, if one did.
 */
export interface TaskflowEvent {
  type: 'taskflow_update';
  flowId: string;
  sessionId: string;
  title: string;
  status: FlowStatus;
  currentStep: number | null;
  step?: { index: number; type: string; status: StepStatus; error: string | null };
  reason: string;
  at: number;
}

/** Who can reach the brain (docs/access.md): loopback only, the LAN, or a private-network tunnel. */
export type AccessMode = 'localhost' | 'lan' | 'remote';

/**
 * The access mode, announced by the access capability at start and on every change (after the listener
 * has been rebound). `urls` are the base URLs another device can use (`http://192.168.1.20:8765`, the
 * tunnel's `https://host.tailnet.ts.net` when remote); empty in localhost mode.
 */
export interface AccessModeEvent {
  type: 'access_mode';
  mode: AccessMode;
  urls: string[];
  at: number;
}

/**
 * The mesh capability (docs/mesh.md) announced the brain over mDNS: `host` is the `<name>.local` its
 * services point at (the pair URL lists it), `port` the port they name. `mdns_withdrawn` follows when
 * it stops advertising (back to localhost mode, mesh.advertise off, shutdown).
 */
export type MdnsEvent = { type: 'mdns_advertised'; host: string; port: number; at: number } | { type: 'mdns_withdrawn'; at: number };

/** A paired device's key was revoked (docs/pairing.md "Revoke"): whoever holds a socket of it closes it (a node's /v1/node link: 4001). */
export interface DeviceRevokedEvent {
  type: 'device_revoked';
  kind: 'node' | 'phone' | 'browser' | 'brain';
  deviceId: string;
  /** A node's node_id (what its /v1/node link registered as); null for other kinds. */
  nodeId: string | null;
  at: number;
}

/**
 * The hardware capability (docs/hardware.md): a device came or went (its node registered it, or
 * registered again without it), a node's socket registered or went away, and each batch of readings a
 * device_event carried (flattened scalars, `at` epoch ms) — what proactive alerts listen to.
 */
export type HardwareEvent =
  | { type: 'device_registered'; deviceId: string; nodeId: string; transport: string; at: number }
  | { type: 'device_removed'; deviceId: string; nodeId: string; reason: string; at: number }
  | { type: 'node_online'; nodeId: string; at: number }
  | { type: 'node_offline'; nodeId: string; reason: string; at: number }
  | { type: 'device_telemetry'; deviceId: string; nodeId: string; eventType: string; readings: Record<string, string | number | boolean | null>; at: number };

/** A proactive alert from device telemetry (docs/hardware.md): a notification of category proactive, priority low (spec 2.14), for push and channels. */
export interface ProactiveAlertEvent {
  type: 'proactive_alert';
  category: 'proactive';
  priority: 'low';
  alert: ProactiveAlert;
  at: number;
}

/** Everything on the brain's bus. */
export type BrainEvent = AgentEvent | ApprovalEvent | TaskflowEvent | AccessModeEvent | MdnsEvent | DeviceRevokedEvent | ProactiveAlertEvent | HardwareEvent | ({ type: 'memory_changed' } & MemoryChange);
