// daemon/metrics/http-series.ts: the two HTTP metrics written without prom-client. A model (plain
// arrays of what was recorded) is compared with the parsed exposition for random traffic, including
// label values that need escaping and durations that are NaN, negative or past the last bucket;
// promtool lints the text of a run with every kind of value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HTTP_DURATION_BUCKETS, HttpSeries, escapeLabelValue } from '../../../daemon/metrics/http-series';
import { runTool } from '../../helpers/external-tools';

interface Line {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const unescape = (v: string): string => v.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));

function parse(text: string): Line[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(l);
      assert.ok(m, `exposition line: ${l}`);
      const labels = Object.fromEntries([...m[2]!.matchAll(/([a-z]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, unescape(x[2]!)]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

const observation = fc.record({
  method: fc.constantFrom('GET', 'POST', 'DELETE'),
  route: fc.oneof(fc.constantFrom('/health', '/api/jobs/{id}', 'unmatched'), fc.string({ maxLength: 12 })),
  status: fc.constantFrom(200, 204, 301, 404, 422, 500, 503),
  seconds: fc.oneof(fc.double({ min: 0, max: 20, noNaN: true }), fc.constantFrom(...HTTP_DURATION_BUCKETS, Number.NaN, -1, 0)),
});

void test('counts, cumulative buckets, sums and escaped labels match what was recorded', () => {
  fc.assert(
    fc.property(fc.array(observation, { maxLength: 60 }), (observed) => {
      const series = new HttpSeries();
      for (const o of observed) series.record(o.method, o.route, o.status, o.seconds);
      const cls = (status: number): string => `${Math.floor(status / 100)}xx`;
      const lines = parse(series.render());
      const total = (o: { method: string; route: string; status: number }): number | undefined =>
        lines.find((l) => l.name === 'svc_http_requests_total' && l.labels.method === o.method && l.labels.route === o.route && l.labels.status === cls(o.status))?.value;
      for (const o of observed) assert.equal(total(o), observed.filter((x) => x.method === o.method && x.route === o.route && cls(x.status) === cls(o.status)).length);
      assert.equal(lines.filter((l) => l.name === 'svc_http_requests_total').reduce((n, l) => n + l.value, 0), observed.length);

      for (const o of observed) {
        const same = observed.filter((x) => x.method === o.method && x.route === o.route).map((x) => (Number.isFinite(x.seconds) && x.seconds > 0 ? x.seconds : 0));
        const of = (name: string): Line[] => lines.filter((l) => l.name === name && l.labels.method === o.method && l.labels.route === o.route);
        const buckets = of('svc_http_request_duration_seconds_bucket');
        assert.equal(buckets.length, HTTP_DURATION_BUCKETS.length + 1);
        for (const b of buckets) {
          const le = b.labels.le === '+Inf' ? Infinity : Number(b.labels.le);
          assert.equal(b.value, same.filter((s) => s <= le).length, `le=${b.labels.le}`);
        }
        assert.equal(of('svc_http_request_duration_seconds_count')[0]?.value, same.length);
        const sum = of('svc_http_request_duration_seconds_sum')[0]?.value ?? NaN;
        assert.ok(Math.abs(sum - same.reduce((a, b) => a + b, 0)) < 1e-9 * Math.max(1, sum), `sum ${sum}`);
      }
    }),
    { numRuns: 200 },
  );
});

void test('label values escape backslash, double quote and newline as the text format requires', () => {
  assert.equal(escapeLabelValue('a\\b"c\nd'), 'a\\\\b\\"c\\nd');
  fc.assert(fc.property(fc.string(), (s) => assert.equal(unescape(escapeLabelValue(s)), s)));
});

void test('with nothing recorded both families are declared and have no series', () => {
  const text = new HttpSeries().render();
  assert.deepEqual([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`), ['svc_http_requests_total counter', 'svc_http_request_duration_seconds histogram']);
  assert.deepEqual(parse(text), []);
});

void test('promtool accepts the exposition with escaped labels and extreme durations', async () => {
  const series = new HttpSeries();
  series.record('GET', '/health', 200, 0.0004);
  series.record('GET', '/health', 503, 30);
  series.record('POST', 'a "quoted" \\ route\nwith newline', 404, Number.NaN);
  const lint = await runTool('promtool', ['check', 'metrics'], { input: series.render() });
  assert.deepEqual({ code: lint.code, output: lint.stdout + lint.stderr }, { code: 0, output: '' });
});
