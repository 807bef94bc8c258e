// The router: keyword classification, correction detection, and learned preferences that survive a
// restart (real SQLite file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../../../daemon/store/sqlite-store';
import { RoutePreferences } from '../../../../daemon/agent/router/route-preferences';
import { Router } from '../../../../daemon/agent/router/router';
import { newTurnId } from '../../../../daemon/agent/session-manager';
import { ScriptedProvider, makeAgent, say, silent } from '../agent-fixtures';

function withStore(t: { after: (fn: () => void) => void }): { open: () => SqliteStore } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-router-'));
  const opened: SqliteStore[] = [];
  t.after(() => {
    for (const s of opened) s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    open: () => {
      const s = new SqliteStore(join(dir, 'brain.db'), { synchronous: 'FULL', groupCommit: true, logger: silent });
      opened.push(s);
      return s;
    },
  };
}

void test('keywords pick a specialist; nothing recognisable goes to general', () => {
  const router = new Router(null);
  assert.equal(router.classify('turn on the kitchen light').specialist.name, 'home');
  assert.equal(router.classify('how did I sleep last night, and my heart rate?').specialist.name, 'health');
  assert.equal(router.classify('write a short poem about rain').specialist.name, 'creative');
  assert.equal(router.classify('explain why the sky is blue').specialist.name, 'research');
  assert.equal(router.classify('hello there').specialist.name, 'general');
  assert.equal(new Router(null, { enabled: false, learn: false }).classify('turn on the light').specialist.name, 'general');
});

void test('corrections are recognised in several phrasings, and only with a preference store', (t) => {
  const store = withStore(t).open();
  const prefs = new RoutePreferences(store);
  prefs.start();
  const router = new Router(prefs);
  for (const [text, to] of [
    ['that was a home question', 'home'],
    ["No, that's a health question.", 'health'],
    ['this should have gone to research', 'research'],
    ['route that to the creative specialist', 'creative'],
  ] as const) {
    assert.equal(router.correction(text), to, text);
  }
  assert.equal(router.correction('what is a home question?'), null);
  assert.equal(new Router(null).correction('that was a home question'), null);
});

void test('a correction is learned, used next time (same and similar questions) and survives a restart', async (t) => {
  const stores = withStore(t);
  const first = stores.open();
  const prefs = new RoutePreferences(first);
  prefs.start();
  const router = new Router(prefs);
  assert.equal(router.classify('is the garage warm enough for the plants').specialist.name, 'home');
  await router.learn('is the garage warm enough for the plants', 'creative');
  assert.equal(router.classify('is the garage warm enough for the plants').reason, 'pinned');
  assert.equal(router.classify('Is the garage warm enough for the plants?').specialist.name, 'creative');
  assert.equal(router.classify('are the plants ok').specialist.name, 'creative', 'learned term weights carry to similar questions');
  first.close();

  const again = new RoutePreferences(stores.open());
  again.start();
  assert.equal(new Router(again).classify('is the garage warm enough for the plants').specialist.name, 'creative');
});

void test('in a session, "that was a home question" re-routes the previous question without a model call', async (t) => {
  const store = withStore(t).open();
  const provider = new ScriptedProvider([() => say('some answer')]);
  const { agent } = makeAgent(provider, { store });
  const s = agent.sessions.open();
  const q = 'what should the evening be like';
  assert.equal((await agent.sessions.submit(s, q, newTurnId())).specialist, 'general');
  const ack = await agent.sessions.submit(s, 'that was a home question', newTurnId());
  assert.equal(ack.provider, 'router');
  assert.match(ack.text, /home specialist/);
  assert.equal(provider.requests.length, 1, 'the correction itself reached no provider');
  assert.equal((await agent.sessions.submit(s, q, newTurnId())).specialist, 'home');
  assert.match((provider.requests.at(-1)!.messages[0] as { content: string }).content, /home specialist/);
});
