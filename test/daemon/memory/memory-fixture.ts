// A memory capability on a real SQLite file in a temp dir, with default settings, for unit tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseSettings } from '../../../daemon/config/load-settings';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { createMemory, type MemoryCapability, type MemoryDeps, type MemorySettings } from '../../../daemon/memory/create-memory';

export interface MemoryFixture extends MemoryCapability {
  store: SqliteStore;
  dir: string;
  /** Stops the parts and closes the store; the directory is removed unless `keep` (to reopen it). */
  close(opts?: { keep?: boolean }): Promise<void>;
}

export function memorySettings(patch: Record<string, unknown> = {}): MemorySettings {
  return parseSettings({ memory: patch }).memory;
}

/** `dir`: reopen the database another fixture closed with `keep` (a restart). */
export function memoryFixture(opts: { settings?: Record<string, unknown>; dir?: string } & Partial<Omit<MemoryDeps, 'store' | 'settings' | 'logger'>> = {}): MemoryFixture {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'svc-memory-'));
  const store = new SqliteStore(join(dir, 'brain.db'));
  const { settings, dir: _dir, ...rest } = opts;
  const cap = createMemory({ store, settings: memorySettings(settings), logger: pino({ level: 'silent' }), ...rest });
  return {
    ...cap,
    store,
    dir,
    close: async ({ keep = false } = {}) => {
      for (const p of [...cap.parts].reverse()) await p.stop?.();
      store.close();
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}
