// svc_http_requests_total and svc_http_request_duration_seconds (spec 4.12), counted without
// prom-client on the request path. A prom-client child still validates and hashes its labels on every
// inc()/observe(); for GET /health that was ~13% of the brain's throughput against bare fastify
// (bench/sections/http.mjs). Here a request costs one Map lookup and a few additions, and the text
// exposition format 0.0.4 is written only when /metrics is scraped, in the layout prom-client uses
// for the metrics declared through the registry (HELP, TYPE, `le` first on bucket lines).

export const HTTP_DURATION_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** Status class label: 2xx, 4xx, ... keeps series bounded (spec 4.12). */
export const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`;

const TOTAL = 'svc_http_requests_total';
const DURATION = 'svc_http_request_duration_seconds';
/** The names this file renders; the registry reserves them (metrics.ts). */
export const HTTP_METRICS: readonly string[] = [TOTAL, DURATION];

/** One method on one route: its duration histogram and its request counts per status class. */
interface RouteSeries {
  labels: string;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
  /** Requests by status class, indexed by the hundreds digit (2 for 2xx). */
  classes: number[];
}

/** A label value escaped for the text format: backslash, double quote and newline. */
export const escapeLabelValue = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

const labelPairs = (pairs: [string, string][]): string => pairs.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',');

/** The index of the first bucket whose upper bound holds `seconds`; the +Inf slot past the end otherwise. */
function bucketIndex(seconds: number): number {
  let i = 0;
  while (i < HTTP_DURATION_BUCKETS.length && seconds > HTTP_DURATION_BUCKETS[i]!) i++;
  return i;
}

export class HttpSeries {
  // route -> method -> series: no string is built per request. Bounded like the series themselves:
  // method x route template x status class (spec 4.12).
  private readonly routes = new Map<string, Map<string, RouteSeries>>();

  record(method: string, route: string, status: number, seconds: number): void {
    let methods = this.routes.get(route);
    if (!methods) this.routes.set(route, (methods = new Map<string, RouteSeries>()));
    let s = methods.get(method);
    if (!s) {
      s = { labels: labelPairs([['method', method], ['route', route]]), buckets: new Array<number>(HTTP_DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0, classes: new Array<number>(10).fill(0) };
      methods.set(method, s);
    }
    s.classes[Math.min(9, Math.max(0, Math.floor(status / 100)))]!++;
    // A clock step can make an elapsed time negative or NaN; it still counts as a request.
    const value = Number.isFinite(seconds) && seconds > 0 ? seconds : 0;
    s.buckets[bucketIndex(value)]!++;
    s.sum += value;
    s.count++;
  }

  /** Both families in the text exposition format, each ending in a newline. */
  render(): string {
    const all = [...this.routes.values()].flatMap((methods) => [...methods.values()]);
    const lines = [`# HELP ${TOTAL} HTTP requests by method, route template and status class`, `# TYPE ${TOTAL} counter`];
    for (const s of all) {
      s.classes.forEach((count, digit) => {
        if (count > 0) lines.push(`${TOTAL}{${s.labels},status="${statusClass(digit * 100)}"} ${count}`);
      });
    }
    lines.push('', `# HELP ${DURATION} HTTP request duration by method and route template`, `# TYPE ${DURATION} histogram`);
    for (const s of all) {
      let cumulative = 0;
      HTTP_DURATION_BUCKETS.forEach((bound, i) => {
        cumulative += s.buckets[i]!;
        lines.push(`${DURATION}_bucket{le="${bound}",${s.labels}} ${cumulative}`);
      });
      lines.push(`${DURATION}_bucket{le="+Inf",${s.labels}} ${s.count}`, `${DURATION}_sum{${s.labels}} ${s.sum}`, `${DURATION}_count{${s.labels}} ${s.count}`);
    }
    return `${lines.join('\n')}\n`;
  }
}
