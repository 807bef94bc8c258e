// daemon/metrics/alerts.yml: the five alerts of spec 6.6, checked and unit-tested by promtool
// (`promtool check rules`, `promtool test rules alerts.test.yml`). The last test shows the unit
// tests would catch a wrong threshold or a dropped guard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, runTool } from '../../helpers/external-tools';

const DIR = join(repoRoot(), 'daemon', 'metrics');
const RULES = join(DIR, 'alerts.yml');
const TESTS = join(DIR, 'alerts.test.yml');

/** Spec 6.6, row by row: severity and how long the condition must hold. */
const SPEC_ALERTS = {
  HighErrorRate: { severity: 'critical', for: '10m' },
  LLMAllProvidersDown: { severity: 'critical', for: undefined },
  SyncPeerDown: { severity: 'warning', for: '15m' },
  SupervisorBacklog: { severity: 'warning', for: '30m' },
  VaultDecryptFailed: { severity: 'critical', for: undefined },
} as const;

interface RuleSummary {
  alert: string;
  severity?: string;
  for?: string;
}

/** The alert entries of the rule file: each `- alert:` up to the next one. Enough YAML for our own file. */
function alertRules(text: string): RuleSummary[] {
  return text
    .split(/^\s*- alert:/m)
    .slice(1)
    .map((block) => ({
      alert: block.split('\n')[0]!.trim(),
      severity: /^\s+severity:\s*(\S+)/m.exec(block)?.[1],
      for: /^\s+for:\s*(\S+)/m.exec(block)?.[1],
    }));
}

void test('promtool check rules accepts alerts.yml with exactly the five spec alerts', async () => {
  const r = await runTool('promtool', ['check', 'rules', RULES]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /SUCCESS: 5 rules found/);
  const rules = alertRules(readFileSync(RULES, 'utf8'));
  assert.deepEqual(
    Object.fromEntries(rules.map((r) => [r.alert, { severity: r.severity, for: r.for }])),
    SPEC_ALERTS,
  );
});

void test('promtool test rules: every alert fires where the spec says and stays quiet on the near misses', async () => {
  const r = await runTool('promtool', ['test', 'rules', TESTS], { cwd: DIR });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const text = readFileSync(TESTS, 'utf8');
  for (const alert of Object.keys(SPEC_ALERTS)) {
    const cases = text.split(/^\s*- eval_time:/m).filter((c) => new RegExp(`alertname: ${alert}\\b`).test(c));
    assert.ok(cases.some((c) => /exp_alerts:\s*\n\s*- exp_labels:/.test(c)), `${alert}: a case where it fires`);
    assert.ok(cases.some((c) => /exp_alerts: \[\]/.test(c)), `${alert}: a case where it does not fire`);
  }
});

void test('the rule tests catch a wrong threshold, a shorter duration or a dropped guard', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-alerts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  copyFileSync(TESTS, join(dir, 'alerts.test.yml'));
  const original = readFileSync(RULES, 'utf8');
  const mutants: [string, string][] = [
    ['> 0.05', '> 0.03'],
    ['{status="5xx"}', '{status=~"[45]xx"}'],
    ['for: 10m', 'for: 5m'],
    [' and max_over_time(svc_sync_was_active_recent[1h]) == 1', ''],
    ['> 50', '>= 50'],
    ['for: 30m', 'for: 20m'],
    ['increase(svc_llm_failover_chain_exhausted_total[5m])', 'increase(svc_llm_failover_chain_exhausted_total[15m])'],
    ['(svc_vault_decrypt_errors_total > 0 unless svc_vault_decrypt_errors_total offset 5m)', 'vector(0) > 1'],
  ];
  for (const [from, to] of mutants) {
    assert.ok(original.includes(from), `mutation target present: ${from}`);
    writeFileSync(join(dir, 'alerts.yml'), original.replace(from, to));
    const r = await runTool('promtool', ['test', 'rules', 'alerts.test.yml'], { cwd: dir });
    assert.notEqual(r.code, 0, `alerts.test.yml does not notice ${from} → ${to}`);
  }
});
