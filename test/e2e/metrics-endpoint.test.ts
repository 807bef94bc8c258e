// GET /metrics on the built brain (spec 4.12, 9.4): text exposition format 0.0.4 that promtool
// accepts without a lint finding, the twelve metrics with their types, route templates as labels,
// and the SVC_METRICS_ENDPOINT kill switch answering exactly like an unmounted route.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBrain, type BrainProcess } from '../helpers/brain-process';
import { runTool } from '../helpers/external-tools';

const TYPES: Record<string, string> = {
  svc_http_requests_total: 'counter',
  svc_http_request_duration_seconds: 'histogram',
  svc_llm_429_total: 'counter',
  svc_llm_failover_chain_exhausted_total: 'counter',
  svc_sync_active_peers: 'gauge',
  svc_sync_failures_total: 'counter',
  svc_sync_was_active_recent: 'gauge',
  svc_supervisor_approval_queue: 'gauge',
  svc_tool_denials_total: 'counter',
  svc_sandbox_kills_total: 'counter',
  svc_vault_decrypt_errors_total: 'counter',
  svc_ws_active_sessions: 'gauge',
};

async function started(t: { after(fn: () => unknown): void }, env: Record<string, string> = {}): Promise<BrainProcess> {
  const brain = await startBrain({ env });
  t.after(() => brain.kill());
  return brain;
}

/** Status, headers (without Date) and body, with the path in a not-found message made neutral. */
async function snapshot(response: Response, path: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const headers = Object.fromEntries([...response.headers].filter(([k]) => k !== 'date'));
  return { status: response.status, headers, body: (await response.text()).replace(path, '<path>') };
}

const counterValue = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

void test('/metrics serves exposition format 0.0.4 that promtool accepts, with all twelve metrics and route templates', async (t) => {
  const brain = await started(t);
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  assert.equal((await fetch(`${brain.url}/health`)).status, 200);
  // An unknown /api path without the token is 401 (routes are not discovered anonymously), and unmatched.
  assert.equal((await fetch(`${brain.url}/api/no-such-route`)).status, 401);
  assert.equal((await brain.api('/api/no/such/thing')).status, 404);
  assert.equal((await fetch(`${brain.url}/no-such-page?x=1`)).status, 404);
  await (await fetch(`${brain.url}/metrics`)).text();

  const response = await fetch(`${brain.url}/metrics`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  const text = await response.text();

  const lint = await runTool('promtool', ['check', 'metrics'], { input: text });
  assert.deepEqual({ code: lint.code, output: lint.stdout + lint.stderr }, { code: 0, output: '' });

  const types = Object.fromEntries([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  assert.deepEqual(types, TYPES);

  assert.equal(counterValue(text, 'svc_http_requests_total{method="GET",route="/health",status="2xx"}'), 2);
  assert.equal(counterValue(text, 'svc_http_requests_total{method="GET",route="/metrics",status="2xx"}'), 1);
  assert.ok((counterValue(text, 'svc_http_requests_total{method="GET",route="unmatched",status="4xx"}') ?? 0) >= 3, text);
  assert.ok(!/route="\/(no|api\/no)/.test(text), 'raw URLs never become route labels');
  assert.equal(counterValue(text, 'svc_vault_decrypt_errors_total'), 0);
  assert.match(text, /^svc_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/health"\} 2$/m);
});

for (const off of ['0', 'false', 'off']) {
  void test(`SVC_METRICS_ENDPOINT=${off}: /metrics is a 404 identical to an unmounted route; the rest of the brain works`, async (t) => {
    const brain = await started(t, { SVC_METRICS_ENDPOINT: off });
    // Same length as /metrics, so even Content-Length must match.
    const unmounted = await snapshot(await fetch(`${brain.url}/metricz`), '/metricz');
    const metrics = await snapshot(await fetch(`${brain.url}/metrics`), '/metrics');
    assert.equal(metrics.status, 404);
    assert.deepEqual(metrics, unmounted);
    assert.match(metrics.body, /"code":"NOT_FOUND"/);
    assert.equal((await fetch(`${brain.url}/health`)).status, 200);
    assert.equal((await fetch(`${brain.url}/api/skills`)).status, 401);
  });
}
