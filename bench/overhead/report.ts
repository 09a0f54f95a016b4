/** Printing of the benchmark's figures: the rows of one target, their medians over rounds, the tables. */

/** The figures of one target in one measured window (or the median over several). */
export interface Row {
  readonly name: string;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** CPU of the measured process (the simulator for `direct`), per completed request. */
  readonly cpuPerReq: number;
  /** CPU of the simulator process per request, the same work behind every target. */
  readonly simCpuPerReq: number;
  /** CPU of this load generator per request. */
  readonly loadCpuPerReq: number;
  /** V8 heap KB the measured process allocated per request (probe.ts). */
  readonly allocKbPerReq: number;
  /** GC pauses of the measured process in the window, and their p99 in ms (probe.ts). */
  readonly gcs: number;
  readonly gcP99Ms: number;
  /** The measured process's event-loop delay in the window, p50 / p99 / max ms (probe.ts). */
  readonly loopP50Ms: number;
  readonly loopP99Ms: number;
  readonly loopMaxMs: number;
  /** Cores kept busy by measured process + simulator + load generator during the window. */
  readonly busyCores: number;
  /** Cores busy on the whole machine during the window (everything, kernel included). */
  readonly machineCores: number;
  /** Share of CPU time the hypervisor took away during the window, in percent. */
  readonly stealPct: number;
  readonly rssMb: number;
  readonly peakMb: number;
  readonly completed: number;
  readonly errors: number;
}

/** Figures that add up over rounds; every other one is a median. */
const SUMMED = new Set<keyof Row>(['completed', 'errors']);

export const f = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** The median of some numbers (NaN for none). */
export function median(values: readonly number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length === 0 ? NaN : v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/** The per-metric median of several rows of one target (one row is returned as is). */
export function medianRow(rows: readonly Row[]): Row {
  if (rows.length === 1) return rows[0]!;
  const out: Record<string, unknown> = { name: rows[0]!.name };
  for (const key of Object.keys(rows[0]!) as (keyof Row)[]) {
    if (key === 'name') continue;
    const values = rows.map((r) => r[key] as number);
    out[key] = SUMMED.has(key) ? values.reduce((a, b) => a + b, 0) : median(values);
  }
  return out as unknown as Row;
}

/** Left-aligned first column, the others right-aligned, under a ruled header. */
export function grid(head: readonly string[], body: readonly string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** The table: one line per target. */
export function table(rows: readonly Row[]): string {
  const head = [
    'target',
    'req/s',
    'p50 ms',
    'p99 ms',
    'max ms',
    'CPU ms/req',
    'sim CPU ms/req',
    'KB/req',
    'GCs',
    'GC p99 ms',
    'loop p50 ms',
    'loop p99 ms',
    'loop max ms',
    'RSS MB',
    'peak RSS MB',
    'our cores',
    'all cores',
    'steal %',
    'requests',
    'errors',
  ];
  const body = rows.map((r) => [
    r.name,
    f(r.reqPerSec, 0),
    f(r.p50, 2),
    f(r.p99, 2),
    f(r.max, 1),
    f(r.cpuPerReq, 3),
    f(r.simCpuPerReq, 3),
    f(r.allocKbPerReq, 1),
    f(r.gcs, 0),
    f(r.gcP99Ms, 2),
    f(r.loopP50Ms, 2),
    f(r.loopP99Ms, 2),
    f(r.loopMaxMs, 1),
    f(r.rssMb, 1),
    f(r.peakMb, 1),
    f(r.busyCores, 2),
    f(r.machineCores, 2),
    f(r.stealPct, 1),
    String(r.completed),
    String(r.errors),
  ]);
  return grid(head, body);
}
