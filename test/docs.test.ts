// docs/configuration.md keeps step with the code: every settings.json key of the TypeBox schema
// (with its default) and every environment variable of ENVIRONMENT_VARIABLES has a row, and no row
// names a key or variable that no longer exists. The operational docs name the files they describe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SettingsSchema } from '../daemon/config/settings-schema';
import { parseSettings } from '../daemon/config/load-settings';
import { ENVIRONMENT_VARIABLES } from '../daemon/config/environment';
import { UNSUPPORTED_VARIABLES } from '../daemon/config/unsupported-settings';
import { repoRoot } from './helpers/external-tools';

const ROOT = repoRoot();
const doc = (name: string): string => readFileSync(join(ROOT, 'docs', name), 'utf8');

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  default?: unknown;
}

/** Every key a settings.json can hold: nested sections joined with '.', array items as `list[].key`. */
function settingsKeys(schema: JsonSchema, prefix = ''): { path: string; default?: unknown }[] {
  const out: { path: string; default?: unknown }[] = [];
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${key}`;
    if (sub.type === 'object' && sub.properties) {
      out.push(...settingsKeys(sub, `${path}.`));
      continue;
    }
    out.push({ path, ...(sub.default !== undefined ? { default: sub.default } : {}) });
    if (sub.type === 'array' && sub.items?.type === 'object') out.push(...settingsKeys(sub.items, `${path}[].`));
  }
  return out;
}

/** Table rows whose first cell is one `code` token: token → the remaining cells. */
function rows(markdown: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of markdown.matchAll(/^\| `([^`]+)` \|(.*)\|\s*$/gm)) out.set(m[1]!, m[2]!.split(' | ').map((c) => c.trim()));
  return out;
}

const isEnvName = (token: string): boolean => /^[A-Z][A-Z0-9_]*$/.test(token);

void test('docs/configuration.md has a row for every settings.json key, with the schema default', () => {
  const table = rows(doc('configuration.md'));
  const keys = settingsKeys(SettingsSchema);
  assert.ok(keys.length > 10, 'the schema walk found the keys');
  const missing = keys.filter((k) => !table.has(k.path)).map((k) => k.path);
  assert.deepEqual(missing, [], `settings keys missing from docs/configuration.md: ${missing.join(', ')}`);
  const wrongDefault = keys
    .filter((k) => k.default !== undefined && !(table.get(k.path)?.[1] ?? '').includes(`\`${JSON.stringify(k.default)}\``))
    .map((k) => `${k.path}: schema default ${JSON.stringify(k.default)}, doc says ${table.get(k.path)?.[1]}`);
  assert.deepEqual(wrongDefault, []);
});

void test('docs/configuration.md lists no settings key the schema does not have', () => {
  const known = new Set(settingsKeys(SettingsSchema).map((k) => k.path));
  const stale = [...rows(doc('configuration.md')).keys()].filter((t) => !isEnvName(t) && !known.has(t));
  assert.deepEqual(stale, [], `rows for keys that do not exist: ${stale.join(', ')}`);
});

void test('docs/configuration.md has a row for every environment variable and names no unknown SVC_ variable', () => {
  const text = doc('configuration.md');
  const table = rows(text);
  const missing = Object.keys(ENVIRONMENT_VARIABLES).filter((name) => !table.has(name));
  assert.deepEqual(missing, [], `environment variables missing from docs/configuration.md: ${missing.join(', ')}`);
  const unknown = [...new Set([...text.matchAll(/\bSVC_[A-Z0-9_]+\b/g)].map((m) => m[0]))].filter((n) => !(n in ENVIRONMENT_VARIABLES) && !(n in UNSUPPORTED_VARIABLES));
  assert.deepEqual(unknown, [], `variables the code does not know: ${unknown.join(', ')}`);
  const refusedRows = Object.keys(UNSUPPORTED_VARIABLES).filter((name) => table.has(name));
  assert.deepEqual(refusedRows, [], `variables the brain refuses must not be documented as settings: ${refusedRows.join(', ')}`);
});

void test('the example settings.json in docs/configuration.md is valid', () => {
  const example = /```json\n([\s\S]*?)```/.exec(doc('configuration.md'));
  assert.ok(example, 'an example block');
  assert.doesNotThrow(() => parseSettings(JSON.parse(example[1]!), 'docs/configuration.md example'));
});

void test('docs/metrics.md and docs/install-pi.md name files that exist and the facts the spec fixes', () => {
  const metrics = doc('metrics.md');
  for (const file of ['daemon/metrics/alerts.yml', 'daemon/metrics/alerts.test.yml', 'daemon/metrics/grafana-dashboard.json']) {
    assert.ok(metrics.includes(file) && existsSync(join(ROOT, file)), file);
  }
  for (const alert of ['HighErrorRate', 'LLMAllProvidersDown', 'SyncPeerDown', 'SupervisorBacklog', 'VaultDecryptFailed']) assert.ok(metrics.includes(alert), alert);
  assert.match(metrics, /30 days/);
  assert.match(metrics, /15 ?s/);
  assert.match(metrics, /text\/plain; version=0\.0\.4; charset=utf-8/);
  const install = doc('install-pi.md');
  for (const file of ['systemd/svc-brain.service', 'systemd/svc-node-agent.service']) assert.ok(install.includes(file) && existsSync(join(ROOT, file)), file);
  for (const step of ['npm ci', 'useradd', 'systemctl enable --now svc-brain', 'journalctl -u svc-brain', 'api-token', 'doctor']) assert.ok(install.includes(step), step);
});
