// The built bundle boots, answers /health without a token, guards /api, and exits 0 on SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBrain } from '../helpers/brain-process';

test('dist/svc.mjs serve boots, answers /health, guards /api and stops cleanly on SIGTERM', async (t) => {
  const brain = await startBrain();
  t.after(() => brain.kill());
  const health = await fetch(`${brain.url}/health`);
  assert.equal(health.status, 200);
  assert.equal((await health.json() as { status: string }).status, 'ok');
  assert.equal((await fetch(`${brain.url}/api/skills`)).status, 401);
  assert.equal((await brain.api('/api/nope')).status, 404);
  assert.equal(await brain.stop(), 0);
});
