// Black-box: the built brain (dist/svc.mjs serve) with a settings.json chain pointing at fake OpenAI
// and Anthropic servers on loopback, driven by the built CLI: svc key add (probe; secret from stdin),
// key list (no secret on screen), models list/test/pin (pin survives a restart), reset-cooldowns,
// and the zero-valued svc_llm_429_total series of every configured provider on /metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrain, SVC, tempHome, type BrainProcess } from '../helpers/brain-process';
import { openAiErrors, startOpenAiServer, textReply } from '../fakes/openai-server';
import { startAnthropicServer } from '../fakes/anthropic-server';

const OAI_KEY = 'sk-e2e-openai-0123456789';
const ANT_KEY = 'sk-ant-e2e-9876543210';

function svc(brain: BrainProcess, args: string[], stdin = ''): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SVC, ...args, '--url', brain.url], { env: { ...process.env, SVC_HOME: brain.home, SVC_API_TOKEN: brain.token }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
    child.stdin.end(stdin);
  });
}

void test('svc key and svc models drive the provider chain of a running brain', async (t) => {
  const oai = await startOpenAiServer();
  const ant = await startAnthropicServer();
  const home = tempHome();
  t.after(async () => {
    await oai.close();
    await ant.close();
    rmSync(home, { recursive: true, force: true });
  });
  oai.reply((req) => (req.apiKey === OAI_KEY ? textReply('ok') : openAiErrors.auth()));
  const chain = [
    { id: 'oai', kind: 'openai', base_url: oai.baseURL, model: 'gpt-fake-mini' },
    { id: 'claude', kind: 'anthropic', base_url: ant.baseURL, model: 'claude-fake-haiku' },
    { id: 'local', kind: 'local' },
  ];
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain } }));
  let brain = await startBrain({ home, keepHome: true });
  t.after(() => brain.kill());

  const metrics = await (await fetch(`${brain.url}/metrics`)).text();
  for (const id of ['oai', 'claude', 'local']) assert.match(metrics, new RegExp(`svc_llm_429_total\\{provider="${id}"\\} 0`));
  assert.match(metrics, /svc_llm_failover_chain_exhausted_total 0/);

  const refused = await svc(brain, ['key', 'add', 'oai', 'main'], 'sk-wrong-000000000000\n');
  assert.equal(refused.code, 1, refused.err);
  assert.match(refused.err, /not saved.*auth/);
  const added = await svc(brain, ['key', 'add', 'oai', 'main'], `${OAI_KEY}\n`);
  assert.equal(added.code, 0, added.err);
  assert.match(added.out, /added oai\/main \(fingerprint [0-9a-f]{12}; probe ok/);
  const viaEnv = spawn(process.execPath, [SVC, 'key', 'add', 'claude', 'work', '--secret-env', 'MY_KEY', '--url', brain.url], { env: { ...process.env, MY_KEY: ANT_KEY, SVC_API_TOKEN: brain.token }, stdio: ['ignore', 'pipe', 'inherit'] });
  assert.equal(await new Promise((r) => viaEnv.on('exit', r)), 0);
  assert.equal(ant.requests.at(-1)!.apiKey, ANT_KEY);

  const list = await svc(brain, ['key', 'list']);
  assert.equal(list.code, 0);
  assert.match(list.out, /oai\s+main\s+[0-9a-f]{12}\s+ok/);
  assert.match(list.out, /claude\s+work\s+[0-9a-f]{12}\s+ok/);
  for (const secret of [OAI_KEY, ANT_KEY, OAI_KEY.slice(-4), ANT_KEY.slice(-4)]) assert.ok(!list.out.includes(secret), 'no part of a key is printed');
  assert.ok(!brain.lines.join('\n').includes(OAI_KEY), 'no key in the brain log');

  const models = await svc(brain, ['models', 'list', 'oai']);
  assert.equal(models.code, 0, models.err);
  assert.match(models.out, /\* gpt-fake-mini/);
  const tested = await svc(brain, ['models', 'test', 'claude', '--json']);
  assert.equal(tested.code, 0, tested.err);
  const report = JSON.parse(tested.out) as { ok: boolean; model: string; latency_ms: number };
  assert.equal(report.ok, true);
  assert.equal(report.model, 'claude-fake-haiku');

  assert.equal((await svc(brain, ['models', 'pin', 'oai', 'gpt-fake'])).code, 0);
  assert.equal((await svc(brain, ['key', 'reset-cooldowns'])).out.trim(), 'cleared 0 cooldowns');
  assert.equal(await brain.stop(), 0);
  brain = await startBrain({ home, keepHome: true });
  const overview = await svc(brain, ['models', 'list', '--json']);
  const providers = JSON.parse(overview.out) as { id: string; model: string; pinned_model: string | null; state: string }[];
  assert.deepEqual(providers.map((p) => `${p.id}:${p.model}:${p.state}`), ['oai:gpt-fake:ok', 'claude:claude-fake-haiku:ok', 'local:sentences-v1:ok']);
  assert.equal(providers[0]!.pinned_model, 'gpt-fake', 'the pin survived the restart');

  const removed = await svc(brain, ['key', 'remove', 'oai', 'main']);
  assert.equal(removed.code, 0);
  assert.equal((await svc(brain, ['key', 'remove', 'oai', 'main'])).code, 1);
  assert.equal(await brain.stop(), 0);
});

void test('a provider whose every key is disabled: status names the provider answering, models list says unavailable, the local agent says why', { timeout: 120_000 }, async (t) => {
  const oai = await startOpenAiServer();
  const home = tempHome();
  t.after(async () => {
    await oai.close();
    rmSync(home, { recursive: true, force: true });
  });
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'oai', kind: 'openai', base_url: oai.baseURL, model: 'gpt-fake-mini' }, { id: 'local', kind: 'local' }] } }));
  const brain = await startBrain({ home, keepHome: true });
  t.after(() => brain.kill());
  oai.reply(() => textReply('ok'));
  assert.equal((await svc(brain, ['key', 'add', 'oai', 'main'], `${OAI_KEY}\n`)).code, 0);
  const status = async (): Promise<{ id: string; kind: string }> => ((await (await brain.api('/api/dashboard/status')).json()) as { provider: { id: string; kind: string } }).provider;
  assert.deepEqual(await status(), { id: 'oai', kind: 'openai' });

  oai.reply(() => openAiErrors.auth()); // the key is revoked
  const first = await svc(brain, ['write me a poem']);
  assert.equal(first.code, 0, first.err);
  assert.match(first.out, /No model can answer right now: oai: .*svc key recover/);
  assert.doesNotMatch(first.out, /connect a model/);
  const again = await svc(brain, ['write me a poem']);
  assert.match(again.out, /oai: key main disabled after auth until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ; once the key is fixed run `svc key recover`/);
  assert.deepEqual(await status(), { id: 'local', kind: 'local' });
  assert.match((await svc(brain, ['how are you?'])).out, /answering with local/);
  const overview = JSON.parse((await svc(brain, ['models', 'list', '--json'])).out) as { id: string; state: string }[];
  assert.deepEqual(overview.map((p) => `${p.id}:${p.state}`), ['oai:unavailable', 'local:ok']);
  assert.ok(!brain.lines.join('\n').includes(OAI_KEY), 'no key in the brain log');
});
