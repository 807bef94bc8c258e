// daemon/metrics/metrics.ts against the metric table of spec 4.12: names, types, labels, zero-valued
// series before anything happens, bounded label values, and the kill switch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMetrics, routeTemplate, statusClass, SANDBOX_KILL_REASONS, SYNC_FAILURE_REASONS } from '../../../daemon/metrics/metrics';

/** Spec 4.12: metric → [type, labels]. */
const SPEC: Record<string, [string, string[]]> = {
  svc_http_requests_total: ['counter', ['method', 'route', 'status']],
  svc_http_request_duration_seconds: ['histogram', ['method', 'route']],
  svc_llm_429_total: ['counter', ['provider']],
  svc_llm_failover_chain_exhausted_total: ['counter', []],
  svc_sync_active_peers: ['gauge', []],
  svc_sync_failures_total: ['counter', ['reason']],
  svc_sync_was_active_recent: ['gauge', []],
  svc_supervisor_approval_queue: ['gauge', []],
  svc_tool_denials_total: ['counter', ['tool']],
  svc_sandbox_kills_total: ['counter', ['reason']],
  svc_vault_decrypt_errors_total: ['counter', []],
  svc_ws_active_sessions: ['gauge', []],
};

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
      assert.ok(m, `exposition line: ${l}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

const familyOf = (name: string): string => (SPEC[name] ? name : name.replace(/_(bucket|sum|count)$/, ''));

void test('the registry holds exactly the twelve metrics of spec 4.12 with their types', async () => {
  const text = await createMetrics(true).render();
  const types = Object.fromEntries([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  assert.deepEqual(types, Object.fromEntries(Object.entries(SPEC).map(([n, [type]]) => [n, type])));
});

void test('every series carries exactly the labels of spec 4.12 (histogram buckets add le)', async () => {
  const m = createMetrics(true);
  m.httpRequest('GET', '/api/jobs/{id}', 503, 0.02);
  m.llm429('anthropic');
  m.failoverChainExhausted();
  m.syncActivePeers(2);
  m.syncFailure('timeout');
  m.syncWasActiveRecent(true);
  m.approvalQueue(3);
  m.toolDenied('shell');
  m.sandboxKilled('memory');
  m.vaultDecryptError();
  m.wsActiveSessions(1);
  const all = samples(await m.render());
  for (const name of Object.keys(SPEC)) assert.ok(all.some((s) => familyOf(s.name) === name), `${name} has a series`);
  for (const s of all) {
    const expected = [...SPEC[familyOf(s.name)]![1], ...(s.name.endsWith('_bucket') ? ['le'] : [])].sort();
    assert.deepEqual(Object.keys(s.labels).sort(), expected, `${s.name}${JSON.stringify(s.labels)}`);
  }
  const http = all.find((s) => s.name === 'svc_http_requests_total');
  assert.deepEqual(http?.labels, { method: 'GET', route: '/api/jobs/{id}', status: '5xx' });
});

void test('before anything happens, unlabelled metrics and the fixed reasons are zero-valued series, not missing', async () => {
  const all = samples(await createMetrics(true).render());
  const value = (name: string, labels: Record<string, string> = {}): number | undefined => all.find((s) => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels))?.value;
  for (const [name, [, labels]] of Object.entries(SPEC)) if (labels.length === 0) assert.equal(value(name), 0, name);
  for (const reason of SYNC_FAILURE_REASONS) assert.equal(value('svc_sync_failures_total', { reason }), 0);
  for (const reason of SANDBOX_KILL_REASONS) assert.equal(value('svc_sandbox_kills_total', { reason }), 0);
});

void test('declare() shows configured providers and tools at zero', async () => {
  const m = createMetrics(true);
  m.declare({ provider: 'ollama', tool: 'web_search' });
  const all = samples(await m.render());
  assert.ok(all.some((s) => s.name === 'svc_llm_429_total' && s.labels.provider === 'ollama' && s.value === 0));
  assert.ok(all.some((s) => s.name === 'svc_tool_denials_total' && s.labels.tool === 'web_search' && s.value === 0));
});

void test('the status label is the status class and the route label a template, so series stay bounded', () => {
  fc.assert(
    fc.property(fc.integer({ min: 100, max: 599 }), (status) => {
      assert.equal(statusClass(status), `${String(status)[0]}xx`);
    }),
  );
  assert.equal(routeTemplate('/api/jobs/:id'), '/api/jobs/{id}');
  assert.equal(routeTemplate('/api/apps/:app_id/surfaces/:surface'), '/api/apps/{app_id}/surfaces/{surface}');
  assert.equal(routeTemplate('/static/*'), '/static/{*}');
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,8}$/), fc.stringMatching(/^:[a-z_]{1,8}$/)), { maxLength: 6 }), (parts) => {
      const template = routeTemplate(`/${parts.join('/')}`);
      assert.ok(!template.includes(':'), template);
    }),
  );
});

void test('with the kill switch off nothing is registered or emitted, and every call is a no-op', async () => {
  const m = createMetrics(false);
  assert.equal(m.enabled, false);
  m.httpRequest('GET', '/x', 500, 1);
  m.vaultDecryptError();
  m.declare({ provider: 'p', tool: 't' });
  assert.equal(await m.render(), '');
});

void test('content type is the text exposition format 0.0.4 (spec 9.4)', () => {
  for (const enabled of [true, false]) assert.equal(createMetrics(enabled).contentType, 'text/plain; version=0.0.4; charset=utf-8');
});
