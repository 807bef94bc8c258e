// SVC_METRICS_PUBLIC from a real off-loopback address (spec 4.12, 7: 404 "identical to an unmounted
// endpoint"). The brain runs inside a network namespace this test creates, listening on :: (IPv4
// and IPv6); a veth pair links it to this process on a private test subnet (10.231.N.0/30 and
// fd31:231:N::/64). Nothing listens on the machine's own interfaces. Needs root for `ip netns`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { SVC } from '../helpers/brain-process';
import { isRoot, runTool, runToolOk } from '../helpers/external-tools';

const N = (process.pid % 200) + 20;
const NS = `svc-metrics-${process.pid}`;
const HOST_IF = `svcm${process.pid}h`;
const NS_IF = `svcm${process.pid}n`;
const HOST_V4 = `10.231.${N}.1`;
const BRAIN_V4 = `10.231.${N}.2`;
const HOST_V6 = `fd31:231:${N}::1`;
const BRAIN_V6 = `fd31:231:${N}::2`;

async function createNamespace(): Promise<void> {
  const taken = (await runToolOk('ip', ['-o', 'addr'])).stdout;
  assert.ok(!taken.includes(`10.231.${N}.`) && !taken.includes(`fd31:231:${N}:`), `test subnet 10.231.${N}.0/30 is already in use here:\n${taken}`);
  await runTool('ip', ['netns', 'del', NS]); // a namespace left by a killed run with the same pid
  const steps: string[][] = [
    ['netns', 'add', NS],
    ['link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', NS_IF],
    ['link', 'set', NS_IF, 'netns', NS],
    ['addr', 'add', `${HOST_V4}/30`, 'dev', HOST_IF],
    ['addr', 'add', `${HOST_V6}/64`, 'dev', HOST_IF, 'nodad'],
    ['link', 'set', HOST_IF, 'up'],
    ['-n', NS, 'addr', 'add', `${BRAIN_V4}/30`, 'dev', NS_IF],
    ['-n', NS, 'addr', 'add', `${BRAIN_V6}/64`, 'dev', NS_IF, 'nodad'],
    ['-n', NS, 'link', 'set', NS_IF, 'up'],
    ['-n', NS, 'link', 'set', 'lo', 'up'],
  ];
  for (const args of steps) await runToolOk('ip', args);
}

interface NamespacedBrain {
  port: number;
  stop(): Promise<void>;
}

/** dist/svc.mjs serve inside the namespace on [::]:<ephemeral>, with a temp home; port from its log line. */
async function startBrainInNamespace(env: Record<string, string>): Promise<NamespacedBrain> {
  const home = mkdtempSync(join(tmpdir(), 'svc-netns-'));
  const inherited = { ...process.env };
  delete inherited.SVC_METRICS_PUBLIC;
  delete inherited.SVC_METRICS_ENDPOINT;
  const child = spawn('ip', ['netns', 'exec', NS, process.execPath, SVC, 'serve', '--host', '::', '--port', '0'], {
    env: { ...inherited, SVC_HOME: home, SVC_LOG_LEVEL: 'info', SVC_API_TOKEN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(home, { recursive: true, force: true });
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`brain did not listen within 15 s\n${output}`)), 15_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        output += `${line}\n`;
        const m = /"msg":"svc brain listening on http:\/\/[^"]*:(\d+)"/.exec(line);
        if (!m) return;
        clearTimeout(timer);
        resolve(Number(m[1]));
      });
      void exited.then(() => reject(new Error(`brain exited before listening\n${output}`)));
    });
    return { port, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A request from inside the namespace, to its own loopback. */
async function loopbackStatus(url: string): Promise<string> {
  const r = await runToolOk('ip', ['netns', 'exec', NS, 'curl', '-sS', '-o', '/dev/null', '-w', '%{http_code} %{content_type}', '--max-time', '5', url]);
  return r.stdout;
}

async function snapshot(url: string, path: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const response = await fetch(url.replace('{path}', path));
  const headers = Object.fromEntries([...response.headers].filter(([k]) => k !== 'date'));
  return { status: response.status, headers, body: (await response.text()).replace(path, '<path>') };
}

const EXPOSITION = 'text/plain; version=0.0.4; charset=utf-8';

void test('SVC_METRICS_PUBLIC gates /metrics for callers off loopback; loopback is always served', { skip: isRoot() ? false : 'needs root to create a network namespace (ip netns add); CI runs as root' }, async (t) => {
  t.after(() => runTool('ip', ['netns', 'del', NS]));
  await createNamespace();
  const remote = (port: number): string[] => [`http://${BRAIN_V4}:${port}{path}`, `http://[${BRAIN_V6}]:${port}{path}`];
  const loopback = (port: number): string[] => [`http://127.0.0.1:${port}/metrics`, `http://[::1]:${port}/metrics`, `http://localhost:${port}/metrics`];

  for (const publicValue of [undefined, 'true', '0']) {
    await t.test(`SVC_METRICS_PUBLIC=${publicValue ?? '(unset)'}: off loopback gets the unmounted-route 404`, async () => {
      const brain = await startBrainInNamespace(publicValue === undefined ? {} : { SVC_METRICS_PUBLIC: publicValue });
      try {
        for (const url of remote(brain.port)) {
          const metrics = await snapshot(url, '/metrics');
          assert.equal(metrics.status, 404, url);
          assert.deepEqual(metrics, await snapshot(url, '/metricz'), `${url}: same answer as a route that does not exist`);
          assert.equal((await fetch(url.replace('{path}', '/health'))).status, 200, 'the brain itself is reachable');
        }
        for (const url of loopback(brain.port)) assert.equal(await loopbackStatus(url), `200 ${EXPOSITION}`, url);
      } finally {
        await brain.stop();
      }
    });
  }

  await t.test('SVC_METRICS_PUBLIC=1: off loopback is served too', async () => {
    const brain = await startBrainInNamespace({ SVC_METRICS_PUBLIC: '1' });
    try {
      for (const url of remote(brain.port)) {
        const response = await fetch(url.replace('{path}', '/metrics'));
        assert.equal(response.status, 200, url);
        assert.equal(response.headers.get('content-type'), EXPOSITION);
        assert.match(await response.text(), /^# TYPE svc_http_requests_total counter$/m);
      }
      for (const url of loopback(brain.port)) assert.equal(await loopbackStatus(url), `200 ${EXPOSITION}`, url);
    } finally {
      await brain.stop();
    }
  });
});
