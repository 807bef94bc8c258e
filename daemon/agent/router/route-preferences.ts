// Learned routing preferences (spec 1.2 "learned routing preferences"): when the user corrects a
// routing, every content word of the corrected question gains weight towards the right specialist,
// and the exact question is pinned to it. Kept in SQLite (survives restarts) and mirrored in RAM so
// classification never touches the disk on the hot path.
import type { Migration, Store } from '../../store/store';
import { SPECIALISTS, type SpecialistName } from '../../../protocol/session';

export const ROUTE_PREFERENCE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'router preferences: term weights and pinned utterances per specialist',
    up: `CREATE TABLE route_preferences (
           term TEXT NOT NULL,
           specialist TEXT NOT NULL,
           weight REAL NOT NULL,
           updated_at TEXT NOT NULL,
           PRIMARY KEY (term, specialist)
         ) WITHOUT ROWID`,
  },
];

/** Prefix of pinned whole utterances in the term column (terms themselves never contain a colon). */
const UTTERANCE = 'u:';
const KNOWN = new Set<string>(SPECIALISTS);

export const normaliseUtterance = (text: string): string => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

export class RoutePreferences {
  private readonly weights = new Map<string, Map<SpecialistName, number>>();

  constructor(private readonly store: Store) {}

  start(): void {
    this.store.migrate('router', ROUTE_PREFERENCE_MIGRATIONS);
    for (const row of this.store.all<{ term: string; specialist: string; weight: number }>('SELECT term, specialist, weight FROM route_preferences')) {
      if (KNOWN.has(row.specialist)) this.bump(row.term, row.specialist as SpecialistName, row.weight);
    }
  }

  /** Weight of each specialist for a content term. */
  termWeights(term: string): ReadonlyMap<SpecialistName, number> | undefined {
    return this.weights.get(term);
  }

  /** The specialist an exact utterance was pinned to by a correction. */
  pinned(text: string): SpecialistName | undefined {
    const w = this.weights.get(UTTERANCE + normaliseUtterance(text));
    if (!w) return undefined;
    return [...w.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  }

  /** Records a correction durably; resolves once it is on disk. */
  async learn(text: string, terms: readonly string[], to: SpecialistName): Promise<void> {
    const keys = [UTTERANCE + normaliseUtterance(text), ...terms];
    // A pinned utterance moves wholly to the new specialist; term weights only accumulate.
    this.weights.get(keys[0]!)?.clear();
    for (const key of keys) this.bump(key, to, 1);
    const now = new Date().toISOString();
    await this.store.write((db) => {
      db.run('DELETE FROM route_preferences WHERE term = ?', [keys[0]!]);
      for (const key of keys) {
        db.run(
          `INSERT INTO route_preferences (term, specialist, weight, updated_at) VALUES (?, ?, 1, ?)
           ON CONFLICT (term, specialist) DO UPDATE SET weight = weight + 1, updated_at = excluded.updated_at`,
          [key, to, now],
        );
      }
    });
  }

  private bump(term: string, specialist: SpecialistName, by: number): void {
    let w = this.weights.get(term);
    if (!w) this.weights.set(term, (w = new Map<SpecialistName, number>()));
    w.set(specialist, (w.get(specialist) ?? 0) + by);
  }
}
