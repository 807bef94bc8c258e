// The durable queue of tool calls waiting for a person (spec 2.6, 4.8): one row per request in the
// brain's store, so a restart keeps what is pending. Resolving is a claim inside one store write
// transaction (check pending, not expired, same session → mark), so two concurrent approvals of one
// request cannot both pass: the second sees the first's mark and gets 404 (docs/approvals.md).
import { randomUUID } from 'node:crypto';
import type { CapabilityContext, Clock, Migration } from '../kernel/capability';
import type { SafetyLevel } from '../kernel/tool';
import { AppError, notFound } from '../kernel/errors';
import type { ApprovalRequest, ApprovalStatus } from '../../protocol/approvals';

type Store = CapabilityContext['store'];

export const APPROVAL_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'approval requests',
    up: `CREATE TABLE approval_requests (
      request_id TEXT PRIMARY KEY,
      session_id TEXT NOT NULL,
      turn_id TEXT NOT NULL,
      tool_name TEXT NOT NULL,
      args TEXT NOT NULL,
      safety_level TEXT NOT NULL,
      created_at REAL NOT NULL,
      status TEXT NOT NULL,
      resolved_at REAL
    );
    CREATE INDEX approval_requests_status ON approval_requests (status, created_at);`,
  },
];

export interface HeldCall {
  sessionId: string;
  turnId: string;
  tool: string;
  args: Record<string, unknown>;
  safety: SafetyLevel;
}

/** A stored request: the spec 2.6 fields plus the turn it came from. */
export interface StoredRequest extends ApprovalRequest {
  turn_id: string;
}

interface Row {
  request_id: string;
  session_id: string;
  turn_id: string;
  tool_name: string;
  args: string;
  safety_level: SafetyLevel;
  created_at: number;
  status: ApprovalStatus;
}

/** The columns a request is read with (resolved_at stays in the table, for the record). */
const COLUMNS = 'request_id, session_id, turn_id, tool_name, args, safety_level, created_at, status';

const fromRow = (row: Row): StoredRequest => ({ ...row, args: JSON.parse(row.args) as Record<string, unknown> });

/** What a claim ends in; a refusal is thrown after the transaction, so the expiry mark it made is kept. */
type Claim = { ok: true; request: StoredRequest } | { ok: false; error: AppError };

export class ApprovalQueue {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly ttlMinutes: number,
  ) {}

  /** Epoch seconds with fraction (spec 2.6 created_at). */
  private nowSeconds(): number {
    return this.clock.now() / 1000;
  }

  /** Requests created before this are expired. */
  private cutoff(): number {
    return this.nowSeconds() - this.ttlMinutes * 60;
  }

  async add(call: HeldCall): Promise<StoredRequest> {
    const row: Row = {
      request_id: randomUUID(),
      session_id: call.sessionId,
      turn_id: call.turnId,
      tool_name: call.tool,
      args: JSON.stringify(call.args),
      safety_level: call.safety,
      created_at: this.nowSeconds(),
      status: 'pending',
    };
    await this.store.write((db) =>
      db.run(
        'INSERT INTO approval_requests (request_id, session_id, turn_id, tool_name, args, safety_level, created_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [row.request_id, row.session_id, row.turn_id, row.tool_name, row.args, row.safety_level, row.created_at, row.status],
      ),
    );
    return fromRow(row);
  }

  /** Pending requests that have not expired, oldest first. */
  list(filter: { sessionId?: string; limit: number }): StoredRequest[] {
    const where = filter.sessionId === undefined ? '' : ' AND session_id = ?';
    const params = [this.cutoff(), ...(filter.sessionId === undefined ? [] : [filter.sessionId]), filter.limit];
    return this.store
      .all<Row>(`SELECT ${COLUMNS} FROM approval_requests WHERE status = 'pending' AND created_at >= ?${where} ORDER BY created_at, request_id LIMIT ?`, params)
      .map(fromRow);
  }

  pendingCount(): number {
    return this.store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM approval_requests WHERE status = 'pending' AND created_at >= ?`, [this.cutoff()])?.n ?? 0;
  }

  /** Marks every pending request past the TTL expired; returns their ids. A read first: no commit when none has. */
  async expire(): Promise<string[]> {
    const cutoff = this.cutoff();
    if (!this.store.get(`SELECT 1 AS one FROM approval_requests WHERE status = 'pending' AND created_at < ? LIMIT 1`, [cutoff])) return [];
    return this.store.write((db) => {
      const ids = db.all<{ request_id: string }>(`SELECT request_id FROM approval_requests WHERE status = 'pending' AND created_at < ?`, [cutoff]).map((r) => r.request_id);
      db.run(`UPDATE approval_requests SET status = 'expired', resolved_at = ? WHERE status = 'pending' AND created_at < ?`, [this.nowSeconds(), cutoff]);
      return ids;
    });
  }

  /**
   * Takes a pending request out of the queue, exactly once: `unknown` for an approval (the tool is about
   * to run; `finish` records it ran), `rejected` for a rejection. Unknown, resolved or expired → 404;
   * a `givenSession` other than the request's → 409.
   */
  async claim(requestId: string, as: 'unknown' | 'rejected', givenSession: string | undefined): Promise<StoredRequest> {
    const now = this.nowSeconds();
    const cutoff = this.cutoff();
    const claim = await this.store.write((db): Claim => {
      const row = db.get<Row>(`SELECT ${COLUMNS} FROM approval_requests WHERE request_id = ?`, [requestId]);
      if (!row || row.status !== 'pending') return { ok: false, error: notFound('approval_request', requestId) };
      if (row.created_at < cutoff) {
        db.run(`UPDATE approval_requests SET status = 'expired', resolved_at = ? WHERE request_id = ?`, [now, requestId]);
        return { ok: false, error: notFound('approval_request', requestId) };
      }
      if (givenSession !== undefined && givenSession !== row.session_id) {
        const details = { reason: 'session_mismatch', request_session_id: row.session_id, given_session_id: givenSession };
        return { ok: false, error: new AppError('CONFLICT', `approval request ${requestId} belongs to another session`, details) };
      }
      db.run('UPDATE approval_requests SET status = ?, resolved_at = ? WHERE request_id = ?', [as, now, requestId]);
      return { ok: true, request: fromRow({ ...row, status: as }) };
    });
    if (!claim.ok) throw claim.error;
    return claim.request;
  }

  /** Records that a claimed approval's tool ran (whatever its outcome). */
  async finish(requestId: string): Promise<void> {
    await this.store.write((db) => db.run(`UPDATE approval_requests SET status = 'approved', resolved_at = ? WHERE request_id = ? AND status = 'unknown'`, [this.nowSeconds(), requestId]));
  }

  /** One stored request, any status (tests and diagnostics). */
  get(requestId: string): StoredRequest | undefined {
    const row = this.store.get<Row>(`SELECT ${COLUMNS} FROM approval_requests WHERE request_id = ?`, [requestId]);
    return row ? fromRow(row) : undefined;
  }
}
