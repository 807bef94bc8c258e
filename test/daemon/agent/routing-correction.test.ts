// A routing correction is learned by the router (real SQLite preference store) and acknowledged
// without a model; with no earlier question there is nothing to learn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../../daemon/store/sqlite-store';
import { RoutePreferences } from '../../../daemon/agent/router/route-preferences';
import { Router } from '../../../daemon/agent/router/router';
import { CORRECTION_SOURCE, respondToCorrection } from '../../../daemon/agent/routing-correction';
import { silent } from './agent-fixtures';

function router(t: { after: (fn: () => void) => void }): Router {
  const dir = mkdtempSync(join(tmpdir(), 'svc-correction-'));
  const store = new SqliteStore(join(dir, 'brain.db'), { synchronous: 'FULL', groupCommit: true, logger: silent });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const preferences = new RoutePreferences(store);
  preferences.start();
  return new Router(preferences);
}

void test('the previous question is learned as the named specialist, then acknowledged, quoted whole when short', async (t) => {
  const r = router(t);
  const q = 'what should the evening be like';
  assert.equal(r.classify(q).specialist.name, 'general');
  const said = await respondToCorrection(r, q, 'home');
  assert.equal(said, `Noted: I'll send questions like “${q}” to the home specialist from now on.`);
  assert.equal(r.classify(q).specialist.name, 'home');
  assert.deepEqual(CORRECTION_SOURCE, { provider: 'router', model: 'preferences' });
});

void test('a long question is quoted clipped to 80 characters, "…" included', async (t) => {
  const q = `${'why is the garden hose always tangled '.repeat(4)}?`;
  const said = await respondToCorrection(router(t), q, 'research');
  const quoted = /“(.*)”/.exec(said)?.[1] ?? '';
  assert.equal(quoted.length, 80);
  assert.equal(quoted, `${q.slice(0, 79)}…`);
});

void test('with no earlier question nothing is learned and the user is told how to correct', async (t) => {
  const r = router(t);
  const said = await respondToCorrection(r, null, 'health');
  assert.match(said, /no earlier question/);
  assert.match(said, /health question/);
});
