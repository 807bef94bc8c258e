// /api/identity over app.inject with real files in a temp $SVC_HOME: templates on first start,
// revisions (a stale PUT is 409), PATCHes from the setup wizard, and the digital twin.
import { parseSettings } from '../../../daemon/config/load-settings';
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testApp, auth } from '../../helpers/app';
import { identityRoutes } from '../../../daemon/identity/identity-routes';
import { IdentityFiles } from '../../../daemon/identity/identity-files';
import { DigitalTwin, firstPerson } from '../../../daemon/identity/digital-twin';
import { SOUL_TEMPLATE, USER_TEMPLATE } from '../../../daemon/identity/identity-text';
import { FakeMemory } from '../agent/agent-fixtures';
import { agentMemory } from '../../../daemon/memory/agent-memory';

/** The brain's default (settings memory.search.relevance_floor). */
const FLOOR = parseSettings({}).memory.search.relevance_floor;

async function setup(t: TestContext) {
  const home = mkdtempSync(join(tmpdir(), 'svc-identity-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const files = new IdentityFiles(home);
  assert.deepEqual(files.start(), ['USER.md', 'SOUL.md']);
  assert.deepEqual(files.start(), [], 'existing files are never overwritten');
  const memory = new FakeMemory();
  const { app } = await testApp({ routes: [identityRoutes({ files, twin: new DigitalTwin(files, agentMemory(memory), { relevanceFloor: FLOOR }) })] });
  t.after(() => app.close());
  const call = async (method: 'GET' | 'PUT' | 'PATCH' | 'POST', url: string, payload?: object) => {
    const r = await app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });
    return { status: r.statusCode, body: r.json<Record<string, unknown>>() };
  };
  return { home, files, memory, call };
}

void test('files are created from templates and served with a revision', async (t) => {
  const { home, call } = await setup(t);
  const user = await call('GET', '/api/identity/user');
  assert.equal(user.body.content, USER_TEMPLATE);
  const soul = await call('GET', '/api/identity/soul');
  assert.equal(soul.body.content, SOUL_TEMPLATE);
  assert.equal(soul.body.name, 'svc');
  assert.equal((soul.body.rules as string[]).length, 3);
  assert.equal(readFileSync(join(home, 'SOUL.md'), 'utf8'), SOUL_TEMPLATE);
});

void test('PUT replaces USER.md; a PUT with a stale revision is a 409 and changes nothing', async (t) => {
  const { call, home } = await setup(t);
  const first = await call('GET', '/api/identity/user');
  const put = await call('PUT', '/api/identity/user', { content: '## About\nName: Ada\n', revision: first.body.revision as string });
  assert.equal(put.status, 200);
  assert.notEqual(put.body.revision, first.body.revision);
  const stale = await call('PUT', '/api/identity/user', { content: 'overwrite', revision: first.body.revision as string });
  assert.equal(stale.status, 409);
  assert.equal((stale.body.error as { code: string }).code, 'CONFLICT');
  assert.equal(readFileSync(join(home, 'USER.md'), 'utf8'), '## About\nName: Ada\n');
  assert.equal((await call('PUT', '/api/identity/user', { content: 'x'.repeat(70_000) })).status, 400);
});

void test('a hand edit of the file is seen on the next read', async (t) => {
  const { call, home } = await setup(t);
  writeFileSync(join(home, 'USER.md'), '## About\nName: Grace\nFavourite food: ramen\n');
  assert.match((await call('GET', '/api/identity/user')).body.content as string, /Grace/);
});

void test('PATCH sets the user name and the persona fields, keeping the rest', async (t) => {
  const { call } = await setup(t);
  assert.equal((await call('PATCH', '/api/identity/user', { name: 'Ada Lovelace' })).status, 200);
  assert.match((await call('GET', '/api/identity/user')).body.content as string, /^Name: Ada Lovelace$/m);
  const soul = await call('PATCH', '/api/identity/soul', { name: 'Jarvis', personality: 'Dry wit.' });
  assert.equal(soul.body.name, 'Jarvis');
  assert.equal(soul.body.personality, 'Dry wit.');
  assert.equal((soul.body.rules as string[]).length, 3);
  assert.equal((await call('PATCH', '/api/identity/soul', {})).status, 400);
});

void test('the twin answers from USER.md and memory, and says it does not know with low confidence', async (t) => {
  const { call, memory } = await setup(t);
  assert.equal((await call('GET', '/api/identity/twin')).body.ready, false);
  await call('PUT', '/api/identity/user', { content: '## About\nName: Ada\nFavourite food: ramen\n## Notes\nI walk the dog every morning.\n' });
  await memory.remember('Ada prefers green tea over coffee');
  const profile = await call('GET', '/api/identity/twin');
  assert.deepEqual(profile.body, { name: 'Ada', facts: 3, memory: true, ready: true });

  const food = await call('POST', '/api/identity/twin/ask', { question: 'What is your favourite food?' });
  assert.equal(food.body.answer, 'My favourite food is ramen.');
  assert.ok((food.body.confidence as number) >= 0.6);
  const tea = await call('POST', '/api/identity/twin/ask', { question: 'Tea or coffee?' });
  assert.match(tea.body.answer as string, /green tea/);
  const unknown = await call('POST', '/api/identity/twin/ask', { question: 'What is your blood type?' });
  assert.match(unknown.body.answer as string, /don't know/);
  assert.ok((unknown.body.confidence as number) <= 0.1);
  assert.deepEqual(unknown.body.evidence, []);
  assert.equal((await call('POST', '/api/identity/twin/ask', { question: '   ' })).status, 400);
});

void test('firstPerson turns facts into the user speaking', () => {
  assert.equal(firstPerson('Favourite food: ramen'), 'My favourite food is ramen.');
  assert.equal(firstPerson('The user likes tea'), 'I like tea.');
  assert.equal(firstPerson("User's dog is Rex."), 'My dog is Rex.');
  assert.equal(firstPerson('I walk every day'), 'I walk every day.');
});

void test('PATCH fields of SOUL.md and USER.md cannot inject a heading: line breaks and controls are 400, a leading # is text', async (t) => {
  const { call, home } = await setup(t);
  const before = { soul: readFileSync(join(home, 'SOUL.md'), 'utf8'), user: readFileSync(join(home, 'USER.md'), 'utf8') };
  const refused: [string, object][] = [
    ['/api/identity/soul', { personality: 'calm\n# Heading' }],
    ['/api/identity/soul', { style: 'short\r## Rules' }],
    ['/api/identity/soul', { name: 'Ada\u2028## Rules' }],
    ['/api/identity/soul', { rules: ['be kind', 'ok\n## Style'] }],
    ['/api/identity/soul', { name: 'A\u0000da' }],
    ['/api/identity/soul', { name: '   ' }],
    ['/api/identity/user', { name: 'Ada\n# Heading' }],
    ['/api/identity/user', { name: 'Ada\r# Heading' }],
  ];
  for (const [url, payload] of refused) {
    const r = await call('PATCH', url, payload);
    assert.equal(r.status, 400, JSON.stringify(payload));
  }
  assert.equal(readFileSync(join(home, 'SOUL.md'), 'utf8'), before.soul);
  assert.equal(readFileSync(join(home, 'USER.md'), 'utf8'), before.user);

  const soul = await call('PATCH', '/api/identity/soul', { name: '# Heading', personality: '## Rules', rules: ['> be brief'], style: '```' });
  assert.equal(soul.status, 200);
  assert.deepEqual([soul.body.name, soul.body.personality, soul.body.rules, soul.body.style], ['# Heading', '## Rules', ['> be brief'], '```']);
  const file = readFileSync(join(home, 'SOUL.md'), 'utf8');
  assert.deepEqual(file.split('\n').filter((l) => l.startsWith('#')), ['# SOUL.md — who the assistant is', '## Name', '## Personality', '## Rules', '## Style']);
  const user = await call('PATCH', '/api/identity/user', { name: "$' # Heading" });
  assert.equal(user.status, 200);
  const md = readFileSync(join(home, 'USER.md'), 'utf8');
  assert.equal(md.split('\n').length, before.user.split('\n').length);
  assert.match(md, /^Name: \$' # Heading$/m);
});
