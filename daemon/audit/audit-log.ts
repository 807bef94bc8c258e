// The audit log (docs/security.md "The audit log"): an append-only table in brain.db of decisions that
// weakened a safeguard (an unsigned install, spec 4.1 rule 2 and 5.1 rule 4). Every entry is committed
// before the decision takes effect, so an install the log does not show did not happen. The brain gives
// it to capabilities as core.audit; GET /api/audit reads it.
import type { Migration, Store } from '../store/store';
import type { AuditEntry } from '../../protocol/audit';
import type { AuditRecord, AuditTrail } from '../kernel/ports';

export const AUDIT_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'the audit log',
    up: `
      CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at REAL NOT NULL,
        tag TEXT NOT NULL,
        actor TEXT NOT NULL,
        subject TEXT NOT NULL,
        details TEXT NOT NULL
      );
      CREATE INDEX audit_log_tag ON audit_log (tag, id);
    `,
  },
];

interface Row {
  id: number;
  at: number;
  tag: string;
  actor: string;
  subject: string;
  details: string;
}

export class AuditLog implements AuditTrail {
  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {
    store.migrate('audit', AUDIT_MIGRATIONS);
  }

  async record(entry: AuditRecord): Promise<number> {
    const details = JSON.stringify(entry.details ?? null);
    const result = await this.store.write((db) =>
      db.run('INSERT INTO audit_log (at, tag, actor, subject, details) VALUES (?, ?, ?, ?, ?)', [this.now() / 1000, entry.tag, entry.actor, entry.subject, details]),
    );
    return Number(result.lastInsertRowid);
  }

  /** The newest `limit` entries first, of one tag when given. */
  list(query: { tag?: string; limit: number }): AuditEntry[] {
    const rows = query.tag
      ? this.store.all<Row>('SELECT * FROM audit_log WHERE tag = ? ORDER BY id DESC LIMIT ?', [query.tag, query.limit])
      : this.store.all<Row>('SELECT * FROM audit_log ORDER BY id DESC LIMIT ?', [query.limit]);
    return rows.map((r) => ({ id: r.id, at: r.at, tag: r.tag, actor: r.actor, subject: r.subject, details: JSON.parse(r.details) as unknown }));
  }
}
