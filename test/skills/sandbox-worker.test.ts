// skills/sandbox-worker.ts on one end of a MessageChannel in this thread (no worker): a run answers
// its outcome and the WebAssembly memory in bytes; host calls go out as messages and their answers come
// back as JSON; an error crosses as its kind, so a policy refusal is still a policy kill, a held call a
// held run and any other error a rejection the skill catches; a value with no JSON fails inside as it
// does with runSkill in the host's own thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { runSkill, type SkillOutcome } from '../../skills/sandbox';
import { serveRuns, type FromWorker, type HostAnswer, type HostCall } from '../../skills/sandbox-worker';

interface Served {
  outcome: SkillOutcome;
  heapBytes: number;
  calls: HostCall[];
}

/** One run served on a channel; `answer` plays the pool's side for each host call. */
function serve(source: string, answer: (call: HostCall) => HostAnswer, tools = ['echo']): Promise<Served> {
  const { port1, port2 } = new MessageChannel();
  serveRuns(port1);
  const calls: HostCall[] = [];
  return new Promise<Served>((resolve) => {
    port2.on('message', (message: FromWorker) => {
      if (message.type === 'call') {
        calls.push(message.call);
        port2.postMessage({ type: 'answer', callId: message.callId, answer: answer(message.call) });
        return;
      }
      port1.close();
      resolve({ outcome: message.outcome, heapBytes: message.heapBytes, calls });
    });
    port2.postMessage({ type: 'run', source, params: { n: 2 }, limits: { wallMs: 2000 }, tools });
  });
}

const json = (value: unknown): HostAnswer => ({ ok: true, json: JSON.stringify(value) });

test('a run answers its outcome and the WebAssembly memory of the thread', async () => {
  const served = await serve('function main(p) { log("n", p.n); return p.n * 21 }', () => json(null));
  assert.deepEqual(served.outcome, { ok: true, result: 42, logs: ['n 2'] });
  assert.ok(served.heapBytes >= 16 * 1024 * 1024 && served.heapBytes % 65536 === 0, String(served.heapBytes));
});

test('host calls go out as messages; their JSON answers reach the skill', async () => {
  const served = await serve('async function main() { const t = await call_tool("echo", { a: 1 }); const h = await http_post("https://x.example.com", { b: 2 }); return [t, h.status, await call_tool("echo")] }', (call) =>
    call.kind === 'http' ? json({ status: 201, headers: {}, body: '' }) : call.args === undefined || JSON.stringify(call.args) === '{}' ? { ok: true, json: undefined } : json({ got: call.args }),
  );
  assert.deepEqual(served.outcome, { ok: true, result: [{ got: { a: 1 } }, 201, null], logs: [] });
  assert.deepEqual(served.calls, [
    { kind: 'tool', name: 'echo', args: { a: 1 } },
    { kind: 'http', request: { method: 'POST', url: 'https://x.example.com', body: '{"b":2}', headers: { 'content-type': 'application/json' } } },
    { kind: 'tool', name: 'echo', args: {} },
  ]);
});

test('a policy error is a policy kill, a held call a held run, another error a rejection the skill catches', async () => {
  const source = 'async function main() { try { await call_tool("echo", {}) } catch (e) { return e.message } }';
  const policy = await serve(source, () => ({ ok: false, error: { kind: 'policy', name: 'PolicyRefusal', message: 'not allowed' } }));
  assert.deepEqual(policy.outcome, { ok: false, kill: 'policy', message: 'not allowed', logs: [] });
  const held = await serve(source, () => ({ ok: false, error: { kind: 'approval', name: 'ApprovalPending', message: 'held (request r1)', requestId: 'r1', tool: 'echo' } }));
  assert.deepEqual(held.outcome, { ok: false, held: { requestId: 'r1', tool: 'echo' }, message: 'held (request r1)', logs: [] });
  const failed = await serve(source, () => ({ ok: false, error: { kind: 'error', name: 'Error', message: 'tool failed' } }));
  assert.deepEqual(failed.outcome, { ok: true, result: 'tool failed', logs: [] });
});

test('an answer with no JSON ends the run as runSkill does in its own thread', async () => {
  const source = 'async function main() { return await call_tool("echo", {}) }';
  const inThread = await runSkill({ source, params: {}, limits: { wallMs: 2000 }, host: { tools: ['echo'], callTool: async () => 10n, http: () => Promise.reject(new Error('no http')) } });
  let thrown = '';
  try {
    JSON.stringify(10n);
  } catch (error) {
    thrown = (error as Error).message;
  }
  const served = await serve(source, () => ({ ok: true, unsendable: thrown }));
  assert.equal(inThread.ok ? null : inThread.kill, 'error');
  assert.deepEqual(served.outcome, inThread);
});
