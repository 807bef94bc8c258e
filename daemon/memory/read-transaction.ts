// Runs synchronous reads inside one read transaction. Outside a transaction every statement takes and
// drops SQLite's lock, which node-sqlite3-wasm implements as mkdir/rmdir of <db>.lock: measured ~17%
// of search time at 100k notes. When a group-commit batch is already open (Store.write), the reads
// simply join it.
import type { Store } from '../store/store';

const NESTED = /within a transaction/;

export function inReadTransaction<T>(store: Store, fn: () => T): T {
  let began = false;
  try {
    store.run('BEGIN');
    began = true;
  } catch (err) {
    // Only "a transaction is already open" is expected here; anything else is a real failure.
    if (!(err instanceof Error && NESTED.test(err.message))) throw err;
  }
  try {
    return fn();
  } finally {
    if (began) store.run('COMMIT');
  }
}
