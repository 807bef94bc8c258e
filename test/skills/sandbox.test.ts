// skills/sandbox.ts: each way a run ends (result, timeout, memory, error, policy, held), the entry
// conventions (main(params), the last expression, set_result), host promises awaited inside the wall
// time, no timers or modules in the context, and a property: any source either runs or ends with one
// of the four kills, never throwing out of runSkill and never hanging past its wall time.
// A tool call held for approval ends the run as held (not a kill), whatever the skill does after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KILL_REASONS, runSkill, type SkillOutcome } from '../../skills/sandbox';
import { ApprovalPending, PolicyRefusal, type SkillHost } from '../../skills/host-functions';

const host = (over: Partial<SkillHost> = {}): SkillHost => ({
  tools: ['echo'],
  callTool: async (name, args) => ({ name, args }),
  http: async (request) => ({ status: 200, headers: {}, body: request.url }),
  ...over,
});
const run = (source: string, wallMs = 1000, h: SkillHost = host()): Promise<SkillOutcome> =>
  runSkill({ source, params: { city: 'Oslo', n: 2 }, limits: { wallMs, memoryBytes: 16 * 1024 * 1024 }, host: h });

/** Ends within `bound` ms; the outcome. */
async function endsWithin(bound: number, outcome: Promise<SkillOutcome>): Promise<SkillOutcome> {
  const started = Date.now();
  const out = await outcome;
  assert.ok(Date.now() - started < bound, `took ${Date.now() - started} ms`);
  return out;
}

test('the last expression is the result; main(params) is called and awaited when defined', async () => {
  assert.deepEqual(await run('1 + 1'), { ok: true, result: 2, logs: [] });
  const out = await run('async function main(p) { return { city: p.city, twice: p.n * 2 } }');
  assert.deepEqual(out, { ok: true, result: { city: 'Oslo', twice: 4 }, logs: [] });
});

test('set_result wins over the returned value; undefined becomes null', async () => {
  assert.deepEqual(await run('set_result({ a: 1 }); 5'), { ok: true, result: { a: 1 }, logs: [] });
  assert.deepEqual(await run('function main() {}'), { ok: true, result: null, logs: [] });
});

test('an infinite loop ends as timeout near its wall time', async () => {
  const out = await endsWithin(5 * 200, run('for (;;) {}', 200));
  assert.equal(out.ok === false && out.kill, 'timeout');
});

test('a skill that catches everything still ends as timeout', async () => {
  const out = await endsWithin(5 * 200, run('for (;;) { try { for (;;) {} } catch (e) {} }', 200));
  assert.equal(out.ok === false && out.kill, 'timeout');
});

test('a memory bomb ends as memory, in many small blocks or in big ones', async () => {
  for (const bomb of ['let a = []; for (;;) a.push("x".repeat(1000) + a.length)', 'let b = []; for (;;) b.push(new Array(100000).fill(1))', 'let s = "x"; for (;;) s += s', 'function f() { return f() + 1 } f()']) {
    const out = await endsWithin(5000, run(bomb, 5000));
    assert.equal(out.ok === false && out.kill, 'memory', `${bomb}: ${JSON.stringify(out)}`);
  }
});

test('a skill that ends after using more than its limit in small blocks is still a memory kill', async () => {
  // About 40 MB in 1 kB strings against 16 MiB: QuickJS's own malloc limit alone would let it finish.
  const out = await run('let a = []; for (let i = 0; i < 40000; i++) a.push("x".repeat(1000) + i); a.length', 5000);
  assert.equal(out.ok === false && out.kill, 'memory', JSON.stringify(out));
});

test('a thrown error ends as error with its message', async () => {
  const out = await run('async function main() { throw new TypeError("no such city") }');
  assert.deepEqual(out, { ok: false, kill: 'error', message: 'TypeError: no such city', logs: [] });
  const syntax = await run('let = ;');
  assert.equal(syntax.ok === false && syntax.kill, 'error');
});

test('a result with no JSON (a cycle, a BigInt) ends as error', async () => {
  for (const source of ['const a = {}; a.a = a; a', '10n']) {
    const out = await run(source);
    assert.equal(out.ok === false && out.kill, 'error', source);
  }
});

test('no timers, modules or process in the context', async () => {
  const out = await run('[typeof setTimeout, typeof setInterval, typeof require, typeof process, typeof fetch].join()');
  assert.deepEqual(out, { ok: true, result: 'undefined,undefined,undefined,undefined,undefined', logs: [] });
  const imported = await run('import("fs")');
  assert.equal(imported.ok, false);
});

test('host promises are awaited: call_tool and http_get answer through the host ports', async () => {
  const out = await run('async function main() { const t = await call_tool("echo", { x: 1 }); const h = await http_get("https://api.example.com/a"); return [t, h.body] }');
  assert.deepEqual(out, { ok: true, result: [{ name: 'echo', args: { x: 1 } }, 'https://api.example.com/a'], logs: [] });
});

test('a tool the manifest does not list is a policy kill, even when the skill catches it', async () => {
  for (const source of ['async function main() { await call_tool("shell", {}) }', 'async function main() { try { await call_tool("shell", {}) } catch (e) {} return 1 }']) {
    const out = await run(source);
    assert.equal(out.ok === false && out.kill, 'policy');
    assert.match(out.ok === false ? out.message : '', /"shell" is not among the tools/);
  }
});

test('a listed tool the host refuses is a rejected promise the skill can catch', async () => {
  const refusing = host({ callTool: async () => Promise.reject(new Error('approval denied')) });
  const out = await run('async function main() { try { await call_tool("echo", {}) } catch (e) { return "caught: " + e.message } }', 1000, refusing);
  assert.deepEqual(out, { ok: true, result: 'caught: approval denied', logs: [] });
});

test('an egress refusal is a policy kill; another network failure is catchable', async () => {
  const refused = host({ http: async () => Promise.reject(new PolicyRefusal('10.0.0.1 is a private address')) });
  const out = await run('async function main() { try { await http_get("https://x.example.com") } catch (e) {} return 1 }', 1000, refused);
  assert.deepEqual(out, { ok: false, kill: 'policy', message: '10.0.0.1 is a private address', logs: [] });
  const failing = host({ http: async () => Promise.reject(new Error('ECONNRESET')) });
  assert.deepEqual(await run('async function main() { try { await http_get("https://x.example.com") } catch (e) { return e.message } }', 1000, failing), { ok: true, result: 'ECONNRESET', logs: [] });
});

test('a tool call held for approval ends the run as held, not a kill, whatever the skill does after', async () => {
  // Settled promises (not async functions), so both answers of the last source arrive before the skill resumes.
  const holding = host({ tools: ['echo', 'hold'], callTool: (name, args) => (name === 'hold' ? Promise.reject(new ApprovalPending('req-1', name)) : Promise.resolve({ name, args })) });
  const sources = [
    'async function main() { await call_tool("hold", {}); return 1 }',
    'async function main() { try { await call_tool("hold", {}) } catch (e) { log("caught", e.message) } return 2 }',
    'async function main() { call_tool("hold", {}).catch(() => 0); set_result(3); await http_get("https://a.example.com") }',
    // The held answer arrives with another one: the skill runs on (a loop) until the interrupt stops it.
    'async function main() { const a = call_tool("echo", {}); call_tool("hold", {}).catch(() => 0); await a; for (;;) {} }',
  ];
  for (const source of sources) {
    const out = await endsWithin(5 * 200, run(source, 5000, holding));
    assert.deepEqual(out, { ok: false, held: { requestId: 'req-1', tool: 'hold' }, message: 'call_tool: "hold" is held for approval (request req-1)', logs: [] }, source);
  }
});

test('a policy refusal wins over a held call in the same run', async () => {
  const holding = host({ callTool: async (name) => Promise.reject(new ApprovalPending('req-2', name)) });
  const out = await run('async function main() { await Promise.allSettled([call_tool("echo", {}), call_tool("shell", {})]) }', 1000, holding);
  assert.equal(out.ok ? null : out.kill, 'policy');
});

test('waiting on a slow host call counts against the wall time', async () => {
  const slow = host({ callTool: () => new Promise(() => undefined) });
  const out = await endsWithin(5 * 200, run('async function main() { return await call_tool("echo", {}) }', 200, slow));
  assert.equal(out.ok === false && out.kill, 'timeout');
});

test('a promise nothing can settle ends as error at once', async () => {
  const out = await endsWithin(1000, run('new Promise(() => {})', 5000));
  assert.equal(out.ok === false && out.kill, 'error');
});

test('logs are kept with the outcome, also of a kill', async () => {
  const out = await run('log("a", 1, { b: 2 }); throw new Error("x")');
  assert.deepEqual(out, { ok: false, kill: 'error', message: 'Error: x', logs: ['a 1 {"b":2}'] });
});

test('property: any source runs or ends with one of the four kills, within its wall time', async () => {
  const snippets = fc.constantFrom('for(;;){}', 'throw 1', 'log(1)', 'set_result(2)', 'await 1', 'call_tool("x")', 'http_get("https://a")', '[].push(', 'main', 'async function main(){return 3}', 'let a=[];for(;;)a.push({})', '"x".repeat(1e9)', 'JSON.parse = 0');
  const source = fc.oneof(fc.string({ maxLength: 40 }), fc.array(snippets, { maxLength: 4 }).map((s) => s.join(';')));
  await fc.assert(
    fc.asyncProperty(source, async (src) => {
      const out = await endsWithin(5 * 200 + 500, run(src, 200));
      assert.ok(out.ok || (KILL_REASONS as readonly unknown[]).includes(out.kill), JSON.stringify(out));
    }),
    { numRuns: 50 },
  );
});

test('200 runs leave the process memory flat (runtimes are disposed)', async () => {
  for (let i = 0; i < 20; i++) await run('let a = []; for (let i = 0; i < 1000; i++) a.push({ i }); a.length');
  const before = process.memoryUsage().rss;
  for (let i = 0; i < 200; i++) await run('let a = []; for (let i = 0; i < 1000; i++) a.push({ i }); a.length');
  const grown = process.memoryUsage().rss - before;
  assert.ok(grown < 32 * 1024 * 1024, `rss grew by ${grown} bytes`);
});
