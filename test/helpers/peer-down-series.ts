// SyncPeerDown (daemon/metrics/alerts.yml) against series a real brain produced: the sync gauges
// scraped from running brains a few times in each phase of a partition (before, during, after) are
// re-timed onto a minute grid, each phase stretched to a run of minutes long enough for the rule's
// `for:` to matter, and written as a `promtool test rules` file (JSON, which is YAML) next to a copy
// of alerts.yml. Seconds of real samples become tens of minutes of series; the values are the ones
// the brains reported, in the order they reported them.
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { samples } from './metric-samples';

/** The two gauges SyncPeerDown reads, from one scrape. */
export interface SyncGauges {
  active: number;
  recent: number;
}

export interface Phase {
  name: 'before' | 'during' | 'after';
  minutes: number;
}

/** The gauges of one /metrics exposition. */
export function syncGauges(exposition: string): SyncGauges {
  const all = samples(exposition);
  const value = (name: string): number => {
    const s = all.find((x) => x.name === name);
    assert.ok(s, `${name} in /metrics`);
    return s.value;
  };
  return { active: value('svc_sync_active_peers'), recent: value('svc_sync_was_active_recent') };
}

/** One value a minute: phase by phase, the phase's samples in order, each held for an equal share of its minutes. */
export function minuteGrid(phases: readonly Phase[], observed: Readonly<Record<Phase['name'], readonly number[]>>): number[] {
  const grid: number[] = [];
  for (const phase of phases) {
    const values = observed[phase.name];
    assert.ok(values.length > 0, `samples of the ${phase.name} phase`);
    for (let m = 0; m < phase.minutes; m++) grid.push(values[Math.floor((m * values.length) / phase.minutes)]!);
  }
  return grid;
}

/** What alerts.yml says of SyncPeerDown: how long it waits, and its annotations with `{{ $labels.instance }}` filled in. */
export function peerDownRule(rulesFile: string): { forMinutes: number; annotations: (instance: string) => Record<string, string> } {
  const block = readFileSync(rulesFile, 'utf8').split(/^\s*- alert:/m).find((b) => b.trimStart().startsWith('SyncPeerDown'));
  assert.ok(block, `SyncPeerDown in ${rulesFile}`);
  const forMatch = /^\s+for:\s*(\d+)m\s*$/m.exec(block);
  assert.ok(forMatch, 'SyncPeerDown has a `for:` in minutes');
  const annotation = (key: string): string => {
    const m = new RegExp(`^\\s+${key}:\\s*"(.*)"\\s*$`, 'm').exec(block);
    assert.ok(m, `SyncPeerDown has a ${key}`);
    return m[1]!;
  };
  const summary = annotation('summary');
  const description = annotation('description');
  const fill = (template: string, instance: string): string => template.replaceAll('{{ $labels.instance }}', instance);
  return { forMinutes: Number(forMatch[1]), annotations: (instance) => ({ summary: fill(summary, instance), description: fill(description, instance) }) };
}

export interface InstanceSeries {
  instance: string;
  active: readonly number[];
  recent: readonly number[];
}

export interface AlertCheck {
  minute: number;
  /** The instances SyncPeerDown fires for at that minute (none: it is quiet for every instance). */
  firing: readonly string[];
}

/** Writes alerts.yml and a promtool test of SyncPeerDown over `series` into `dir`; returns the test file's name. */
export function writePeerDownTest(dir: string, rulesFile: string, series: readonly InstanceSeries[], checks: readonly AlertCheck[]): string {
  copyFileSync(rulesFile, join(dir, 'alerts.yml'));
  const rule = peerDownRule(rulesFile);
  const labels = (instance: string): string => `{job="svc",instance="${instance}"}`;
  const input_series = series.flatMap((s) => [
    { series: `svc_sync_active_peers${labels(s.instance)}`, values: s.active.join(' ') },
    { series: `svc_sync_was_active_recent${labels(s.instance)}`, values: s.recent.join(' ') },
  ]);
  const alert_rule_test = checks.map((c) => ({
    eval_time: `${c.minute}m`,
    alertname: 'SyncPeerDown',
    exp_alerts: c.firing.map((instance) => ({ exp_labels: { severity: 'warning', job: 'svc', instance }, exp_annotations: rule.annotations(instance) })),
  }));
  const file = 'sync-peer-down.test.yml';
  writeFileSync(join(dir, file), JSON.stringify({ rule_files: ['alerts.yml'], evaluation_interval: '1m', tests: [{ interval: '1m', input_series, alert_rule_test }] }, null, 2));
  return file;
}
