// Reading the text exposition format back in tests: every sample line of a real registry's render,
// and the value of one series. Values are compared as numbers, labels as a plain record.
import assert from 'node:assert/strict';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample line (not HELP/TYPE, not blank) of an exposition. */
export function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
      assert.ok(m, `exposition line: ${l}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

const sameLabels = (a: Record<string, string>, b: Record<string, string>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/** The value of the series `name{labels}`, or undefined when the exposition has no such series. */
export async function sampleValue(metrics: { render(): Promise<string> }, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  return samples(await metrics.render()).find((s) => s.name === name && sameLabels(s.labels, labels))?.value;
}
