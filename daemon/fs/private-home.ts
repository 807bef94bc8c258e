// $SVC_HOME holds keys, tokens and the database: files 0600, directories 0700 (issue 8 §5). The
// brain runs with umask 077, so what it creates is private; this pass tightens what an older
// version, another tool or a hand-made copy left more open. Top level only (the brain's own files
// live there), symbolic links untouched. Costs one readdir and a stat per entry, at start only.
import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Removes group and other bits from the entries of `home`; returns the names it changed. */
export function tightenHome(home: string): string[] {
  const changed: string[] = [];
  for (const name of readdirSync(home)) {
    const path = join(home, name);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (!st || st.isSymbolicLink() || (st.mode & 0o077) === 0) continue;
    chmodSync(path, st.isDirectory() ? 0o700 : st.mode & 0o700);
    changed.push(name);
  }
  return changed;
}
