// SupervisorBacklog (daemon/metrics/alerts.yml, spec 6.6) on a value a real brain reports: the model
// holds 60 run_command calls in one turn, /metrics is scraped, and the scraped
// svc_supervisor_approval_queue sample — with the job and instance labels a Prometheus scrape adds —
// is the input series of a `promtool test rules` file: the alert fires once it has held above 50 for
// 30 minutes. Ten rejections later the brain reports 50, and the same rules stay quiet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, runTool } from '../helpers/external-tools';
import { samples, type Sample } from '../helpers/metric-samples';
import { approvalsBrain, reject, session, type ApprovalsBrain } from './approvals-rig';

const RULES = join(repoRoot(), 'daemon', 'metrics', 'alerts.yml');
const DESCRIPTION = /alert: SupervisorBacklog[\s\S]*?description: "([^"]*)"/.exec(readFileSync(RULES, 'utf8'))?.[1];

async function scrapeQueue(rig: ApprovalsBrain): Promise<Sample> {
  const res = await fetch(`${rig.brain.url}/metrics`);
  assert.equal(res.status, 200);
  const found = samples(await res.text()).filter((s) => s.name === 'svc_supervisor_approval_queue');
  assert.equal(found.length, 1, 'one series');
  return found[0]!;
}

/** One promtool test case: the scraped sample as a series held for `minutes`, and what is expected then. */
function ruleTest(sample: Sample, instance: string, minutes: number, fires: boolean): string {
  const labels = { ...sample.labels, job: 'svc', instance };
  const series = `${sample.name}{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}}`;
  const alert = fires
    ? `
        exp_alerts:
          - exp_labels: { severity: warning, job: svc, instance: "${instance}" }
            exp_annotations:
              summary: "svc ${instance}: ${sample.value} tool calls waiting for approval"
              description: "${DESCRIPTION}"`
    : `
        exp_alerts: []`;
  return `
  - interval: 1m
    input_series:
      - series: '${series}'
        values: '${sample.value}x${minutes + 5}'
    alert_rule_test:
      - eval_time: 29m
        alertname: SupervisorBacklog
        exp_alerts: []
      - eval_time: ${minutes}m
        alertname: SupervisorBacklog${alert}`;
}

async function promtoolTest(dir: string, name: string, cases: string[]): Promise<{ code: number | null; out: string }> {
  writeFileSync(join(dir, name), `rule_files:\n  - ${JSON.stringify(RULES)}\nevaluation_interval: 1m\ntests:${cases.join('')}\n`);
  const r = await runTool('promtool', ['test', 'rules', name], { cwd: dir });
  return { code: r.code, out: r.stdout + r.stderr };
}

void test('SupervisorBacklog fires on the queue a real brain reports above 50 and stays quiet at 50', { timeout: 120_000 }, async (t) => {
  assert.ok(DESCRIPTION, 'the SupervisorBacklog description in alerts.yml');
  const dir = mkdtempSync(join(tmpdir(), 'svc-backlog-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const rig = await approvalsBrain(t, { agent: { max_tool_steps: 64 } });
  const s = await session(t, rig.brain);
  const { held } = await s.hold('backlog', 60);
  const instance = `127.0.0.1:${rig.brain.port}`;

  const full = await scrapeQueue(rig);
  assert.deepEqual(full, { name: 'svc_supervisor_approval_queue', labels: {}, value: 60 });
  const fires = await promtoolTest(dir, 'fires.test.yml', [ruleTest(full, instance, 30, true)]);
  assert.equal(fires.code, 0, fires.out);
  // The same case with the alert expected quiet must fail: the test above is not vacuous.
  assert.notEqual((await promtoolTest(dir, 'inverted.test.yml', [ruleTest(full, instance, 30, false)])).code, 0);

  for (const h of held.slice(0, 10)) assert.equal((await reject(rig.brain, h.payload.request_id)).status, 200);
  const fifty = await scrapeQueue(rig);
  assert.equal(fifty.value, 50);
  const quiet = await promtoolTest(dir, 'quiet.test.yml', [ruleTest(fifty, instance, 60, false)]);
  assert.equal(quiet.code, 0, quiet.out);
  assert.equal(rig.ran('backlog'), 0);
});
