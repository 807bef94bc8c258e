// The twelve metrics of spec 4.12, exactly, behind a small typed facade. Services call the facade;
// only this file knows prom-client, except the two HTTP metrics, which http-series.ts counts off
// prom-client's hot path. With SVC_METRICS_ENDPOINT off the facade is a no-op and nothing is
// registered or emitted. Every metric here is used by a panel in grafana-dashboard.json or a rule
// in alerts.yml (a test enforces it).
// Not the package index: it also loads prom-client's cluster aggregator and default collectors, and
// with them node:cluster, child_process, dgram, v8 and perf_hooks (~20 ms of cold start, unused here).
import Counter from 'prom-client/lib/counter.js';
import Gauge from 'prom-client/lib/gauge.js';
import Registry from 'prom-client/lib/registry.js';
import { HttpSeries } from './http-series';
import type { CounterHandle, GaugeHandle, MetricDefinition, MetricsRegistry } from '../kernel/metrics';

export const SYNC_FAILURE_REASONS = ['handshake', 'auth', 'protocol', 'timeout', 'network', 'conflict'] as const;
export const SANDBOX_KILL_REASONS = ['timeout', 'memory', 'fault'] as const;

export interface Metrics {
  readonly enabled: boolean;
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  llm429(provider: string): void;
  failoverChainExhausted(): void;
  syncActivePeers(n: number): void;
  syncFailure(reason: string): void;
  syncWasActiveRecent(active: boolean): void;
  approvalQueue(n: number): void;
  toolDenied(tool: string): void;
  sandboxKilled(reason: string): void;
  vaultDecryptError(): void;
  wsActiveSessions(n: number): void;
  /** Declares label values that must show as zero before anything happens (e.g. configured providers). */
  declare(label: { provider?: string; tool?: string }): void;
  render(): Promise<string>;
  readonly contentType: string;
  /** Where capabilities declare the metrics they emit (kernel/metrics.ts). */
  readonly registry: MetricsRegistry;
}

export { statusClass } from './http-series';

/** fastify's /api/jobs/:id becomes the spec's /api/jobs/{id}. */
export const routeTemplate = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{*}');

export function createMetrics(enabled: boolean): Metrics {
  return enabled ? promMetrics() : noopMetrics();
}

function noopMetrics(): Metrics {
  const nothing = (): void => undefined;
  return {
    enabled: false,
    httpRequest: nothing,
    llm429: nothing,
    failoverChainExhausted: nothing,
    syncActivePeers: nothing,
    syncFailure: nothing,
    syncWasActiveRecent: nothing,
    approvalQueue: nothing,
    toolDenied: nothing,
    sandboxKilled: nothing,
    vaultDecryptError: nothing,
    wsActiveSessions: nothing,
    declare: nothing,
    render: () => Promise.resolve(''),
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    registry: noopRegistry(),
  };
}

function promMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const llm429 = new Counter({ name: 'svc_llm_429_total', help: 'Rate-limit (429) answers from LLM providers', labelNames: ['provider'], registers });
  const exhausted = new Counter({ name: 'svc_llm_failover_chain_exhausted_total', help: 'Turns for which every provider in the failover chain failed', registers });
  const syncPeers = new Gauge({ name: 'svc_sync_active_peers', help: 'Sync peers with an open session', registers });
  const syncFailures = new Counter({ name: 'svc_sync_failures_total', help: 'Failed sync sessions by reason', labelNames: ['reason'], registers });
  const syncRecent = new Gauge({ name: 'svc_sync_was_active_recent', help: '1 when sync had a peer within the last hour', registers });
  const approvals = new Gauge({ name: 'svc_supervisor_approval_queue', help: 'Tool calls waiting for approval', registers });
  const denials = new Counter({ name: 'svc_tool_denials_total', help: 'Tool calls refused by the permission plane', labelNames: ['tool'], registers });
  const kills = new Counter({ name: 'svc_sandbox_kills_total', help: 'Sandboxed skills killed, by reason', labelNames: ['reason'], registers });
  const vault = new Counter({ name: 'svc_vault_decrypt_errors_total', help: 'Vault decryption failures (wrong key or corrupt file)', registers });
  const ws = new Gauge({ name: 'svc_ws_active_sessions', help: 'Open WebSocket client sessions', registers });
  for (const reason of SYNC_FAILURE_REASONS) syncFailures.labels(reason).inc(0);
  for (const reason of SANDBOX_KILL_REASONS) kills.labels(reason).inc(0);
  const http = new HttpSeries();
  return {
    enabled: true,
    httpRequest: (method, route, status, seconds) => http.record(method, route, status, seconds),
    llm429: (provider) => llm429.labels(provider).inc(),
    failoverChainExhausted: () => exhausted.inc(),
    syncActivePeers: (n) => syncPeers.set(n),
    syncFailure: (reason) => syncFailures.labels(reason).inc(),
    syncWasActiveRecent: (active) => syncRecent.set(active ? 1 : 0),
    approvalQueue: (n) => approvals.set(n),
    toolDenied: (tool) => denials.labels(tool).inc(),
    sandboxKilled: (reason) => kills.labels(reason).inc(),
    vaultDecryptError: () => vault.inc(),
    wsActiveSessions: (n) => ws.set(n),
    declare: ({ provider, tool }) => {
      if (provider !== undefined) llm429.labels(provider).inc(0);
      if (tool !== undefined) denials.labels(tool).inc(0);
    },
    render: async () => `${http.render()}\n${await registry.metrics()}`,
    contentType: registry.contentType,
    registry: capabilityRegistry(registry),
  };
}

function noopRegistry(): MetricsRegistry {
  const owners = new Map<string, string>();
  const declare = (owner: string, d: MetricDefinition<string>): void => claim(owners, owner, d.name);
  return {
    enabled: false,
    counter: (owner, d) => (declare(owner, d), { inc: () => undefined }),
    gauge: (owner, d) => (declare(owner, d), { set: () => undefined }),
    owners: () => owners,
  };
}

/** Metrics declared by capabilities, rendered by the same prom-client registry as the spec metrics. */
function capabilityRegistry(registry: Registry): MetricsRegistry {
  const owners = new Map<string, string>();
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

function claim(owners: Map<string, string>, owner: string, name: string): void {
  const held = owners.get(name);
  if (held !== undefined) throw new Error(`metric ${name} is already declared by ${held}`);
  if (!/^svc_[a-z0-9_]+$/.test(name)) throw new Error(`metric ${name}: names start with svc_ and are lower_snake_case`);
  owners.set(name, owner);
}
