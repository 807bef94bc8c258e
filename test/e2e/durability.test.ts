// The durability proof (ARCHITECTURE.md, Storage: "kill -9 at any moment loses no acknowledged write").
// A separate writer process (fixtures/note-writer.mjs) posts notes from 32 concurrent clients and
// prints every acknowledged id; the brain is SIGKILLed at a random point of that stream, restarted on
// the same home, and every acknowledgement so far must be readable with its exact text. Repeated
// ROUNDS times on one growing database, then the file must pass SQLite's integrity check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import sqlite from 'node-sqlite3-wasm';
import { ROOT, startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';

const ROUNDS = 10;
const WRITER = join(ROOT, 'test', 'e2e', 'fixtures', 'note-writer.mjs');

interface Ack {
  id: string;
  text: string;
}

interface Page {
  items: { id: string; text: string }[];
  next_cursor: string | null;
}

/** Every note the brain holds, id → text, through the paginated API (bounded by the page count). */
async function allNotes(brain: BrainProcess): Promise<Map<string, string>> {
  const notes = new Map<string, string>();
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const res = await brain.api(`/api/memory/notes?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as Page;
    for (const n of body.items) notes.set(n.id, n.text);
    cursor = body.next_cursor;
    if (cursor === null) return notes;
  }
  throw new Error('more than 1000 pages of notes');
}

/** Runs the writer until the brain is killed after `target` acknowledgements (plus a random delay). */
async function writeAndKill(brain: BrainProcess, target: number, delayMs: number): Promise<Ack[]> {
  const writer = spawn(process.execPath, [WRITER, brain.url, brain.token, '32'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  writer.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const acks: Ack[] = [];
  const exited = new Promise<number | null>((resolve) => writer.on('close', resolve));
  const reached = new Promise<void>((resolve) => {
    createInterface({ input: writer.stdout }).on('line', (line) => {
      acks.push(JSON.parse(line) as Ack);
      if (acks.length === target) resolve();
    });
  });
  const timeout = setTimeout(() => writer.kill('SIGKILL'), 30_000);
  try {
    await Promise.race([reached, exited.then(() => Promise.reject(new Error(`writer ended before ${target} acks: ${stderr}`)))]);
    await new Promise((r) => setTimeout(r, delayMs)); // a random point in the stream, not a measurement
    await brain.kill();
    assert.equal(await exited, 0, `writer failed: ${stderr}`);
  } finally {
    clearTimeout(timeout);
  }
  return acks;
}

test(`kill -9 at random moments during concurrent writes loses no acknowledged note (${ROUNDS} rounds)`, async (t) => {
  const home = tempHome('svc-durability-');
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const acknowledged: Ack[] = [];
  const leftovers = { lockDir: 0, journal: 0 };
  const recoveries: Record<string, number> = {};
  for (let round = 0; round <= ROUNDS; round++) {
    const brain = await startBrain({ home });
    t.after(() => brain.kill());
    const recovery = brain.lines.find((l) => l.includes('found the journal of a transaction interrupted by a crash'));
    const state = recovery ? (JSON.parse(recovery) as { recovery: { state: string } }).recovery.state : 'none';
    recoveries[state] = (recoveries[state] ?? 0) + 1;
    const notes = await allNotes(brain);
    const lost = acknowledged.filter((a) => notes.get(a.id) !== a.text);
    assert.deepEqual(lost, [], `round ${round}: acknowledged notes missing or changed after restart`);
    if (round === ROUNDS) {
      assert.equal(await brain.stop(), 0);
      break;
    }
    const target = 1 + Math.floor(Math.random() * 300);
    const delayMs = Math.floor(Math.random() * 40);
    const acks = await writeAndKill(brain, target, delayMs);
    acknowledged.push(...acks);
    const lockDir = existsSync(join(home, 'brain.db.lock'));
    const journal = existsSync(join(home, 'brain.db-journal'));
    leftovers.lockDir += Number(lockDir);
    leftovers.journal += Number(journal);
    t.diagnostic(`round ${round}: killed after ${acks.length} acks (target ${target} + ${delayMs} ms); left .lock dir: ${lockDir}, journal: ${journal}`);
  }
  t.diagnostic(`${acknowledged.length} acknowledged notes verified; kills that left a .lock dir: ${leftovers.lockDir}/${ROUNDS}, a journal: ${leftovers.journal}/${ROUNDS}`);
  t.diagnostic(`journal recovery at restart: ${JSON.stringify(recoveries)}`);

  assertIntact(join(home, 'brain.db'));
});

/**
 * SQLite's integrity check, plus FTS5's own check of every full-text index against its content table:
 * a transaction torn by the kill (some of its pages on disk, others not) shows up here even when every
 * acknowledged note is still readable.
 */
function assertIntact(file: string): void {
  const db = new sqlite.Database(file, { fileMustExist: true });
  try {
    assert.deepEqual(db.all('PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
    const fts = db.all("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5(%'") as { name: string }[];
    assert.ok(fts.length > 0);
    for (const { name } of fts) db.run(`INSERT INTO "${name}" ("${name}", rank) VALUES ('integrity-check', 1)`);
  } finally {
    db.close();
  }
}
