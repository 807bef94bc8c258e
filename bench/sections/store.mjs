// Raw write rates of the store (daemon/store/sqlite-store.ts, bundled here) on the disk that holds the
// repository, to justify the storage settings in docs/storage.md: single-row transactions with
// synchronous=FULL and NORMAL, group commit with 32 concurrent writers and with one, and the disk's own
// fsync rate as the baseline all of them are bound by. Also records whether WAL can be enabled.
//   export async function run(ctx) -> JSON-serialisable numbers
// The machine may be shared, so every case runs `rounds` times, interleaved with the others, and the
// median is reported next to the samples.
//   ctx (all optional): { root, tmpDir, log(msg), durationMs, writers, rounds }
import { build } from 'esbuild';
import fs from 'node:fs';
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { percentile, round } from '../lib/brain.mjs';

const TEXT = 'remember that the garden hose is in the shed, behind the bicycle, next to the winter tyres';
const SCHEMA = [{ version: 1, description: 'bench', up: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL, created_at TEXT NOT NULL)' }];

async function loadStore(root, dir) {
  const outfile = join(dir, 'sqlite-store.mjs');
  await build({ entryPoints: [join(root, 'daemon/store/sqlite-store.ts')], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}

/** SQLite header bytes 24..27: incremented once per committed write transaction. */
function commits(file) {
  const fd = openSync(file, 'r');
  const b = Buffer.alloc(4);
  readSync(fd, b, 0, 4, 24);
  closeSync(fd);
  return b.readUInt32BE(0);
}

/**
 * Counts fsync calls while fn runs. node-sqlite3-wasm's VFS calls fs.fsyncSync on the shared node:fs
 * module object, so wrapping that property sees every sync SQLite asks for (database, journal and, on
 * journal deletion, the directory): the number that decides speed on an SD card.
 */
async function countingFsyncs(fn) {
  const original = fs.fsyncSync;
  let n = 0;
  fs.fsyncSync = (fd) => {
    n++;
    return original(fd);
  };
  try {
    return { result: await fn(), fsyncs: n };
  } finally {
    fs.fsyncSync = original;
  }
}

async function measure(SqliteStore, file, opts) {
  const { result, fsyncs } = await countingFsyncs(() => writeFor(SqliteStore, file, opts));
  return { ...result, fsyncs_per_commit: round(fsyncs / result.transactions, 2) };
}

async function writeFor(SqliteStore, file, { synchronous, groupCommit, writers, durationMs }) {
  const store = new SqliteStore(file, { synchronous, groupCommit });
  store.migrate('bench', SCHEMA);
  const before = commits(file);
  const end = performance.now() + durationMs;
  let writes = 0;
  const writer = async () => {
    while (performance.now() < end) {
      await store.write((db) => db.run('INSERT INTO notes (text, created_at) VALUES (?, ?)', [TEXT, new Date().toISOString()]));
      writes++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: writers }, writer));
  const seconds = (performance.now() - t0) / 1000;
  store.close();
  const transactions = commits(file) - before;
  return { transactions, writes_per_s: round(writes / seconds, 0), commits_per_s: round(transactions / seconds, 0), writes_per_commit: round(writes / transactions, 1) };
}

function fsyncRate(dir, durationMs) {
  const fd = openSync(join(dir, 'fsync-probe'), 'w');
  const page = Buffer.alloc(4096, 7);
  let n = 0;
  const end = performance.now() + durationMs;
  const t0 = performance.now();
  while (performance.now() < end) {
    writeSync(fd, page, 0, page.length, 0);
    fsyncSync(fd);
    n++;
  }
  closeSync(fd);
  return round(n / ((performance.now() - t0) / 1000), 0);
}

export async function run(ctx = {}) {
  const root = ctx.root ?? join(import.meta.dirname, '..', '..');
  const log = ctx.log ?? ((m) => process.stderr.write(`[store] ${m}\n`));
  const durationMs = ctx.durationMs ?? 1500;
  const writers = ctx.writers ?? 32;
  const base = ctx.tmpDir ?? join(root, '.bench-tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'store-'));
  try {
    const { SqliteStore } = await loadStore(root, dir);
    const cases = [
      ['single-row transactions, FULL', { synchronous: 'FULL', groupCommit: false, writers: 1 }],
      ['single-row transactions, NORMAL', { synchronous: 'NORMAL', groupCommit: false, writers: 1 }],
      [`group commit, FULL, ${writers} writers`, { synchronous: 'FULL', groupCommit: true, writers }],
      [`group commit, NORMAL, ${writers} writers`, { synchronous: 'NORMAL', groupCommit: true, writers }],
      ['group commit, FULL, 1 writer', { synchronous: 'FULL', groupCommit: true, writers: 1 }],
    ];
    const rounds = ctx.rounds ?? 3;
    const samples = cases.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (const [i, [name, opts]] of cases.entries()) {
        log(`round ${r + 1}/${rounds}: ${name} (${durationMs} ms)`);
        samples[i].push(await measure(SqliteStore, join(dir, `case-${i}-${r}.db`), { ...opts, durationMs }));
      }
    }
    const results = Object.fromEntries(
      cases.map(([name, opts], i) => [
        name,
        {
          synchronous: opts.synchronous,
          group_commit: opts.groupCommit,
          writers: opts.writers,
          writes_per_s: percentile(samples[i].map((x) => x.writes_per_s), 50),
          commits_per_s: percentile(samples[i].map((x) => x.commits_per_s), 50),
          writes_per_commit: percentile(samples[i].map((x) => x.writes_per_commit), 50),
          fsyncs_per_commit: percentile(samples[i].map((x) => x.fsyncs_per_commit), 50),
          samples_writes_per_s: samples[i].map((x) => x.writes_per_s),
        },
      ]),
    );
    log('fsync baseline');
    const probe = new SqliteStore(join(dir, 'wal.db'));
    const walAttempt = probe.get('PRAGMA journal_mode=WAL');
    probe.close();
    return {
      disk: { fsync_4k_per_s: fsyncRate(dir, durationMs), path: dir.replace(root, '<repo>') },
      setup: { duration_ms_per_sample: durationMs, rounds, row: `INSERT of one ${TEXT.length}-character text row` },
      wal_pragma_result: walAttempt,
      cases: results,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
