// skills/host-functions.ts through runSkill: log is bounded in lines and bytes and ends with one
// marker, get_param hands out JSON copies (a skill that changes one changes nothing on the host),
// set_result refuses values with no JSON and results past the size bound, http_post sends a string as
// is and an object as JSON, replacing JSON.parse inside the skill does not change what crosses, and no
// more than MAX_PENDING_CALLS host calls wait at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSkill, type SkillOutcome } from '../../skills/sandbox';
import { LOG_TRUNCATED, MAX_LOG_BYTES, MAX_LOG_LINES, MAX_PENDING_CALLS, MAX_RESULT_BYTES, type HttpRequest, type SkillHost } from '../../skills/host-functions';

const requests: HttpRequest[] = [];
const host: SkillHost = {
  tools: ['echo'],
  callTool: async (_name, args) => args,
  http: async (request) => (requests.push(request), { status: 200, headers: {}, body: 'ok' }),
};
const run = (source: string, params: Record<string, unknown> = {}): Promise<SkillOutcome> => runSkill({ source, params, limits: { wallMs: 2000 }, host });

test('log keeps at most MAX_LOG_LINES lines and MAX_LOG_BYTES bytes, then one marker', async () => {
  const many = await run('for (let i = 0; i < 1000; i++) log("line", i)');
  assert.equal(many.logs.length, MAX_LOG_LINES);
  assert.equal(many.logs.at(-1), LOG_TRUNCATED);
  const big = await run('for (let i = 0; i < 100; i++) log("x".repeat(10000))');
  assert.ok(big.logs.join('').length <= MAX_LOG_BYTES + LOG_TRUNCATED.length);
  assert.equal(big.logs.at(-1), LOG_TRUNCATED);
});

test('get_param hands out JSON copies; a missing name is undefined', async () => {
  const params = { place: { city: 'Oslo' } };
  const out = await run('const p = get_param("place"); p.city = "changed"; [get_param("place").city, typeof get_param("none")]', params);
  assert.deepEqual(out, { ok: true, result: ['Oslo', 'undefined'], logs: [] });
  assert.equal(params.place.city, 'Oslo');
});

test('set_result refuses a value with no JSON and a result past its size bound', async () => {
  const fn = await run('set_result(function () {})');
  assert.equal(fn.ok === false && fn.kill, 'error');
  const big = await run(`set_result("x".repeat(${MAX_RESULT_BYTES}))`);
  assert.match(big.ok ? '' : big.message, /larger than/);
  const returned = await run(`"x".repeat(${MAX_RESULT_BYTES})`);
  assert.equal(returned.ok === false && returned.kill, 'error');
});

test('http_post sends a string as is and an object as JSON', async () => {
  requests.length = 0;
  await run('async function main() { await http_post("https://a.example.com", "raw"); await http_post("https://a.example.com", { a: 1 }) }');
  assert.deepEqual(requests, [
    { method: 'POST', url: 'https://a.example.com', body: 'raw' },
    { method: 'POST', url: 'https://a.example.com', body: '{"a":1}', headers: { 'content-type': 'application/json' } },
  ]);
});

test('replacing JSON inside the skill changes nothing that crosses', async () => {
  const out = await run('JSON.parse = () => "forged"; JSON.stringify = () => "\\"forged\\""; async function main() { return [get_param("a"), await call_tool("echo", { b: 2 })] }', { a: 1 });
  assert.deepEqual(out, { ok: true, result: [1, { b: 2 }], logs: [] });
});

test('no more than MAX_PENDING_CALLS host calls wait at once', async () => {
  const out = await run(`async function main() { const all = []; for (let i = 0; i < ${MAX_PENDING_CALLS + 1}; i++) all.push(call_tool("echo", { i })); return (await Promise.all(all)).length }`);
  assert.equal(out.ok === false && out.kill, 'error');
  assert.match(out.ok ? '' : out.message, new RegExp(`at most ${MAX_PENDING_CALLS}`));
  assert.deepEqual(await run(`async function main() { const all = []; for (let i = 0; i < ${MAX_PENDING_CALLS}; i++) all.push(call_tool("echo", { i })); return (await Promise.all(all)).length }`), { ok: true, result: MAX_PENDING_CALLS, logs: [] });
});
