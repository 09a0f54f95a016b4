/**
 * The figures of bench/tasks, computed after the run from exact times: the simulator's own
 * creation and finish time of every vendor task, the gateway's `created_at` / `completed_at` from
 * its store, and the upstream call counters of both sides. Pure functions, so the arithmetic can be
 * read (and checked) apart from the process juggling in run.ts.
 */

/** Everything known about one submitted task once the run is over. */
export interface TaskFacts {
  readonly channel: string;
  /** Runner clock: request sent, answer received. */
  readonly sentAt: number;
  readonly acceptedAt: number;
  /** The gateway's record: created (before the vendor call), terminal (the look that saw the end). */
  readonly createdAt: number;
  readonly completedAt: number;
  readonly status: string;
  /** The simulator's task: accepted at the vendor, finished at the vendor, queries answered for it. */
  readonly vendorCreatedAt: number;
  readonly finishAt: number;
  readonly polls: number;
  /** Runner clock: first 500 ms read of the store that found it terminal. */
  readonly seenAt: number;
}

/** A channel as the gateway reported it. */
export interface ChannelInfo {
  readonly name: string;
  readonly profile: string;
  readonly intervalMs: number;
  readonly concurrency: number;
  readonly batchMaxIds: number | null;
}

/** Nearest-rank percentile of unsorted numbers (copied and sorted); NaN when empty. */
export function percentile(values: ArrayLike<number>, q: number): number {
  const sorted = Float64Array.from(values).sort();
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export const mean = (values: ArrayLike<number>): number => {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i]!;
  return values.length ? s / values.length : NaN;
};

export const f = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');
export const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');

/** A plain text table: first column left-aligned, the others right-aligned. */
export function table(head: readonly string[], rows: readonly (readonly string[])[], indent = '  '): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    indent +
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Latency figures of a group of tasks: vendor finish → terminal in the store. */
export interface DelayRow {
  readonly name: string;
  readonly tasks: number;
  readonly terminal: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
  /** Tasks later than one interval +10 % (the poller's jitter): a look came late. */
  readonly late: number;
  /** Tasks later than the target. */
  readonly overTarget: number;
  /** Mean time in the gateway (created → terminal) and what it would be if terminal at vendor finish. */
  readonly meanLife: number;
  readonly meanIdealLife: number;
}

export function delayRow(name: string, tasks: readonly TaskFacts[], intervalMs: number, targetMs: number): DelayRow {
  const done = tasks.filter((t) => Number.isFinite(t.completedAt) && Number.isFinite(t.finishAt));
  const delays = done.map((t) => t.completedAt - t.finishAt);
  return {
    name,
    tasks: tasks.length,
    terminal: done.length,
    p50: percentile(delays, 0.5),
    p99: percentile(delays, 0.99),
    max: percentile(delays, 1),
    mean: mean(delays),
    late: delays.filter((d) => d > intervalMs * 1.1).length,
    overTarget: delays.filter((d) => d > targetMs).length,
    meanLife: mean(done.map((t) => t.completedAt - t.createdAt)),
    meanIdealLife: mean(done.map((t) => t.finishAt - t.createdAt)),
  };
}

/** Upstream calls of a group of tasks. */
export interface CallRow {
  readonly name: string;
  readonly tasks: number;
  /** Task queries counted by the simulator (single and batch calls). */
  readonly calls: number;
  /**
   * What an ideal poller would send. Single queries: one look per task per interval on a grid from
   * its vendor acceptance, until a look sees the end. Batch queries: one grid for the channel from
   * its first acceptance; at each point one call per `maxIds` tasks that still need a look.
   */
  readonly idealCalls: number;
  /** Sum over tasks of their time in the gateway, in poll intervals. */
  readonly taskIntervals: number;
  readonly pollsP50: number;
  readonly pollsP99: number;
  readonly pollsMax: number;
  /** Task looks (the simulator's per-task query counts) per call: 1 for single queries, the mean batch size otherwise. */
  readonly tasksPerCall: number;
}

export function callRow(name: string, tasks: readonly TaskFacts[], calls: number, intervalMs: number, batchMaxIds: number | null): CallRow {
  let ideal = 0;
  let intervals = 0;
  const known = tasks.filter((t) => Number.isFinite(t.finishAt) && Number.isFinite(t.vendorCreatedAt));
  for (const t of tasks) if (Number.isFinite(t.completedAt)) intervals += (t.completedAt - t.createdAt) / intervalMs;
  if (!batchMaxIds) {
    for (const t of known) ideal += Math.max(1, Math.ceil((t.finishAt - t.vendorCreatedAt) / intervalMs));
  } else if (known.length > 0) {
    const t0 = known.reduce((m, t) => Math.min(m, t.vendorCreatedAt), Infinity);
    const last = known.reduce((m, t) => Math.max(m, t.finishAt), -Infinity);
    for (let k = 1; t0 + (k - 1) * intervalMs < last; k++) {
      const at = t0 + k * intervalMs;
      // Needs this look: accepted before it, and not seen finished by the previous one.
      const n = known.filter((t) => t.vendorCreatedAt < at && t.finishAt > at - intervalMs).length;
      ideal += Math.ceil(n / batchMaxIds);
    }
  }
  const polls = tasks.map((t) => t.polls).filter(Number.isFinite);
  return {
    name,
    tasks: tasks.length,
    calls,
    idealCalls: ideal,
    taskIntervals: intervals,
    pollsP50: percentile(polls, 0.5),
    pollsP99: percentile(polls, 0.99),
    pollsMax: percentile(polls, 1),
    tasksPerCall: polls.reduce((a, b) => a + b, 0) / calls,
  };
}

/** One sample of the live readings, taken every few seconds during the run. */
export interface Sample {
  /** Runner clock. */
  readonly at: number;
  readonly gatewayCpuMs: number;
  readonly gatewayRssMb: number;
  /** V8 heap in use (process.memoryUsage().heapUsed), to tell heap growth from other memory. */
  readonly gatewayHeapMb: number;
  /** The simulators' task query counters, all profiles: single look-ups, and batch calls. */
  readonly vendorQueries: number;
  readonly vendorBatches: number;
  /** Tasks the poller follows. */
  readonly followed: number;
}

/**
 * The timeline: per sample, how many tasks were submitted, finished at the vendor and terminal in
 * the gateway (exact, from the final data), the largest backlog (finished at the vendor, not yet
 * terminal) since the previous sample, and the sampled rates.
 */
export function timeline(
  tasks: readonly TaskFacts[],
  samples: readonly Sample[],
  start: number,
  intervalMs: number,
  single: (channel: string) => boolean,
): string[][] {
  type Ev = { at: number; d: number };
  const events: Ev[] = [];
  for (const t of tasks) {
    if (!Number.isFinite(t.finishAt)) continue;
    // A task the gateway saw end before the vendor's stated finish (finish at submission) never waits.
    const end = Number.isFinite(t.completedAt) ? Math.max(t.completedAt, t.finishAt) : Infinity;
    events.push({ at: t.finishAt, d: +1 }, { at: end, d: -1 });
  }
  events.sort((a, b) => a.at - b.at || a.d - b.d);
  const accepted = tasks.map((t) => t.acceptedAt).sort((a, b) => a - b);
  const finished = tasks
    .map((t) => t.finishAt)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const terminal = tasks
    .map((t) => t.completedAt)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const upTo = (sorted: number[], at: number): number => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const rows: string[][] = [];
  let e = 0;
  let backlog = 0;
  let prev: Sample | null = null;
  for (const s of samples) {
    let peak = backlog;
    while (e < events.length && events[e]!.at <= s.at) {
      backlog += events[e]!.d;
      peak = Math.max(peak, backlog);
      e++;
    }
    const dt = prev ? (s.at - prev.at) / 1000 : NaN;
    // The ideal poller's single queries in this period (the grid of callRow's ideal calls).
    let due = 0;
    if (prev) {
      for (const t of tasks) {
        if (!single(t.channel) || !Number.isFinite(t.finishAt)) continue;
        const last = Math.max(1, Math.ceil((t.finishAt - t.vendorCreatedAt) / intervalMs));
        const lo = Math.max(1, Math.floor((prev.at - t.vendorCreatedAt) / intervalMs) + 1);
        const hi = Math.min(last, Math.floor((s.at - t.vendorCreatedAt) / intervalMs));
        if (hi >= lo) due += hi - lo + 1;
      }
    }
    rows.push([
      f(Math.max(0, s.at - start) / 1000, 1),
      String(upTo(accepted, s.at)),
      String(upTo(finished, s.at)),
      String(upTo(terminal, s.at)),
      String(backlog),
      String(peak),
      String(s.followed),
      prev ? f(due / dt, 0) : '-',
      prev ? f((s.vendorQueries - prev.vendorQueries) / dt, 0) : '-',
      prev ? f((s.vendorBatches - prev.vendorBatches) / dt, 0) : '-',
      prev ? f((s.gatewayCpuMs - prev.gatewayCpuMs) / (dt * 10), 0) : '-',
      f(s.gatewayRssMb, 1),
      f(s.gatewayHeapMb, 1),
    ]);
    prev = s;
  }
  return rows;
}

export const TIMELINE_HEAD = [
  't s',
  'submitted',
  'vendor done',
  'terminal',
  'backlog',
  'backlog max',
  'followed',
  'ideal queries/s',
  'queries/s',
  'batch calls/s',
  'gateway CPU %',
  'RSS MB',
  'heap MB',
];
