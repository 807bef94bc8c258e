// The metric table of spec 4.12 on a brain assembled in-process (daemon/brain.ts): exactly twelve
// metrics, each declared by the part that emits it, with the names, types, labels and help texts the
// brain has always served, and the zero-valued series that exist before anything happens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assembledBrain } from '../helpers/assembled-brain';
import { samples } from '../helpers/metric-samples';

/** Spec 4.12: metric → type, labels, help text, and the part that declares it. */
const SPEC: Record<string, { type: string; labels: string[]; help: string; owner: string }> = {
  svc_http_requests_total: { type: 'counter', labels: ['method', 'route', 'status'], help: 'HTTP requests by method, route template and status class', owner: 'http' },
  svc_http_request_duration_seconds: { type: 'histogram', labels: ['method', 'route'], help: 'HTTP request duration by method and route template', owner: 'http' },
  svc_llm_429_total: { type: 'counter', labels: ['provider'], help: 'Rate-limit (429) answers from LLM providers', owner: 'providers' },
  svc_llm_failover_chain_exhausted_total: { type: 'counter', labels: [], help: 'Turns for which every provider in the failover chain failed', owner: 'providers' },
  svc_sync_active_peers: { type: 'gauge', labels: [], help: 'Sync peers with an established session now', owner: 'sync' },
  svc_sync_failures_total: { type: 'counter', labels: ['reason'], help: 'Sync sessions that failed, and /sync upgrades refused, by reason', owner: 'sync' },
  svc_sync_was_active_recent: { type: 'gauge', labels: [], help: '1 while a sync peer is connected or was within the last 15 minutes', owner: 'sync' },
  svc_supervisor_approval_queue: { type: 'gauge', labels: [], help: 'Tool calls waiting for approval', owner: 'approvals' },
  svc_tool_denials_total: { type: 'counter', labels: ['tool'], help: 'Tool calls refused by the permission plane', owner: 'agent' },
  svc_sandbox_kills_total: { type: 'counter', labels: ['reason'], help: 'Sandboxed skills killed, by reason', owner: 'skills' },
  svc_vault_decrypt_errors_total: { type: 'counter', labels: [], help: 'Vault decryption failures (wrong key or corrupt file)', owner: 'vault' },
  svc_ws_active_sessions: { type: 'gauge', labels: [], help: 'Open WebSocket client sessions', owner: 'agent' },
};
const column = (key: 'type' | 'help' | 'owner'): Record<string, string> => Object.fromEntries(Object.entries(SPEC).map(([name, row]) => [name, row[key]]));

const CHAIN = { providers: { chain: [{ id: 'ollama', kind: 'openai', base_url: 'http://127.0.0.1:9/v1', keyless: true }, { id: 'claude', kind: 'anthropic' }, { id: 'local', kind: 'local' }] } };

const familyOf = (name: string): string => (SPEC[name] ? name : name.replace(/_(bucket|sum|count)$/, ''));

void test('the brain serves exactly the twelve metrics of spec 4.12, each declared by its emitter, with their types and help texts', async (t) => {
  const brain = await assembledBrain(t);
  const text = await brain.metrics.render();
  const lines = (kind: string): Record<string, string> => Object.fromEntries([...text.matchAll(new RegExp(`^# ${kind} (\\S+) (.+)$`, 'gm'))].map((m) => [m[1]!, m[2]!]));
  assert.deepEqual(lines('TYPE'), column('type'));
  assert.deepEqual(lines('HELP'), column('help'));
  assert.deepEqual(Object.fromEntries(brain.metrics.registry.owners()), column('owner'));
});

void test('before anything happens: zero series for unlabelled metrics, fixed reasons, configured providers and registered tools, and nothing else', async (t) => {
  const brain = await assembledBrain(t, CHAIN);
  const zero = (name: string, labels: Record<string, string> = {}): string => `${name}${JSON.stringify(labels)} 0`;
  const expected = [
    ...Object.entries(SPEC).filter(([name, row]) => row.labels.length === 0 && !name.startsWith('svc_http')).map(([name]) => zero(name)),
    ...['auth', 'protocol', 'clock_skew', 'timeout', 'io', 'too_large', 'replay'].map((reason) => zero('svc_sync_failures_total', { reason })),
    ...['timeout', 'memory', 'error', 'policy'].map((reason) => zero('svc_sandbox_kills_total', { reason })),
    ...['ollama', 'claude', 'local'].map((provider) => zero('svc_llm_429_total', { provider })),
    ...brain.tools.names().map((tool) => zero('svc_tool_denials_total', { tool })),
  ];
  assert.ok(brain.tools.names().length >= 5, 'agent, memory and identity tools are registered');
  const all = samples(await brain.metrics.render()).map((s) => `${s.name}${JSON.stringify(s.labels)} ${s.value}`);
  assert.deepEqual(all.sort(), expected.sort());
});

void test('every series carries exactly the labels of spec 4.12 (histogram buckets add le)', async (t) => {
  const brain = await assembledBrain(t, CHAIN);
  assert.equal((await brain.app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  const all = samples(await brain.metrics.render());
  for (const name of Object.keys(SPEC)) assert.ok(all.some((s) => familyOf(s.name) === name), `${name} has a series`);
  for (const s of all) {
    const expected = [...SPEC[familyOf(s.name)]!.labels, ...(s.name.endsWith('_bucket') ? ['le'] : [])].sort();
    assert.deepEqual(Object.keys(s.labels).sort(), expected, `${s.name}${JSON.stringify(s.labels)}`);
  }
});

void test('with metrics off the same twelve are declared by the same parts, and nothing is rendered', async (t) => {
  const brain = await assembledBrain(t, { ...CHAIN, metrics: { endpoint: false } });
  assert.equal(brain.metrics.enabled, false);
  assert.deepEqual(Object.fromEntries(brain.metrics.registry.owners()), column('owner'));
  assert.equal(await brain.metrics.render(), '');
});
