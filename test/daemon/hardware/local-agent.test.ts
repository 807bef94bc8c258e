// The brain-local node-agent supervisor (daemon/hardware/local-agent.ts) with a real child process
// (test/fixtures/hardware/fake-agent.mjs): its arguments and key, logs into the brain's log, restart
// with backoff, no retry on 78/77, stop by SIGTERM then SIGKILL; and the per-run key verifier.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { LOCAL_NODE_ID, LocalAgentKey, LocalAgentSupervisor, loopbackUrl } from '../../../daemon/hardware/local-agent';

const SCRIPT = join(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'hardware', 'fake-agent.mjs');

function capture() {
  const lines: { msg: string; stream?: string; level: number; code?: number }[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
        done();
      },
    }),
  );
  return { logger, lines };
}

async function until(what: string, check: () => boolean, limitMs = 10_000): Promise<void> {
  for (let waited = 0; !check(); waited += 25) {
    if (waited > limitMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const listening = [{ host: '127.0.0.1', family: 'IPv4' as const, port: 9191 }];

void test('the child gets run --config --brain --node-id brain-local, its key in the environment and nothing of the brain\'s; its output goes into the brain\'s log', async (t) => {
  const { logger, lines } = capture();
  const key = new LocalAgentKey();
  const sup = new LocalAgentSupervisor({ script: SCRIPT, config: '/etc/board.json', key, logger, env: { FAKE_AGENT_MODE: 'run' } });
  t.after(() => sup.stop());
  sup.listening(listening);
  await until('the child to print', () => lines.some((l) => l.stream === 'stdout'));
  const printed = JSON.parse(lines.find((l) => l.stream === 'stdout')!.msg) as { argv: string[]; key: boolean; token: string | null };
  assert.deepEqual(printed.argv, ['run', '--config', '/etc/board.json', '--brain', 'http://127.0.0.1:9191', '--node-id', LOCAL_NODE_ID]);
  assert.equal(printed.key, true);
  assert.equal(printed.token, null, 'the brain\'s environment is not inherited');
  await until('stderr', () => lines.some((l) => l.stream === 'stderr' && l.msg === 'a line on stderr'));
  assert.equal(sup.status().state, 'running');
  sup.listening(listening);
  assert.equal(sup.status().starts, 1, 'a second bind does not start a second child');
});

void test('a crashing child is restarted with backoff; exit 78 (bad configuration) is not retried', async (t) => {
  const crash = capture();
  const sup = new LocalAgentSupervisor({ script: SCRIPT, config: 'c', key: new LocalAgentKey(), logger: crash.logger, env: { FAKE_AGENT_MODE: 'exit:1' } });
  t.after(() => sup.stop());
  sup.listening(listening);
  await until('two starts', () => sup.status().starts >= 2);
  const restarts = crash.lines.filter((l) => l.msg === 'local node-agent exited; restarting') as unknown as { restart_in_ms: number }[];
  assert.equal(restarts[0]?.restart_in_ms, 1000);
  await until('a second restart line', () => crash.lines.filter((l) => l.msg === 'local node-agent exited; restarting').length >= 2);
  assert.equal((crash.lines.filter((l) => l.msg === 'local node-agent exited; restarting')[1] as unknown as { restart_in_ms: number }).restart_in_ms, 2000, 'doubled');

  const bad = capture();
  const refused = new LocalAgentSupervisor({ script: SCRIPT, config: 'c', key: new LocalAgentKey(), logger: bad.logger, env: { FAKE_AGENT_MODE: 'exit:78' } });
  t.after(() => refused.stop());
  refused.listening(listening);
  await until('failed', () => refused.status().state === 'failed');
  await sleep(1500);
  assert.equal(refused.status().starts, 1, 'not restarted');
});

void test('stop sends SIGTERM and the child is gone; a child that ignores it is killed', async () => {
  const { logger } = capture();
  const sup = new LocalAgentSupervisor({ script: SCRIPT, config: 'c', key: new LocalAgentKey(), logger, env: { FAKE_AGENT_MODE: 'stubborn' } });
  sup.listening(listening);
  await until('running', () => sup.status().pid !== null);
  const pid = sup.status().pid!;
  await sleep(300);
  await sup.stop();
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
  assert.equal(sup.status().state, 'stopped');
});

void test('the per-run key proves node brain-local and nothing else; loopbackUrl picks an address the child can reach', () => {
  const key = new LocalAgentKey();
  assert.deepEqual(key.verify({ token: key.key }), { kind: 'node', id: LOCAL_NODE_ID });
  assert.equal(key.verify({ token: `${key.key}x` }), undefined);
  assert.equal(new LocalAgentKey().verify({ token: key.key }), undefined, 'a new run, a new key');
  assert.equal(loopbackUrl([{ host: '0.0.0.0', family: 'IPv4', port: 1 }]), 'http://127.0.0.1:1');
  assert.equal(loopbackUrl([{ host: '::1', family: 'IPv6', port: 2 }]), 'http://[::1]:2');
  assert.equal(loopbackUrl([{ host: '192.168.1.5', family: 'IPv4', port: 3 }]), null);
});
