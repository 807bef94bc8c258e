// SVC_METRICS_PUBLIC from a real off-loopback address (spec 4.12, 7: 404 "identical to an unmounted
// endpoint"). The brain runs inside a network namespace this test creates, listening on :: (IPv4
// and IPv6); a veth pair links it to this process on a private test subnet (10.231.N.0/30 and
// fd31:231:N::/64). Nothing listens on the machine's own interfaces. Needs root for `ip netns`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRoot, runToolOk } from '../helpers/external-tools';
import { createVethNamespace, deleteNamespace, startBrainInNamespace, vethPlan, type NamespacedBrain } from '../helpers/netns';

const NET = vethPlan('metrics', 231);
const { ns: NS } = NET;
const [BRAIN_V4, BRAIN_V6] = [NET.nsV4, NET.nsV6];

/** The brain inside the namespace on [::] (IPv4 and IPv6), plain node flags, a temp home, without the SVC_METRICS_* of this process. */
async function startMetricsBrain(env: Record<string, string>): Promise<NamespacedBrain> {
  const home = mkdtempSync(join(tmpdir(), 'svc-netns-'));
  const inherited = { ...process.env };
  delete inherited.SVC_METRICS_PUBLIC;
  delete inherited.SVC_METRICS_ENDPOINT;
  const brain = await startBrainInNamespace(NS, { home, args: ['--host', '::'], env: { ...inherited, ...env }, runtime: false }).catch((err: unknown) => {
    rmSync(home, { recursive: true, force: true });
    throw err;
  });
  return { port: brain.port, stop: () => brain.stop().finally(() => rmSync(home, { recursive: true, force: true })) };
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
  t.after(() => deleteNamespace(NET));
  await createVethNamespace(NET);
  const remote = (port: number): string[] => [`http://${BRAIN_V4}:${port}{path}`, `http://[${BRAIN_V6}]:${port}{path}`];
  const loopback = (port: number): string[] => [`http://127.0.0.1:${port}/metrics`, `http://[::1]:${port}/metrics`, `http://localhost:${port}/metrics`];

  for (const publicValue of [undefined, 'true', '0']) {
    await t.test(`SVC_METRICS_PUBLIC=${publicValue ?? '(unset)'}: off loopback gets the unmounted-route 404`, async () => {
      const brain = await startMetricsBrain(publicValue === undefined ? {} : { SVC_METRICS_PUBLIC: publicValue });
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
    const brain = await startMetricsBrain({ SVC_METRICS_PUBLIC: '1' });
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
