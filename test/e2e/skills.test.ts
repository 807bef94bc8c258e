// Skills on the built brain (dist/svc.mjs serve), black-box over HTTP, from an empty home: GET
// /api/skills answers spec 2.8's shape; a skill signed with signSkillDir installs once its publisher
// key is trusted (PUT /api/publishers/keys/:key_id) and runs; a skill calling the privileged run_command
// ends held and its request is in GET /api/approvals; a busy loop is killed as timeout and a memory bomb
// as memory, each counted in svc_sandbox_kills_total on /metrics; an unsigned install is 422
// UnverifiedManifest (reason unsigned), and with allow_unsigned 201 with an unsigned_install entry in
// GET /api/audit; after a restart the skills are still there and active (their tools registered once
// they have loaded, just after the brain listens); a removed skill is gone, and after the next restart so is its tool. Then the agent: a
// scripted model (the fake OpenAI server) calls a skill's tool, and the skill's result reaches it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrain, tempHome, type BrainProcess } from '../helpers/brain-process';
import { connect, waitForFrame } from '../helpers/session-client';
import { startOpenAiServer, type FakeReply } from '../fakes/openai-server';
import { publisherKey, skillArchive, skillDir } from './fixtures/skill-dirs';

interface Answer {
  status: number;
  body: unknown;
}

async function call(brain: BrainProcess, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await brain.api(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
}

async function metric(brain: BrainProcess, series: string): Promise<number | undefined> {
  const text = await (await brain.api('/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

type Item = { id: string; name: string; version: string; status: string };
const listed = async (brain: BrainProcess): Promise<Item[]> => ((await call(brain, 'GET', '/api/skills')).body as { skills: Item[] }).skills;

void test('skills on the built brain: install signed, run, held, killed, unsigned audited, restart, delete', { timeout: 120_000 }, async (t) => {
  const home = tempHome('svc-e2e-skills-');
  const work = mkdtempSync(join(tmpdir(), 'svc-e2e-skills-src-'));
  t.after(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ skills: { wall_ms: 1500, memory_mb: 16 } }));
  let brain = await startBrain({ home, keepHome: true });
  t.after(() => brain.stop());

  // Spec 2.8: {skills: [{id, name, version, status}]} (the first-party skills of the build, if any).
  const first = await call(brain, 'GET', '/api/skills');
  assert.equal(first.status, 200);
  const builtin = (first.body as { skills: Item[] }).skills;
  for (const item of builtin) assert.deepEqual(Object.keys(item).sort(), ['id', 'name', 'status', 'version']);

  const key = publisherKey();
  assert.equal((await call(brain, 'PUT', `/api/publishers/keys/${key.keyId}`, { public_key: key.publicKey })).status, 200);
  const hello = await call(brain, 'POST', '/api/skills/install', { path: skillArchive(skillDir(work, { id: 'hello' }, key)) });
  assert.equal(hello.status, 201, JSON.stringify(hello.body));
  assert.deepEqual(hello.body, { skill: { id: 'hello', name: 'Skill hello', version: '1.0.0', status: 'active' }, signed_by: key.keyId, unsigned: false, upgraded_from: null });
  const ran = await call(brain, 'POST', '/api/skills/hello/execute', { params: { name: 'Ada' } });
  assert.equal(ran.status, 200, JSON.stringify(ran.body));
  assert.deepEqual((ran.body as { status: string; result: unknown }).result, { hello: 'Ada' });
  assert.equal(await metric(brain, 'svc_tool_denials_total{tool="skill_hello"}'), 0, 'its tool is registered');

  // A privileged tool call is held for approval; the run ends held with the request id.
  const privileged = skillDir(work, { id: 'sysadmin', tools: ['run_command'], source: `async function main() { return call_tool('run_command', { argv: ['touch', '/tmp/never'] }); }` }, key);
  assert.equal((await call(brain, 'POST', '/api/skills/install', { path: privileged })).status, 201);
  const held = (await call(brain, 'POST', '/api/skills/sysadmin/execute', {})).body as { status: string; request_id: string };
  assert.equal(held.status, 'held', JSON.stringify(held));
  const approvals = (await call(brain, 'GET', '/api/approvals')).body as { approvals: { request_id: string; tool_name: string; args: unknown }[] };
  const request = approvals.approvals.find((a) => a.request_id === held.request_id);
  assert.ok(request, JSON.stringify(approvals));
  assert.equal(request.tool_name, 'run_command');
  assert.deepEqual(request.args, { argv: ['touch', '/tmp/never'] });

  // Kills, counted by reason.
  assert.equal(await metric(brain, 'svc_sandbox_kills_total{reason="timeout"}'), 0);
  await call(brain, 'POST', '/api/skills/install', { path: skillDir(work, { id: 'spin', source: 'while (true) {}' }, key) });
  const spun = (await call(brain, 'POST', '/api/skills/spin/execute', {})).body as { status: string; kill: string };
  assert.deepEqual([spun.status, spun.kill], ['killed', 'timeout'], JSON.stringify(spun));
  assert.equal(await metric(brain, 'svc_sandbox_kills_total{reason="timeout"}'), 1);
  await call(brain, 'POST', '/api/skills/install', { path: skillDir(work, { id: 'bomb', source: 'let s = "x"; for (;;) s += s;' }, key) });
  const bombed = (await call(brain, 'POST', '/api/skills/bomb/execute', {})).body as { status: string; kill: string };
  assert.deepEqual([bombed.status, bombed.kill], ['killed', 'memory'], JSON.stringify(bombed));
  assert.equal(await metric(brain, 'svc_sandbox_kills_total{reason="memory"}'), 1);
  assert.equal(await metric(brain, 'svc_sandbox_kills_total{reason="policy"}'), 0, 'a held run is not a kill');

  // Unsigned: 422 with the spec 7 body; allowed on purpose, 201 and audited.
  const loose = skillDir(work, { id: 'loose' });
  const refused = await call(brain, 'POST', '/api/skills/install', { path: loose });
  assert.equal(refused.status, 422);
  assert.deepEqual({ ...(refused.body as object), message: undefined }, { error: 'UnverifiedManifest', reason: 'unsigned', message: undefined });
  const admitted = await call(brain, 'POST', '/api/skills/install', { path: loose, allow_unsigned: true });
  assert.equal(admitted.status, 201, JSON.stringify(admitted.body));
  assert.equal((admitted.body as { unsigned: boolean }).unsigned, true);
  const audit = (await call(brain, 'GET', '/api/audit?tag=unsigned_install')).body as { entries: { tag: string; subject: string; actor: string }[] };
  assert.deepEqual(audit.entries.map((e) => [e.tag, e.subject]), [['unsigned_install', 'skill:loose@1.0.0']]);

  // Restart: everything installed is still there and active, its tool registered at start.
  await brain.stop();
  brain = await startBrain({ home, keepHome: true });
  const after = await listed(brain);
  for (const id of ['hello', 'sysadmin', 'spin', 'bomb', 'loose']) assert.equal(after.find((s) => s.id === id)?.status, 'active', `${id}: ${JSON.stringify(after)}`);
  assert.equal(await metric(brain, 'svc_tool_denials_total{tool="skill_hello"}'), 0);
  assert.equal(((await call(brain, 'POST', '/api/skills/hello/execute', {})).body as { status: string }).status, 'ok');

  // Delete: gone from the list and the API; after the next start its tool is not registered either.
  assert.deepEqual((await call(brain, 'DELETE', '/api/skills/hello')).body, { id: 'hello', removed: true });
  assert.equal((await listed(brain)).some((s) => s.id === 'hello'), false);
  assert.equal((await call(brain, 'POST', '/api/skills/hello/execute', {})).status, 404);
  await brain.stop();
  brain = await startBrain({ home, keepHome: true });
  // The skills load just after the brain listens; /api/skills answers once they have (and their tools are registered).
  assert.equal((await listed(brain)).length, builtin.length + 4);
  assert.equal(await metric(brain, 'svc_tool_denials_total{tool="skill_hello"}'), undefined, 'no skill_hello tool after the restart');
  assert.equal(await metric(brain, 'svc_tool_denials_total{tool="skill_loose"}'), 0);
});

void test('the agent calls a skill\'s tool: a scripted model asks for skill_greeter, the skill runs in the sandbox and its result goes back to the model', { timeout: 90_000 }, async (t) => {
  const fake = await startOpenAiServer();
  t.after(() => fake.close());
  const home = tempHome('svc-e2e-skills-agent-');
  const work = mkdtempSync(join(tmpdir(), 'svc-e2e-skills-agent-src-'));
  t.after(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { chain: [{ id: 'openai', kind: 'openai', base_url: fake.baseURL, keyless: true }] } }));
  fake.reply((req): FakeReply => {
    const messages = (Array.isArray(req.body?.messages) ? req.body.messages : []) as { role: string; content?: unknown }[];
    if (messages[0]?.role === 'system' && String(messages[0].content).startsWith('Extract the facts')) return { kind: 'text', chunks: ['{"triples":[]}'] };
    const last = messages.at(-1);
    if (last?.role === 'user' && String(last.content) === 'greet Ada') return { kind: 'tool_calls', calls: [{ id: 'call_1', name: 'skill_greeter', argumentChunks: ['{"name":"Ada"}'] }] };
    if (last?.role === 'tool') return { kind: 'text', chunks: [`The skill said: ${String(last.content)}`] };
    return { kind: 'text', chunks: ['Hello from fake'] };
  });
  const brain = await startBrain({ home, keepHome: true });
  t.after(() => brain.stop());
  const key = publisherKey();
  assert.equal((await call(brain, 'PUT', `/api/publishers/keys/${key.keyId}`, { public_key: key.publicKey })).status, 200);
  assert.equal((await call(brain, 'POST', '/api/skills/install', { path: skillDir(work, { id: 'greeter', source: 'function main(p) { return { greeting: "hello " + p.name }; }' }, key) })).status, 201);

  const { ws, frames } = await connect(brain);
  t.after(() => ws.close());
  ws.send(JSON.stringify({ type: 'text_command', session_id: '', payload: { text: 'greet Ada' } }));
  const answer = await waitForFrame(ws, frames, 'text_response', (m) => JSON.stringify(m).includes('The skill said'));
  assert.match(JSON.stringify(answer), /hello Ada/);
  const toolTurn = fake.requests.find((r) => JSON.stringify(r.body?.messages ?? []).includes('"role":"tool"'));
  assert.ok(toolTurn, 'the tool result went back to the model');
  assert.match(JSON.stringify(toolTurn.body?.messages), /hello Ada/);
  const runs = ((await call(brain, 'GET', '/api/skills/greeter')).body as { recent_runs: { trigger: string; status: string }[] }).recent_runs;
  assert.deepEqual(runs.map((r) => [r.trigger, r.status]), [['tool', 'ok']]);
});
