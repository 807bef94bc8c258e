// Black box, issue 8 §4 and §5: the built brain, started under umask 000, with a provider that echoes
// the key back in its error bodies in every encoding (raw, URL- and form-encoded, JSON-escaped, base64
// alone and inside Basic auth, masked "first 8 + last 4"), with a key holding / + = " \ . After a
// refused probe, chat turns, a model test and cooldowns, the key is in no form in the brain's log, its
// database file, the chat answers or /api/providers; every entry of $SVC_HOME is 0600/0700.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrain, tempHome } from '../helpers/brain-process';
import { connect } from '../helpers/session-client';
import { startOpenAiServer, type FakeReply } from '../fakes/openai-server';

const KEY = 'sk-e2e/+="\\Xy9_q~Zk1-AbCdEfGh';
const CANDIDATE = 'sk-cand/+="\\Qw8_p~Yj2-ZyXwVuTs';

const form = (s: string): string => new URLSearchParams({ k: s }).toString().slice(2);
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** Every form a leak could take: the encodings, and each run of 8 characters of the key. */
function forms(key: string): string[] {
  const whole = [key, encodeURIComponent(key), form(key), JSON.stringify(key).slice(1, -1), JSON.stringify(JSON.stringify(key)).slice(1, -1), b64(key), Buffer.from(key).toString('base64url')];
  const runs = Array.from({ length: key.length - 7 }, (_, i) => key.slice(i, i + 8));
  return [...whole, ...runs, ...runs.map((r) => JSON.stringify(r).slice(1, -1)), ...runs.map(encodeURIComponent)];
}

function leaks(haystack: string | Buffer, key: string): string[] {
  const h = typeof haystack === 'string' ? Buffer.from(haystack) : haystack;
  return forms(key).filter((f) => h.includes(Buffer.from(f)));
}

/** A provider error that repeats the key it was sent in every encoding (status and shape vary). */
function echo(key: string, status: number, shape: 'message' | 'fields'): FakeReply {
  if (shape === 'fields') return { kind: 'error', status, body: { error: { type: 'invalid_request_error', code: 'invalid_api_key', param: null, key } } };
  const message = `Key ${key} refused; url=https://api.invalid/v1?key=${encodeURIComponent(key)}&f=${form(key)}; basic=${b64(`user:${key}`)}; b64=${b64(key)}; masked=${key.slice(0, 8)}****${key.slice(-4)}`;
  return { kind: 'error', status, body: { error: { message, type: 'requests', param: null, code: status === 429 ? 'rate_limit_exceeded' : 'invalid_api_key' } } };
}

void test('a key echoed by a provider in every encoding reaches no log, database, answer or API response; $SVC_HOME is private under umask 000', async (t) => {
  const oai = await startOpenAiServer();
  t.after(() => oai.close());
  let next: (key: string) => FakeReply = (key) => echo(key, 401, 'message');
  oai.reply((req) => next(req.apiKey ?? ''));

  const previous = process.umask(0);
  const home = tempHome();
  t.after(() => rmSync(home, { recursive: true, force: true }));
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'oai', kind: 'openai', base_url: oai.baseURL, model: 'gpt-fake-mini' }] } }));
  const brain = await startBrain({ home }).finally(() => process.umask(previous));
  t.after(() => brain.kill());

  // A refused candidate key: the probe's error echoes it; the 422 must not.
  const refused = await brain.api('/api/providers/oai/keys', { method: 'POST', body: JSON.stringify({ label: 'main', secret: CANDIDATE }) });
  assert.equal(refused.status, 422);
  const refusedBody = await refused.text();
  assert.match(refusedBody, /KEY_PROBE_FAILED/);
  assert.deepEqual(leaks(refusedBody, CANDIDATE), []);
  assert.equal((await brain.api('/api/providers/oai/keys', { method: 'POST', body: JSON.stringify({ label: 'main', secret: KEY, probe: false }) })).status, 201);

  const c = await connect(brain);
  t.after(() => c.ws.close());
  const opened = c.next('session_opened');
  c.ws.send(JSON.stringify({ type: 'session_open', session_id: '', payload: {} }));
  const sid = (await opened).session_id;
  const answers: string[] = [];
  const say = async (text: string): Promise<void> => {
    const answer = c.next('text_response');
    c.ws.send(JSON.stringify({ type: 'text_command', session_id: sid, payload: { text } }));
    const r = await answer;
    assert.ok(r.type === 'text_response');
    answers.push(r.payload.text);
  };
  const resetCooldowns = async (): Promise<void> => {
    assert.equal((await brain.api('/api/providers/cooldowns/reset', { method: 'POST' })).status, 200);
  };

  next = (key) => echo(key, 429, 'message');
  await say('hello there');
  const cooling = await (await brain.api('/api/providers')).text();
  assert.match(cooling, /\[REDACTED\]/, 'the echo reached the cooldown and was scrubbed there');
  await resetCooldowns();
  const modelTest = await (await brain.api('/api/providers/oai/models/test', { method: 'POST' })).text();
  await resetCooldowns();
  next = (key) => echo(key, 401, 'fields');
  await say('hello again');
  assert.ok(oai.requests.some((r) => r.apiKey === KEY), 'the brain called the provider with the key');

  const outputs: Record<string, string | Buffer> = {
    answers: answers.join('\n'),
    'GET /api/providers (cooling)': cooling,
    'GET /api/providers': await (await brain.api('/api/providers')).text(),
    'GET /api/providers/keys': await (await brain.api('/api/providers/keys')).text(),
    'models test': modelTest,
  };
  const modes = readdirSync(home, { recursive: true }).map((name) => [String(name), statSync(join(home, String(name)))] as const);
  // Stopped, so the session's episode (which quotes the failed turns) is written too.
  const code = await brain.stop();
  assert.equal(code, 0);
  for (const name of readdirSync(home)) {
    if (name === 'vault.json' || !statSync(join(home, name)).isFile()) continue; // the vault holds the key, encrypted
    outputs[name] = readFileSync(join(home, name));
  }
  assert.ok(Buffer.from(outputs['brain.db']!).includes('[REDACTED]'), 'brain.db holds the scrubbed cooldown message');
  outputs.log = brain.lines.join('\n');
  assert.match(String(outputs.log), /provider failed: .*\[REDACTED\]/, 'the failure was logged, scrubbed');

  for (const [where, text] of Object.entries(outputs)) {
    assert.deepEqual(leaks(text, KEY), [], `the key leaked into ${where}`);
    assert.deepEqual(leaks(text, CANDIDATE), [], `the candidate key leaked into ${where}`);
  }
  assert.ok(modes.some(([name]) => name === 'brain.db') && modes.some(([name]) => name === 'brain.pid'));
  for (const [name, st] of modes) assert.equal(st.mode & 0o777, st.isDirectory() ? 0o700 : 0o600, `${name} is ${(st.mode & 0o777).toString(8)}`);
  assert.equal(statSync(home).mode & 0o777, 0o700);
});
