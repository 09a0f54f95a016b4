/**
 * prom-client's Counter and Histogram with the request path's updates made cheaper. prom-client
 * finds a series by a string it builds from the labels on every call (and a histogram's observe
 * makes a closure and an object besides): about 0.3 KB of heap per counter increment and 0.5 KB
 * per observation, four of them a request (issue 41). Here each series is found by its label
 * values in nested maps, once made, and updated in place: the same entry prom-client's own inc and
 * observe update, so its exposition, reset, remove and zero stay its own. The entries are prom-client's
 * internals (a `hashMap` of `{labels, value}` or `{labels, bucketValues, sum, count}`), pinned by
 * the package version and held to a stock metric by test/unit/keyed-series.test.ts.
 */
import { Counter, type CounterConfiguration, Histogram, type HistogramConfiguration, type LabelValues } from 'prom-client';

/** What the series maps hold: by the first label's value, then the next, down to the entry. */
type Levels = Map<string, unknown>;

/** The internals of a prom-client metric these subclasses read. */
interface Internals {
  hashMap: Record<string, unknown>;
  readonly labelNames: readonly string[];
  readonly sortedLabelNames: readonly string[];
}

/** prom-client's own hash of a label set (util.js, hashObject with the sorted label names). */
function hashOf(names: readonly string[], labels: Readonly<Record<string, string>>): string {
  let hash = '';
  for (const name of names) {
    const value = labels[name];
    if (value !== undefined) hash += `${name}:${value},`;
  }
  return hash;
}

/** A series as the maps keep it: prom-client's hash of its labels and its entry in the metric's hashMap. */
interface Leaf<E> {
  readonly hash: string;
  entry: E;
}

/**
 * The entry of `labels`: found in `levels` by the label values, and checked to be the one the
 * metric holds under its hash (a reset, remove or zero replaces or drops it; then it is found or
 * made again, `make`, and put back under the hash).
 */
function entryOf<E>(metric: Internals, levels: Levels, labels: Readonly<Record<string, string>>, make: (labels: Readonly<Record<string, string>>) => E): E {
  let level = levels;
  const names = metric.labelNames;
  for (let i = 0; i < names.length - 1; i++) {
    const value = labels[names[i] as string] as string;
    let next = level.get(value) as Levels | undefined;
    if (!next) level.set(value, (next = new Map()));
    level = next;
  }
  const last = labels[names[names.length - 1] as string] as string;
  let leaf = level.get(last) as Leaf<E> | undefined;
  if (leaf === undefined) {
    const hash = hashOf(metric.sortedLabelNames, labels);
    leaf = { hash, entry: (metric.hashMap[hash] as E | undefined) ?? make(labels) };
    level.set(last, leaf);
  } else if (metric.hashMap[leaf.hash] !== leaf.entry) leaf.entry = (metric.hashMap[leaf.hash] as E | undefined) ?? make(labels);
  metric.hashMap[leaf.hash] = leaf.entry;
  return leaf.entry;
}

/** Whether every label the metric names is given as a string: otherwise prom-client's own call (and its checks) runs. */
function complete(metric: Internals, labels: Readonly<Record<string, unknown>>): labels is Readonly<Record<string, string>> {
  const names = metric.labelNames;
  if (names.length === 0) return false;
  for (const name of names) if (typeof labels[name] !== 'string') return false;
  for (const key in labels) if (!names.includes(key)) return false;
  return true;
}

/** A Counter whose `count(labels)` adds one to its series without a label string per call. */
export class KeyedCounter<L extends string> extends Counter<L> {
  readonly #levels: Levels = new Map();
  /** A new series' entry, as prom-client's inc makes it. */
  readonly #fresh = (labels: Readonly<Record<string, string>>) => ({ value: 0, labels });

  constructor(config: CounterConfiguration<L>) {
    super(config);
  }

  /** Adds one to the series of `labels` (every label named, as strings). */
  count(labels: LabelValues<L>): void {
    const self = this as unknown as Internals;
    if (!complete(self, labels)) {
      this.inc(labels);
      return;
    }
    const entry = entryOf(self, this.#levels, labels, this.#fresh);
    (entry as { value: number }).value += 1;
  }
}

/** A Histogram whose `record(labels, value)` observes into its series without a label string, a closure or an object per call. */
export class KeyedHistogram<L extends string> extends Histogram<L> {
  readonly #levels: Levels = new Map();
  readonly #bounds: readonly number[];
  readonly #emptyBuckets: Readonly<Record<string, number>>;
  /** A new series' entry, as prom-client's observe makes it. */
  readonly #fresh = (labels: Readonly<Record<string, string>>) => ({ labels, bucketValues: { ...this.#emptyBuckets }, sum: 0, count: 0 });

  constructor(config: HistogramConfiguration<L>) {
    super(config);
    const self = this as unknown as { upperBounds: readonly number[]; bucketValues: Readonly<Record<string, number>> };
    this.#bounds = self.upperBounds;
    this.#emptyBuckets = self.bucketValues;
  }

  /** Observes `value` in the series of `labels` (every label named, as strings), as `observe` does. */
  record(labels: LabelValues<L>, value: number): void {
    const self = this as unknown as Internals;
    if (!complete(self, labels) || !Number.isFinite(value)) {
      this.observe(labels, value);
      return;
    }
    const entry = entryOf(self, this.#levels, labels, this.#fresh) as {
      bucketValues: Record<string, number>;
      sum: number;
      count: number;
    };
    entry.sum += value;
    entry.count += 1;
    // The first bound the value is not above (prom-client's findBound); above every bound, only the count (+Inf).
    for (const bound of this.#bounds) {
      if (value <= bound) {
        entry.bucketValues[bound] = (entry.bucketValues[bound] ?? 0) + 1;
        break;
      }
    }
  }
}
