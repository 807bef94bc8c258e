// The installed skills and their recent runs (docs/skills.md "Installing", "Status"), in brain.db under
// the component `skills`. The files of an installed skill live in <home>/skills/<id>/ (skill-installer.ts);
// this table says which version is installed, where it came from, whose signature admitted it and its
// status. Runs are kept per skill up to RUNS_KEPT, newest first, for `svc skills show`.
import type { Migration, Store } from '../kernel/capability';
import type { SkillRunView, SkillStatus } from '../../protocol/skills';

export const RUNS_KEPT = 20;

export const SKILL_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'installed skills and their recent runs',
    up: `
      CREATE TABLE skills (
        id TEXT PRIMARY KEY,
        version TEXT NOT NULL,
        source TEXT NOT NULL,
        signed_by TEXT,
        unsigned INTEGER NOT NULL,
        disabled INTEGER NOT NULL DEFAULT 0,
        installed_at REAL NOT NULL
      );
      CREATE TABLE skill_runs (
        run_id TEXT PRIMARY KEY,
        skill_id TEXT NOT NULL,
        started_at REAL NOT NULL,
        view TEXT NOT NULL
      );
      CREATE INDEX skill_runs_by_skill ON skill_runs (skill_id, started_at);
    `,
  },
];

export interface SkillRecord {
  readonly id: string;
  readonly version: string;
  /** path, url, or builtin (a first-party skill: its row keeps the version seen and the disabled flag). */
  readonly source: string;
  readonly signedBy: string | null;
  readonly unsigned: boolean;
  readonly disabled: boolean;
  readonly installedAt: number;
}

interface Row {
  id: string;
  version: string;
  source: string;
  signed_by: string | null;
  unsigned: number;
  disabled: number;
  installed_at: number;
}

const record = (r: Row): SkillRecord => ({ id: r.id, version: r.version, source: r.source, signedBy: r.signed_by, unsigned: r.unsigned === 1, disabled: r.disabled === 1, installedAt: r.installed_at });

export class SkillStore {
  constructor(private readonly store: Store) {}

  all(): SkillRecord[] {
    return this.store.all<Row>('SELECT * FROM skills ORDER BY id').map(record);
  }

  get(id: string): SkillRecord | undefined {
    const row = this.store.get<Row>('SELECT * FROM skills WHERE id = ?', [id]);
    return row ? record(row) : undefined;
  }

  /** Records an install or upgrade (an upgrade keeps the skill's disabled flag). */
  async put(r: Omit<SkillRecord, 'disabled'>): Promise<void> {
    await this.store.write((db) =>
      db.run(
        `INSERT INTO skills (id, version, source, signed_by, unsigned, installed_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET version = excluded.version, source = excluded.source, signed_by = excluded.signed_by,
           unsigned = excluded.unsigned, installed_at = excluded.installed_at`,
        [r.id, r.version, r.source, r.signedBy, r.unsigned ? 1 : 0, r.installedAt],
      ),
    );
  }

  /** Turns a skill off or on; false when it is not installed. */
  async setDisabled(id: string, disabled: boolean): Promise<boolean> {
    const result = await this.store.write((db) => db.run('UPDATE skills SET disabled = ? WHERE id = ?', [disabled ? 1 : 0, id]));
    return result.changes > 0;
  }

  /** Forgets a skill and its runs; false when it was not installed. */
  async remove(id: string): Promise<boolean> {
    return this.store.write((db) => {
      db.run('DELETE FROM skill_runs WHERE skill_id = ?', [id]);
      return db.run('DELETE FROM skills WHERE id = ?', [id]).changes > 0;
    });
  }

  /** Keeps a run, dropping the skill's oldest beyond RUNS_KEPT. */
  async addRun(skillId: string, view: SkillRunView): Promise<void> {
    await this.store.write((db) => {
      db.run('INSERT INTO skill_runs (run_id, skill_id, started_at, view) VALUES (?, ?, ?, ?)', [view.run_id, skillId, view.started_at, JSON.stringify(view)]);
      db.run('DELETE FROM skill_runs WHERE skill_id = ? AND run_id NOT IN (SELECT run_id FROM skill_runs WHERE skill_id = ? ORDER BY started_at DESC LIMIT ?)', [skillId, skillId, RUNS_KEPT]);
    });
  }

  runs(skillId: string): SkillRunView[] {
    return this.store.all<{ view: string }>('SELECT view FROM skill_runs WHERE skill_id = ? ORDER BY started_at DESC, run_id DESC LIMIT ?', [skillId, RUNS_KEPT]).map((r) => JSON.parse(r.view) as SkillRunView);
  }
}

/** The status a skill shows: error wins (its files are broken), then disabled. */
export const statusOf = (disabled: boolean, error: string | null): SkillStatus => (error !== null ? 'error' : disabled ? 'disabled' : 'active');
