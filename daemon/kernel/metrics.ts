// The metrics port: a capability declares the metrics it emits (name, help, labels) when it is
// created, and gets handles to update them. The registry behind it (daemon/metrics/) renders them on
// GET /metrics; with metrics switched off (SVC_METRICS_ENDPOINT=0) the handles do nothing.
// Label values listed in `zero` show as zero-valued series before anything happens (spec 4.12).

export interface MetricDefinition<L extends string = string> {
  name: string;
  help: string;
  labels?: readonly L[];
  /** Label values that exist from the start, at zero (e.g. every sync failure reason). */
  zero?: readonly Readonly<Record<L, string>>[];
}

export interface CounterHandle<L extends string = string> {
  inc(labels?: Readonly<Record<L, string>>, by?: number): void;
}

export interface GaugeHandle<L extends string = string> {
  set(value: number, labels?: Readonly<Record<L, string>>): void;
}

export interface MetricsRegistry {
  readonly enabled: boolean;
  /** Declares a counter; `owner` is the capability that emits it (a name is declared once). */
  counter<L extends string = never>(owner: string, definition: MetricDefinition<L>): CounterHandle<L>;
  gauge<L extends string = never>(owner: string, definition: MetricDefinition<L>): GaugeHandle<L>;
  /** Metric name → owning capability, for every declared metric. */
  owners(): ReadonlyMap<string, string>;
}
