// The built brain's lifecycle, black-box (STYLE.md 13): SIGTERM exits 0 and releases brain.pid; while
// it shuts down, requests on open connections get 503 and WebSocket clients hear 1001; a second signal
// exits at once; a second brain on the same home exits 75; after kill -9 the next start recovers the
// stale pid file and database lock. Every step waits for an observable event, never for a duration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startBrain, tempHome, SVC } from '../helpers/brain-process';
import { holdRequest, waitForLine } from './fixtures/processes';

const NOTE = JSON.stringify({ text: 'written while the brain shuts down' });

test('SIGTERM: exit 0, "stopped" logged, brain.pid and the database lock released', async (t) => {
  const brain = await startBrain({ keepHome: true });
  t.after(async () => {
    await brain.kill();
    rmSync(brain.home, { recursive: true, force: true });
  });
  assert.equal((await brain.api('/api/memory/note', { method: 'POST', body: JSON.stringify({ text: 'before stop' }) })).status, 201);
  assert.ok(existsSync(join(brain.home, 'brain.pid')));
  assert.equal(await brain.stop(), 0);
  assert.ok(brain.lines.some((l) => l.includes('"msg":"stopped"')));
  assert.ok(!existsSync(join(brain.home, 'brain.pid')));
  assert.ok(!existsSync(join(brain.home, 'brain.db.lock')));
  assert.ok(!existsSync(join(brain.home, 'brain.db-journal')));
});

test('while shutting down, a request arriving on an open connection gets 503 UNAVAILABLE', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  // Request 1 is in flight (past onRequest) and holds the server open; request 2 is sent on the same
  // connection only after the brain has logged that it is shutting down.
  const held = await holdRequest(brain.port, '/api/memory/note', brain.token, NOTE);
  brain.child.kill('SIGTERM');
  await waitForLine(brain.lines, /"msg":"shutting down"/);
  const second = ['GET /api/memory/notes HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${brain.token}`, '', ''].join('\r\n');
  held.socket.write(NOTE + second);
  const text = await held.waitFor(/HTTP\/1\.1 503[\s\S]*\r\n\r\n\{[^\n]*\}$/);
  const responses = text.split(/(?=HTTP\/1\.1 )/);
  assert.match(responses[1]!, /^HTTP\/1\.1 201 /, 'the request already in flight completes');
  assert.match(responses[2]!, /^HTTP\/1\.1 503 /);
  assert.match(responses[2]!, /\r\nconnection: close\r\n/i);
  assert.deepEqual(JSON.parse(responses[2]!.slice(responses[2]!.indexOf('\r\n\r\n') + 4)), {
    error: { code: 'UNAVAILABLE', message: 'brain is shutting down', details: null },
  });
  await held.closed;
  assert.equal(await brain.exited, 0);
});

test('a WebSocket client connected during shutdown receives close code 1001', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const ws = new WebSocket(`ws://127.0.0.1:${brain.port}/v1/session`, ['svc.v1', `svc.bearer.${brain.token}`]);
  t.after(() => ws.terminate());
  await new Promise<void>((resolve, reject) => ws.once('open', resolve).once('error', reject));
  assert.equal(ws.protocol, 'svc.v1');
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  brain.child.kill('SIGTERM');
  assert.deepEqual(await closed, { code: 1001, reason: 'brain shutting down' });
  assert.equal(await brain.exited, 0);
});

test('a second signal during shutdown exits at once with a non-zero code', async (t) => {
  const brain = await startBrain({ keepHome: true });
  t.after(async () => {
    await brain.kill();
    rmSync(brain.home, { recursive: true, force: true });
  });
  const held = await holdRequest(brain.port, '/api/memory/note', brain.token, NOTE); // keeps shutdown from finishing
  t.after(() => held.socket.destroy());
  brain.child.kill('SIGTERM');
  await waitForLine(brain.lines, /"msg":"shutting down"/);
  brain.child.kill('SIGINT');
  assert.equal(await brain.exited, 1);
  assert.ok(brain.lines.some((l) => l.includes('second signal: exiting at once')));
  assert.ok(!brain.lines.some((l) => l.includes('shutdown did not finish in time')), 'it did not wait for the hard-exit timer');
  assert.ok(!existsSync(join(brain.home, 'brain.pid')), 'the pid file is released even then');
});

test('a second brain on the same home exits 75 and says which pid holds it', async (t) => {
  const first = await startBrain();
  t.after(() => first.kill());
  const second = spawn(process.execPath, [SVC, 'serve', '--port', '0'], { env: { ...process.env, SVC_HOME: first.home, SVC_API_TOKEN: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  second.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => second.on('exit', resolve));
  assert.equal(code, 75);
  assert.equal(stderr.trim(), `svc: another brain (pid ${first.child.pid}) is already running on ${first.home}`);
  assert.equal((await fetch(`${first.url}/health`)).status, 200, 'the first brain is unaffected');
});

test('after kill -9 the next start takes over the stale pid file and database lock and keeps every note', async (t) => {
  const home = tempHome();
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const first = await startBrain({ home });
  t.after(() => first.kill());
  const created = await first.api('/api/memory/note', { method: 'POST', body: JSON.stringify({ text: 'survives kill -9' }) });
  assert.equal(created.status, 201);
  const { id } = (await created.json()) as { id: string };
  await first.kill();
  assert.equal(readFileSync(join(home, 'brain.pid'), 'utf8').split('\n')[0], String(first.child.pid), 'kill -9 leaves brain.pid');
  // A kill in the middle of a write also leaves node-sqlite3-wasm's lock directory (proved on real
  // processes in test/daemon/store/sqlite-store.crash-recovery.test.ts); make sure this start meets one.
  if (!existsSync(join(home, 'brain.db.lock'))) mkdirSync(join(home, 'brain.db.lock'));

  const second = await startBrain({ home });
  t.after(() => second.stop());
  assert.ok(second.lines.some((l) => l.includes('took over the lock of a brain that is no longer running')));
  assert.ok(second.lines.some((l) => l.includes('removed database locks left by a killed brain') && l.includes('brain.db.lock')));
  assert.equal(readFileSync(join(home, 'brain.pid'), 'utf8').split('\n')[0], String(second.child.pid));
  const note = await second.api(`/api/memory/notes/${id}`);
  assert.equal(note.status, 200);
  assert.equal(((await note.json()) as { text: string }).text, 'survives kill -9');
});
