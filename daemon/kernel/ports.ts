// The ports of the core: what the agent and the capabilities need from memory, identity and the
// device registry, narrowly. The composition root adapts the real services to them; tests hand in plain fakes. Keeping
// them narrow is what lets the turn loop be measured with a zero-latency provider (bench/sections/agent.mjs).

import type { IdentityFile } from '../../protocol/identity';
import type { BrainMessage } from '../../protocol/session';
import type { Db } from '../store/store';

export type IdentityName = 'USER.md' | 'SOUL.md';

/** One persistent-memory hit as the agent sees it (spec 2.9 fields it uses). */
export interface MemoryHit {
  id: string;
  tier: 'note' | 'episode' | 'knowledge';
  summary: string;
  relevance: number;
}

export interface KnowledgeFact {
  id: string;
  subject: string;
  predicate: string;
  object: string;
  confidence: number;
}

/** Persistent memory tiers (notes, episodes, knowledge graph) through daemon/memory. */
export interface AgentMemory {
  remember(text: string, source: string): Promise<{ id: string; text: string }>;
  search(query: string, limit: number): Promise<MemoryHit[]>;
  /** Deletes the notes that match the query (best matches first, at most `limit`); returns what was removed. */
  forget(query: string, limit: number): Promise<{ id: string; summary: string }[]>;
  knowledge(subject: string, limit: number): Promise<KnowledgeFact[]>;
  /** Stores facts with their source (e.g. `turn:<id>`); the same fact from another source merges. */
  addFacts(facts: readonly FactInput[], source: string): Promise<KnowledgeFact[]>;
}

export interface FactInput {
  subject: string;
  predicate: string;
  object: string;
  confidence: number;
}

export interface DeviceSummary {
  id: string;
  name: string;
  kind: string;
  online: boolean;
  state: Record<string, string | number | boolean | null>;
}

/** Who asked for a device change (the command history names them). */
export interface DeviceChangeOrigin {
  tool: string;
  turnId: string;
}

/** Connected devices: the hardware capability's (docs/hardware.md); an empty directory without it. */
export interface DeviceDirectory {
  list(): DeviceSummary[];
  /**
   * Sends a state change; resolves with the device's new state. Throws AppError NOT_FOUND for an
   * unknown device. `origin` names the tool and turn that asked, for the command's record.
   */
  set(deviceId: string, changes: Record<string, string | number | boolean>, origin?: DeviceChangeOrigin): Promise<DeviceSummary>;
}

export interface IdentitySource {
  user(): string;
  soul(): string;
}

/** USER.md and SOUL.md as documents: read with their revision, written whole (a stale revision is a 409). */
export interface IdentityDocuments extends IdentitySource {
  read(name: IdentityName): IdentityFile;
  write(name: IdentityName, content: string, expectedRevision?: string): IdentityFile;
}

export const emptyDevices: DeviceDirectory = {
  list: () => [],
  set: (deviceId) => Promise.reject(new Error(`no device directory: cannot reach ${deviceId}`)),
};

/** One open client WebSocket (/v1/session): who holds it (principalId, e.g. `device:dev_…`) and the session it is attached to. */
export interface ClientConnection {
  readonly principal: string;
  readonly connection: string;
  readonly sessionId: string | null;
}

/** The open client WebSockets, for capabilities that must act on them (docs/pairing.md: revoke, handoff). */
export interface ClientConnections {
  list(): ClientConnection[];
  /** Closes every socket `principal` holds (WebSocket close `code`); returns how many. */
  close(principal: string, code: number, reason: string): number;
  /**
   * Moves session `sessionId` from one principal's sockets to another's: each socket of `to` joins it
   * (and gets its history, as on session_open); each socket of `from` attached to it is detached.
   * Throws AppError NOT_FOUND for a session that is not open, CONFLICT when `to` has no open socket.
   */
  handoff(sessionId: string, from: string, to: string): { attached: number; detached: number };
  /** Sends a frame to every open socket (device telemetry); a socket attached to a session gets that session's id in it. Returns how many got it. */
  broadcast(frame: BrainMessage): number;
}

export const noConnections: ClientConnections = {
  list: () => [],
  close: () => 0,
  broadcast: () => 0,
  handoff: (sessionId) => {
    throw new Error(`no client connections: cannot hand off ${sessionId}`);
  },
};

/**
 * The device directory the agent and the capabilities are given before any capability exists: it
 * answers as the empty directory until the capability that drives devices hands in its own (brain.ts).
 */
export class DeviceSlot implements DeviceDirectory {
  private inner: DeviceDirectory = emptyDevices;

  use(directory: DeviceDirectory): void {
    this.inner = directory;
  }

  list(): DeviceSummary[] {
    return this.inner.list();
  }

  set(deviceId: string, changes: Record<string, string | number | boolean>, origin?: DeviceChangeOrigin): Promise<DeviceSummary> {
    return this.inner.set(deviceId, changes, origin);
  }
}

// ── The memory journal (issue 15; daemon/memory/memory-journal.ts says what is journaled and why) ──

/** A note as a replica stores it: the whole record after the change (times in epoch ms). */
export interface JournalNote {
  id: string;
  text: string;
  source: string;
  tags: string[];
  created_at: number;
  updated_at: number;
}

export interface JournalEpisode {
  id: string;
  session_id: string | null;
  summary: string;
  reason: 'session_end' | 'compaction' | 'manual';
  summariser: string;
  message_count: number;
  started_at: number | null;
  ended_at: number | null;
  created_at: number;
  /** False for an episode of a trivial session: kept, but out of search. */
  searchable: boolean;
}

/** A fact with every source backing it; its id is the hash of its parts (knowledge-graph.ts tripleId). */
export interface JournalTriple {
  id: string;
  subject: string;
  predicate: string;
  object: string;
  confidence: number;
  sources: { source: string; confidence: number; at: number }[];
  created_at: number;
  updated_at: number;
}

/** One change of a synced tier: a put of the whole record after it, or a delete. */
export type MemoryJournalChange =
  | { kind: 'note.put'; id: string; record: JournalNote }
  | { kind: 'note.delete'; id: string }
  | { kind: 'episode.put'; id: string; record: JournalEpisode }
  | { kind: 'episode.delete'; id: string }
  | { kind: 'triple.put'; id: string; record: JournalTriple }
  | { kind: 'triple.delete'; id: string };

/** A journaled change with this brain's memory revision (1, 2, 3 … never repeated) and when it happened (epoch ms). */
export type JournalEntry = MemoryJournalChange & { revision: number; at: number };

/** Called inside the write transaction of every change it records: an entry exists exactly when its change committed. */
export interface MemoryJournal {
  record(db: Db, entry: JournalEntry): void;
}

/** Writes a change received from another brain through the repositories, without journaling it as local. */
export interface MemoryReplicaPort {
  /** True when it changed something; applying the same change again is a no-op (false). */
  applyRemote(change: MemoryJournalChange): Promise<boolean>;
}

/**
 * The journal memory writes to, held by the core: it records nothing until the capability that keeps
 * an op log hands in its own (brain.ts), like DeviceSlot.
 */
export class MemoryJournalSlot implements MemoryJournal {
  private inner: MemoryJournal | null = null;

  use(journal: MemoryJournal): void {
    this.inner = journal;
  }

  record(db: Db, entry: JournalEntry): void {
    this.inner?.record(db, entry);
  }
}

// ── Pairing claims (issue 15: a brain pairs with another through a pairing token of kind `brain`) ──

/** The kinds of device a pairing token is minted for (protocol/pairing.ts PAIR_KIND_NAMES). */
export type PairingKind = 'node' | 'phone' | 'browser' | 'brain';

/**
 * Pairing tokens as another capability consumes them: the sync capability claims a `brain` token when
 * a peer brain completes pairing with its keys, and revokes that pairing when the peer is forgotten.
 */
export interface PairingClaims {
  /**
   * Claims `token` for a new device of `kind`, exactly once, under the same rules as
   * POST /api/devices/pair/complete (PIN, expiry). Throws AppError: NOT_FOUND unknown token,
   * CONFLICT not unclaimed, UNAUTHORIZED a PIN not verified, BAD_REQUEST a token of another kind.
   * The device is named as the token was minted, else `name` (what the device calls itself).
   */
  claim(token: string, kind: PairingKind, name: string | undefined): Promise<{ deviceId: string; name: string }>;
  /** Un-pairs a device; false when it is unknown or already revoked. */
  revoke(deviceId: string): Promise<boolean>;
}

/** core.pairing: refuses until the capability that mints tokens hands in its claims (brain.ts). */
export class PairingSlot implements PairingClaims {
  private inner: PairingClaims | null = null;

  use(claims: PairingClaims): void {
    this.inner = claims;
  }

  claim(token: string, kind: PairingKind, name: string | undefined): Promise<{ deviceId: string; name: string }> {
    if (this.inner === null) return Promise.reject(new Error('no capability mints pairing tokens'));
    return this.inner.claim(token, kind, name);
  }

  revoke(deviceId: string): Promise<boolean> {
    return this.inner === null ? Promise.resolve(false) : this.inner.revoke(deviceId);
  }
}

/** One entry of the audit log (daemon/audit/audit-log.ts). */
export interface AuditRecord {
  /** Lower snake case: `unsigned_install`. */
  readonly tag: string;
  /** Who decided: a principal id (`admin`, `device:<id>`). */
  readonly actor: string;
  /** What it was about: `skill:<id>@<version>`. */
  readonly subject: string;
  readonly details?: unknown;
}

/** The brain's audit log: an entry is durable once the promise resolves (record it before acting). */
export interface AuditTrail {
  record(entry: AuditRecord): Promise<number>;
}
