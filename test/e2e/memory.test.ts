// Memory through the built brain and the svc CLI: note → search → restart → still there; bad input is
// 400; the human and --json outputs of svc memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { SVC, startBrain, tempHome } from '../helpers/brain-process';
import type { Note, SearchResponse } from '../../protocol/memory';

const svc = (url: string, home: string, token: string, args: string[]) =>
  spawnSync(process.execPath, [SVC, ...args, '--url', url], { env: { ...process.env, SVC_HOME: home, SVC_API_TOKEN: token }, encoding: 'utf8', timeout: 20_000 });

void test('svc memory note/search/decay/backend against a real brain; notes survive a restart', async (t) => {
  const home = tempHome();
  let brain = await startBrain({ home, keepHome: true });
  t.after(async () => {
    await brain.stop();
    rmSync(home, { recursive: true, force: true });
  });
  const noted = svc(brain.url, home, brain.token, ['memory', 'note', 'The boiler service is booked for 3 March', '--tags', 'home,boiler', '--json']);
  assert.equal(noted.status, 0, noted.stderr);
  const note = JSON.parse(noted.stdout) as Note;
  assert.deepEqual(note.tags, ['home', 'boiler']);
  const human = svc(brain.url, home, brain.token, ['memory', 'search', 'when is the boiler service']);
  assert.equal(human.status, 0);
  assert.match(human.stdout, /note\s+.*The boiler service is booked/);
  const nothing = svc(brain.url, home, brain.token, ['memory', 'search', 'saxophone lessons']);
  assert.match(nothing.stdout, /nothing in memory matches/);
  const bad = await brain.api('/api/memory/search?q=x&limit=500');
  assert.equal(bad.status, 400);
  assert.equal(svc(brain.url, home, brain.token, ['memory', 'decay', '--set', 'half_life_days=abc']).status, 2);
  const decay = svc(brain.url, home, brain.token, ['memory', 'decay', '--set', 'half_life_days=45']);
  assert.match(decay.stdout, /half-life 45 days/);
  assert.match(svc(brain.url, home, brain.token, ['memory', 'backend']).stdout, /1 notes/);

  assert.equal(await brain.stop(), 0);
  brain = await startBrain({ home, keepHome: true });
  const again = await brain.api(`/api/memory/notes/${note.id}`);
  assert.equal(again.status, 200);
  const json = svc(brain.url, home, brain.token, ['memory', 'search', 'boiler', '--json']);
  assert.deepEqual((JSON.parse(json.stdout) as SearchResponse).results.map((r) => r.id), [note.id]);
  assert.match(svc(brain.url, home, brain.token, ['memory', 'decay']).stdout, /half-life 45 days/);
});

// Regression (reported while wiring the agent): every turn searches memory before its `remember`
// tool runs, so a search for words never seen before must not hide a note stored right after it.
void test('a search for unseen words does not hide a note stored afterwards, then or after a restart', async (t) => {
  const home = tempHome();
  let brain = await startBrain({ home, keepHome: true });
  t.after(async () => {
    await brain.stop();
    rmSync(home, { recursive: true, force: true });
  });
  const search = async (q: string) => ((await (await brain.api(`/api/memory/search?q=${encodeURIComponent(q)}`)).json()) as SearchResponse).results;
  assert.deepEqual(await search('spare key'), []);
  const created = await brain.api('/api/memory/note', { method: 'POST', body: JSON.stringify({ text: 'the spare key is under the blue pot' }) });
  assert.equal(created.status, 201);
  const id = ((await created.json()) as Note).id;
  assert.equal((await search('spare key'))[0]?.id, id);
  await brain.stop();
  brain = await startBrain({ home, keepHome: true });
  assert.equal((await search('spare key'))[0]?.id, id);
});
