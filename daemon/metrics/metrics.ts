// The metrics registry behind the kernel's port (kernel/metrics.ts) and GET /metrics. Each metric is
// declared by the capability that emits it (docs/metrics.md lists who declares which), so adding one
// never edits this file. Only the two HTTP metrics live here: http-series.ts counts them off
// prom-client's hot path, so GET /health stays fast. With SVC_METRICS_ENDPOINT off the registry is a
// no-op: declarations are checked and remembered, but nothing is registered, emitted or rendered.
// Every metric the brain declares is used by a panel in grafana-dashboard.json or a rule in
// alerts.yml (a test enforces it).
// Not the package index: it also loads prom-client's cluster aggregator and default collectors, and
// with them node:cluster, child_process, dgram, v8 and perf_hooks (~20 ms of cold start, unused here).
import Counter from 'prom-client/lib/counter.js';
import Gauge from 'prom-client/lib/gauge.js';
import Registry from 'prom-client/lib/registry.js';
import { HTTP_METRICS, HttpSeries } from './http-series';
import type { CounterHandle, GaugeHandle, MetricDefinition, MetricsRegistry } from '../kernel/metrics';

export interface Metrics {
  readonly enabled: boolean;
  /** svc_http_requests_total and svc_http_request_duration_seconds, off prom-client's hot path. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  render(): Promise<string>;
  readonly contentType: string;
  /** Where the core and the capabilities declare the metrics they emit (kernel/metrics.ts). */
  readonly registry: MetricsRegistry;
}

export { statusClass } from './http-series';

/** The owner the HTTP metrics are declared under (they are counted by the HTTP layer of the core). */
export const HTTP_OWNER = 'http';

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** fastify's /api/jobs/:id becomes the spec's /api/jobs/{id}. */
export const routeTemplate = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{*}');

export function createMetrics(enabled: boolean): Metrics {
  return enabled ? promMetrics() : noopMetrics();
}

function noopMetrics(): Metrics {
  return {
    enabled: false,
    httpRequest: () => undefined,
    render: () => Promise.resolve(''),
    contentType: CONTENT_TYPE,
    registry: noopRegistry(),
  };
}

function promMetrics(): Metrics {
  const registry = new Registry();
  const http = new HttpSeries();
  return {
    enabled: true,
    httpRequest: (method, route, status, seconds) => http.record(method, route, status, seconds),
    render: async () => `${http.render()}\n${await registry.metrics()}`,
    contentType: registry.contentType,
    registry: promRegistry(registry),
  };
}

/** Names and owners only: with metrics off a declaration still fails where it would fail with them on. */
function noopRegistry(): MetricsRegistry {
  const owners = httpOwners();
  const declare = (owner: string, d: MetricDefinition<string>): void => claim(owners, owner, d.name);
  return {
    enabled: false,
    counter: (owner, d) => (declare(owner, d), { inc: () => undefined }),
    gauge: (owner, d) => (declare(owner, d), { set: () => undefined }),
    owners: () => owners,
  };
}

/** Declared metrics become prom-client counters and gauges of the one registry /metrics renders. */
function promRegistry(registry: Registry): MetricsRegistry {
  const owners = httpOwners();
  const opts = <L extends string>(d: MetricDefinition<L>) => ({ name: d.name, help: d.help, labelNames: [...(d.labels ?? [])], registers: [registry] });
  return {
    enabled: true,
    counter<L extends string>(owner: string, d: MetricDefinition<L>): CounterHandle<L> {
      claim(owners, owner, d.name);
      const counter = new Counter(opts(d));
      for (const labels of d.zero ?? []) counter.labels(labels).inc(0);
      return { inc: (labels, by = 1) => (labels ? counter.labels(labels).inc(by) : counter.inc(by)) };
    },
    gauge<L extends string>(owner: string, d: MetricDefinition<L>): GaugeHandle<L> {
      claim(owners, owner, d.name);
      const gauge = new Gauge(opts(d));
      for (const labels of d.zero ?? []) gauge.labels(labels).set(0);
      return { set: (value, labels) => (labels ? gauge.labels(labels).set(value) : gauge.set(value)) };
    },
    owners: () => owners,
  };
}

/** The HTTP metrics are rendered by http-series.ts, but their names are taken like any other. */
const httpOwners = (): Map<string, string> => new Map(HTTP_METRICS.map((name) => [name, HTTP_OWNER]));

function claim(owners: Map<string, string>, owner: string, name: string): void {
  const held = owners.get(name);
  if (held !== undefined) throw new Error(`metric ${name} is already declared by ${held}`);
  if (!/^svc_[a-z0-9_]+$/.test(name)) throw new Error(`metric ${name}: names start with svc_ and are lower_snake_case`);
  owners.set(name, owner);
}
