/** Printing of the benchmark's figures: the table, the ratios and the targets. */

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

/** The targets, for a small alpha request at 50 connections. */
export const TARGETS = { maxCpuRatio: 2, maxAddedP99Ms: 5 } as const;

const f = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** The per-metric median of several rows of one target (one row is returned as is). */
export function medianRow(rows: readonly Row[]): Row {
  if (rows.length === 1) return rows[0]!;
  const med = (pick: (r: Row) => number): number => {
    const v = rows.map(pick).sort((a, b) => a - b);
    const mid = v.length >> 1;
    return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
  };
  return {
    name: rows[0]!.name,
    reqPerSec: med((r) => r.reqPerSec),
    p50: med((r) => r.p50),
    p99: med((r) => r.p99),
    max: med((r) => r.max),
    cpuPerReq: med((r) => r.cpuPerReq),
    simCpuPerReq: med((r) => r.simCpuPerReq),
    loadCpuPerReq: med((r) => r.loadCpuPerReq),
    busyCores: med((r) => r.busyCores),
    machineCores: med((r) => r.machineCores),
    stealPct: med((r) => r.stealPct),
    rssMb: med((r) => r.rssMb),
    peakMb: med((r) => r.peakMb),
    completed: rows.reduce((s, r) => s + r.completed, 0),
    errors: rows.reduce((s, r) => s + r.errors, 0),
  };
}

/** The table: one line per target. */
export function table(rows: readonly Row[]): string {
  const head = ['target', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'CPU ms/req', 'sim CPU ms/req', 'RSS MB', 'peak RSS MB', 'our cores', 'all cores', 'steal %', 'requests', 'errors'];
  const body = rows.map((r) => [
    r.name,
    f(r.reqPerSec, 0),
    f(r.p50, 2),
    f(r.p99, 2),
    f(r.max, 1),
    f(r.cpuPerReq, 3),
    f(r.simCpuPerReq, 3),
    f(r.rssMb, 1),
    f(r.peakMb, 1),
    f(r.busyCores, 2),
    f(r.machineCores, 2),
    f(r.stealPct, 1),
    String(r.completed),
    String(r.errors),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

const signed = (n: number): string => `${n >= 0 ? '+' : ''}${f(n, 2)}`;
const label = (ok: boolean): string => (ok ? 'OK' : 'MISSED');

/**
 * Ratios gateway / pass-through, p99 added over direct, and whether each target is met. The
 * targets are judged on the closed loop, as the issue states them; the paced rows, when given,
 * add the latency the gateway adds when nothing is saturated.
 */
export function verdict(closed: readonly [Row, Row, Row], paced?: { rate: number; rows: readonly [Row, Row, Row] }): { text: string; met: boolean } {
  const [direct, pass, gw] = closed;
  const x = (a: number, b: number): string => `x${f(a / b, 2)}`;
  const cpuRatio = gw.cpuPerReq / pass.cpuPerReq;
  const addedGw = gw.p99 - direct.p99;
  const cpuOk = cpuRatio <= TARGETS.maxCpuRatio;
  const p99Ok = addedGw < TARGETS.maxAddedP99Ms;
  const lines = [
    `gateway / passthrough: req/s ${x(gw.reqPerSec, pass.reqPerSec)}, p50 ${x(gw.p50, pass.p50)}, p99 ${x(gw.p99, pass.p99)}, ` +
      `CPU/req ${x(gw.cpuPerReq, pass.cpuPerReq)}, RSS ${x(gw.rssMb, pass.rssMb)}`,
    `p99 added over direct, closed loop: passthrough ${signed(pass.p99 - direct.p99)} ms, gateway ${signed(addedGw)} ms`,
  ];
  if (paced) {
    const [pd, pp, pg] = paced.rows;
    lines.push(
      `p99 added over direct, paced at ${paced.rate} req/s: passthrough ${signed(pp.p99 - pd.p99)} ms, gateway ${signed(pg.p99 - pd.p99)} ms` +
        `; CPU/req gateway / passthrough ${x(pg.cpuPerReq, pp.cpuPerReq)}`,
    );
  }
  lines.push(
    '',
    'targets (information only; figures from a shared machine are noisy):',
    `  CPU per request <= ${TARGETS.maxCpuRatio}x the bare pass-through's (closed loop): x${f(cpuRatio, 2)}  ${label(cpuOk)}`,
    `  p99 latency added by the gateway < ${TARGETS.maxAddedP99Ms} ms (closed loop):     ${signed(addedGw)} ms  ${label(p99Ok)}`,
  );
  if (paced) {
    const added = paced.rows[2].p99 - paced.rows[0].p99;
    lines.push(`  the same, paced at ${paced.rate} req/s (not saturated, for reference): ${signed(added)} ms  ${label(added < TARGETS.maxAddedP99Ms)}`);
  }
  return { text: lines.join('\n'), met: cpuOk && p99Ok };
}
