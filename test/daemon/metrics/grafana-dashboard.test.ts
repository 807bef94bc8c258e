// daemon/metrics/grafana-dashboard.json and the rule of spec 4.12: "every registered metric is used
// by at least one dashboard panel or alert rule". The registered names come from a brain assembled
// in-process with its real capabilities (each declares its own); the expressions are checked as
// PromQL by promtool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assembledBrain } from '../../helpers/assembled-brain';
import { repoRoot, runTool } from '../../helpers/external-tools';

const DIR = join(repoRoot(), 'daemon', 'metrics');

interface Target {
  expr?: string;
  refId?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string }[] };
}

const dashboard = JSON.parse(readFileSync(join(DIR, 'grafana-dashboard.json'), 'utf8')) as Dashboard;
const dataPanels = dashboard.panels.filter((p) => p.type !== 'row');
const panelExprs = dataPanels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p, refId: t.refId ?? '?', expr: t.expr ?? '' })));

/** The `expr:` values of alerts.yml, inline or as block scalars, without comments or annotations. */
function ruleExprs(yaml: string): string[] {
  const lines = yaml.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)expr:\s*(.*)$/.exec(lines[i]!);
    if (!m) continue;
    if (!/^[|>][-+]?$/.test(m[2]!)) {
      out.push(m[2]!);
      continue;
    }
    const body: string[] = [];
    for (let j = i + 1; j < lines.length && (lines[j]!.trim() === '' || /^\s*/.exec(lines[j]!)![0].length > m[1]!.length); j++) body.push(lines[j]!.trim());
    out.push(body.join(' ').trim());
  }
  return out;
}
const alertExprs = ruleExprs(readFileSync(join(DIR, 'alerts.yml'), 'utf8'));

/** Registered metric name → type, read from the exposition of an assembled brain. */
async function registered(t: { after(fn: () => unknown): void }): Promise<Map<string, string>> {
  const text = await (await assembledBrain(t)).metrics.render();
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** Series names an expression reads; histogram series count as their histogram. */
const namesIn = (expr: string): string[] => [...expr.matchAll(/\bsvc_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''));

void test('every registered metric is used by a dashboard panel or an alert rule (spec 4.12)', async (t) => {
  const names = await registered(t);
  assert.equal(names.size, 12, [...names.keys()].join(', '));
  const used = new Set([...panelExprs.map((e) => e.expr), ...alertExprs].flatMap(namesIn));
  const unused = [...names.keys()].filter((n) => !used.has(n));
  assert.deepEqual(unused, [], `metrics no panel or rule uses: ${unused.join(', ')}`);
});

void test('dashboard and rules read only metrics the brain registers (no typos, no stale names)', async (t) => {
  const names = await registered(t);
  const unknown = [...new Set([...panelExprs.map((e) => e.expr), ...alertExprs].flatMap(namesIn))].filter((n) => !names.has(n));
  assert.deepEqual(unknown, []);
  assert.equal(alertExprs.length, 5);
});

void test('every panel query is valid PromQL (promtool check rules on the queries as recording rules)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-dashboard-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // Grafana's variables, as Grafana would interpolate them for "All" and a 15 s scrape interval.
  const concrete = (expr: string): string => expr.replaceAll('$__rate_interval', '1m').replaceAll('$job', '.*').replaceAll('$instance', '.*');
  const rules = panelExprs.map(({ panel, refId, expr }) => `      - record: dashboard:panel_${panel.id}_${refId}\n        expr: ${JSON.stringify(concrete(expr))}`);
  writeFileSync(join(dir, 'panels.yml'), `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`);
  const r = await runTool('promtool', ['check', 'rules', join(dir, 'panels.yml')]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`SUCCESS: ${panelExprs.length} rules found`));
});

void test('dashboard is importable: uid, unique panel ids, every query on the datasource variable, panels inside the 24-column grid', () => {
  assert.equal(dashboard.uid, 'svc-brain');
  const ids = dashboard.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
  const variables = dashboard.templating.list.map((v) => v.name);
  assert.deepEqual(variables, ['datasource', 'job', 'instance']);
  for (const p of dataPanels) {
    assert.ok(p.title, `panel ${p.id} has a title`);
    assert.equal(p.datasource?.uid, '${datasource}', `panel ${p.id} uses the datasource variable`);
    assert.ok((p.targets ?? []).length > 0, `panel ${p.id} has a query`);
    for (const target of p.targets ?? []) {
      assert.equal(target.datasource?.uid, '${datasource}');
      assert.match(target.expr ?? '', /job=~"\$job",instance=~"\$instance"/, `panel ${p.id} ${target.refId} filters by the job and instance variables`);
    }
    assert.ok(p.gridPos.x >= 0 && p.gridPos.w > 0 && p.gridPos.x + p.gridPos.w <= 24, `panel ${p.id} fits the grid`);
  }
  const cells = new Set<string>();
  for (const p of dashboard.panels) {
    for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
      for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
        assert.ok(!cells.has(`${x},${y}`), `panel ${p.id} overlaps another at ${x},${y}`);
        cells.add(`${x},${y}`);
      }
    }
  }
});
