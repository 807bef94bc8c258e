// Session snapshots (spec 1.3): a copy of a session's conversation and working memory that a new
// session can branch from, or that the session can be restored to. Stored durably; the live sessions
// are reached only through the SessionPort.
import type { Snapshot, SnapshotDetail } from '../../protocol/memory';
import type { Store } from '../store/store';
import { notFound } from '../kernel/errors';
import { iso, newId } from './ids';
import type { SessionPort, SessionState } from './session-port';

interface SnapshotRow {
  id: string;
  session_id: string;
  label: string | null;
  state: string;
  message_count: number;
  working_count: number;
  created_at: number;
}

const meta = (r: SnapshotRow): Snapshot => ({ id: r.id, session_id: r.session_id, label: r.label, message_count: r.message_count, working_count: r.working_count, created_at: iso(r.created_at) });

export class SessionSnapshots {
  constructor(
    private readonly store: Store,
    private readonly sessions: SessionPort,
    private readonly clock: () => number = Date.now,
  ) {}

  async take(sessionId: string, label?: string): Promise<Snapshot> {
    const state = await this.sessions.read(sessionId);
    if (!state) throw notFound('session', sessionId);
    const now = this.clock();
    const row: SnapshotRow = { id: newId('snap', now), session_id: sessionId, label: label ?? null, state: JSON.stringify(state), message_count: state.messages.length, working_count: state.working.length, created_at: now };
    await this.store.write((db) =>
      db.run('INSERT INTO memory_snapshots (id, session_id, label, state, message_count, working_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [row.id, row.session_id, row.label, row.state, row.message_count, row.working_count, row.created_at]),
    );
    return meta(row);
  }

  list(sessionId?: string): Snapshot[] {
    const rows = sessionId
      ? this.store.all<SnapshotRow>('SELECT * FROM memory_snapshots WHERE session_id = ? ORDER BY created_at DESC, id DESC', [sessionId])
      : this.store.all<SnapshotRow>('SELECT * FROM memory_snapshots ORDER BY created_at DESC, id DESC LIMIT 500');
    return rows.map(meta);
  }

  get(id: string): SnapshotDetail {
    const r = this.row(id);
    const state = JSON.parse(r.state) as SessionState;
    return { ...meta(r), messages: state.messages, working: state.working };
  }

  /** A new session starting from the snapshot; the original session is untouched. */
  async branch(id: string): Promise<{ session_id: string; snapshot_id: string }> {
    const r = this.row(id);
    const sessionId = await this.sessions.create(JSON.parse(r.state) as SessionState, { branchedFrom: { sessionId: r.session_id, snapshotId: id } });
    return { session_id: sessionId, snapshot_id: id };
  }

  /** Puts a session (by default the one it was taken from) back to the snapshot's state. */
  async restore(id: string, sessionId?: string): Promise<{ session_id: string; snapshot_id: string }> {
    const r = this.row(id);
    const target = sessionId ?? r.session_id;
    if (!(await this.sessions.read(target))) throw notFound('session', target);
    await this.sessions.replace(target, JSON.parse(r.state) as SessionState);
    return { session_id: target, snapshot_id: id };
  }

  async delete(id: string): Promise<boolean> {
    return (await this.store.write((db) => db.run('DELETE FROM memory_snapshots WHERE id = ?', [id]).changes)) > 0;
  }

  count(): number {
    return this.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM memory_snapshots')?.n ?? 0;
  }

  private row(id: string): SnapshotRow {
    const r = this.store.get<SnapshotRow>('SELECT * FROM memory_snapshots WHERE id = ?', [id]);
    if (!r) throw notFound('snapshot', id);
    return r;
  }
}
