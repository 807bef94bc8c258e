// docs/configuration.md keeps step with the code: every settings.json key of the TypeBox schema
// (with its default) and every environment variable of ENVIRONMENT_VARIABLES has a row, and no row
// names a key or variable that no longer exists. The operational docs name the files they describe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { settingsFormat } from '../daemon/config/load-settings';
import { CAPABILITIES } from '../daemon/capabilities';

/** The one settings schema: the core's sections and every capability's. */
const SETTINGS_SCHEMA = settingsFormat(CAPABILITIES).schema;
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
  const keys = settingsKeys(SETTINGS_SCHEMA);
  assert.ok(keys.length > 10, 'the schema walk found the keys');
  const missing = keys.filter((k) => !table.has(k.path)).map((k) => k.path);
  assert.deepEqual(missing, [], `settings keys missing from docs/configuration.md: ${missing.join(', ')}`);
  const wrongDefault = keys
    .filter((k) => k.default !== undefined && !(table.get(k.path)?.[1] ?? '').includes(`\`${JSON.stringify(k.default)}\``))
    .map((k) => `${k.path}: schema default ${JSON.stringify(k.default)}, doc says ${table.get(k.path)?.[1]}`);
  assert.deepEqual(wrongDefault, []);
});

void test('docs/configuration.md lists no settings key the schema does not have', () => {
  const known = new Set(settingsKeys(SETTINGS_SCHEMA).map((k) => k.path));
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

/** README.md and every page under docs/ (the user documentation), as repo-relative paths. */
function userDocs(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => `docs/${e.name}`);
  return ['README.md', ...pages.sort()];
}

/** Markdown without its fenced code blocks and inline code spans (where a link is only an example). */
const prose = (markdown: string): string => markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** Inline code spans and fenced code blocks: where commands and paths are written. */
const code = (markdown: string): string[] => [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```|`([^`\n]+)`/gm)].map((m) => m[1] ?? m[2] ?? '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

const anchorsOf = (markdown: string): Set<string> => new Set([...prose(markdown).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!.replace(/`/g, ''))));

void test('README and docs link only to files inside the repository that exist, and to headings that exist', () => {
  const broken: string[] = [];
  for (const page of userDocs()) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      const [file = '', hash] = target.split('#');
      if (/^[a-z][a-z0-9+.-]*:/i.test(file)) {
        broken.push(`${page}: ${target} leaves the repository`);
        continue;
      }
      const resolved = file === '' ? page : posix.normalize(posix.join(posix.dirname(page), file));
      if (resolved.startsWith('../') || !existsSync(join(ROOT, resolved))) {
        broken.push(`${page}: ${target} is not a file of the repository`);
        continue;
      }
      if (hash !== undefined && resolved.endsWith('.md') && !anchorsOf(readFileSync(join(ROOT, resolved), 'utf8')).has(hash)) broken.push(`${page}: ${target} names no heading of ${resolved}`);
    }
  }
  assert.deepEqual(broken, []);
});

/** The command paths the CLI registers (`memory decay`, `key add`), read from the sade calls in cli/. */
function cliCommands(): Set<string> {
  const out = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) for (const m of readFileSync(p, 'utf8').matchAll(/\.command\(\s*['`]([a-z][a-z -]*)/g)) out.add(m[1]!.trim());
    }
  };
  walk(join(ROOT, 'cli'));
  return out;
}

/** A mistyped command docs/protocol.md shows on purpose (it gets "did you mean status"). */
const TYPO_EXAMPLES = new Set(['stauts']);

void test('every `svc <command>` written in README and docs is a command of cli/, down to its subcommand', () => {
  const commands = cliCommands();
  assert.ok(commands.has('serve') && commands.has('memory decay'), 'the scan found the commands');
  const groups = new Set([...commands].filter((c) => c.includes(' ')).map((c) => c.split(' ')[0]!));
  const unknown: string[] = [];
  for (const page of userDocs()) {
    for (const snippet of code(readFileSync(join(ROOT, page), 'utf8'))) {
      // `svc` at the start of a command (a line, a prompt, after ; && | or a subshell), not the svc user (`sudo -u svc env`).
      for (const m of snippet.matchAll(/(?:^\s*|[;&|(]\s*|\$ )svc ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/gm)) {
        const [first, second] = [m[1]!, m[2]];
        const path = groups.has(first) && second !== undefined ? `${first} ${second}` : first;
        if (!commands.has(path) && !TYPO_EXAMPLES.has(path)) unknown.push(`${page}: svc ${path}`);
      }
    }
  }
  assert.deepEqual(unknown, []);
});

/** Top-level folders of the repository a doc may name; the ones that do not exist are caught below. */
const PATH_TOKEN = /^(?:daemon|cli|protocol|node-agent|test|systemd|bench|scripts|docs|mesh|sync|web)\/[\w./-]*$/;

void test('every repository path written in README and docs exists (no mesh/, sync/, web/ before they do)', () => {
  const missing: string[] = [];
  for (const page of userDocs()) {
    for (const snippet of code(readFileSync(join(ROOT, page), 'utf8'))) {
      for (const token of snippet.split(/[\s,;()]+/)) {
        const path = token.replace(/[.:]+$/, '');
        if (PATH_TOKEN.test(path) && !existsSync(join(ROOT, path))) missing.push(`${page}: ${path}`);
      }
    }
  }
  assert.deepEqual(missing, []);
});
