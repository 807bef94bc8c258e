// daemon/metrics/metrics.ts: the registry behind the kernel's metrics port and the HTTP metrics it
// renders itself. The twelve metrics of spec 4.12 are declared by their emitters; the table is
// checked on an assembled brain (test/daemon/brain.metrics.test.ts) and on the built one (e2e).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMetrics, HTTP_OWNER, routeTemplate, statusClass } from '../../../daemon/metrics/metrics';
import type { MetricsRegistry } from '../../../daemon/kernel/metrics';
import { samples, sampleValue } from '../../helpers/metric-samples';

const types = (text: string): Record<string, string> => Object.fromEntries([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
const HTTP = { svc_http_requests_total: 'counter', svc_http_request_duration_seconds: 'histogram' };

void test('on its own the registry serves the two HTTP metrics only, and holds their names for the HTTP layer', async () => {
  const m = createMetrics(true);
  assert.deepEqual(types(await m.render()), HTTP);
  assert.deepEqual(Object.fromEntries(m.registry.owners()), { svc_http_requests_total: HTTP_OWNER, svc_http_request_duration_seconds: HTTP_OWNER });
  assert.throws(() => m.registry.counter('someone', { name: 'svc_http_requests_total', help: 'again' }), /already declared by http/);
});

void test('HTTP series carry method, route template and status class (histogram buckets add le)', async () => {
  const m = createMetrics(true);
  m.httpRequest('GET', '/api/jobs/{id}', 503, 0.02);
  const all = samples(await m.render());
  assert.deepEqual(all.find((s) => s.name === 'svc_http_requests_total')?.labels, { method: 'GET', route: '/api/jobs/{id}', status: '5xx' });
  for (const s of all.filter((x) => x.name.startsWith('svc_http_request_duration_seconds'))) {
    assert.deepEqual(Object.keys(s.labels).sort(), s.name.endsWith('_bucket') ? ['le', 'method', 'route'] : ['method', 'route']);
  }
});

void test('a declared counter and gauge render their help, type and zero series, and count what their handles say', async () => {
  const m = createMetrics(true);
  const jobs = m.registry.counter<'kind'>('jobs', { name: 'svc_jobs_total', help: 'Jobs run, by kind', labels: ['kind'], zero: [{ kind: 'daily' }, { kind: 'hourly' }] });
  const queue = m.registry.gauge('jobs', { name: 'svc_jobs_queued', help: 'Jobs waiting' });
  const text = await m.render();
  assert.match(text, /^# HELP svc_jobs_total Jobs run, by kind\n# TYPE svc_jobs_total counter\nsvc_jobs_total\{kind="daily"\} 0\nsvc_jobs_total\{kind="hourly"\} 0$/m);
  assert.match(text, /^# HELP svc_jobs_queued Jobs waiting\n# TYPE svc_jobs_queued gauge\nsvc_jobs_queued 0$/m);
  jobs.inc({ kind: 'daily' });
  jobs.inc({ kind: 'daily' }, 2);
  jobs.inc({ kind: 'weekly' }, 0);
  queue.set(4);
  assert.equal(await sampleValue(m, 'svc_jobs_total', { kind: 'daily' }), 3);
  assert.equal(await sampleValue(m, 'svc_jobs_total', { kind: 'weekly' }), 0, 'adding zero makes a series exist');
  assert.equal(await sampleValue(m, 'svc_jobs_queued'), 4);
  assert.equal(m.registry.owners().get('svc_jobs_total'), 'jobs');
});

type Declaration = { owner: string; name: string; kind: 'counter' | 'gauge' };

const declare = (registry: MetricsRegistry, d: Declaration): void => {
  if (d.kind === 'counter') registry.counter(d.owner, { name: d.name, help: 'h' });
  else registry.gauge(d.owner, { name: d.name, help: 'h' });
};

void test('a name is declared once, and only an svc_ lower_snake_case one, whether metrics are on or off (model check)', async () => {
  const names = fc.constantFrom('svc_a_total', 'svc_b', 'svc_http_requests_total', 'svc_c_seconds', 'svc_Bad', 'other_total', 'svc_');
  const declaration = fc.record({ owner: fc.constantFrom('agent', 'vault', 'sync'), name: names, kind: fc.constantFrom<'counter' | 'gauge'>('counter', 'gauge') });
  await fc.assert(
    fc.asyncProperty(fc.boolean(), fc.array(declaration, { maxLength: 12 }), async (enabled, declarations) => {
      const m = createMetrics(enabled);
      const model = new Map<string, string>(Object.keys(HTTP).map((n) => [n, HTTP_OWNER]));
      for (const d of declarations) {
        const ok = !model.has(d.name) && /^svc_[a-z0-9_]+$/.test(d.name);
        if (ok) {
          declare(m.registry, d);
          model.set(d.name, d.owner);
        } else assert.throws(() => declare(m.registry, d), /already declared|names start with svc_/);
      }
      assert.deepEqual(Object.fromEntries(m.registry.owners()), Object.fromEntries(model));
      const rendered = types(await m.render());
      if (!enabled) assert.deepEqual(rendered, {});
      else assert.deepEqual(Object.keys(rendered).sort(), [...model.keys()].sort());
    }),
  );
});

void test('with the kill switch off nothing is registered or emitted, and every handle is a no-op', async () => {
  const m = createMetrics(false);
  assert.equal(m.enabled, false);
  assert.equal(m.registry.enabled, false);
  m.httpRequest('GET', '/x', 500, 1);
  m.registry.counter<'tool'>('agent', { name: 'svc_tool_denials_total', help: 'h', labels: ['tool'], zero: [{ tool: 't' }] }).inc({ tool: 't' });
  m.registry.gauge('agent', { name: 'svc_ws_active_sessions', help: 'h' }).set(3);
  assert.equal(await m.render(), '');
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

void test('content type is the text exposition format 0.0.4 (spec 9.4)', () => {
  for (const enabled of [true, false]) assert.equal(createMetrics(enabled).contentType, 'text/plain; version=0.0.4; charset=utf-8');
});
