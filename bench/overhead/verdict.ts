/**
 * The benchmark's conclusion: ratios gateway / pass-through per route, the p99 the gateway adds
 * over the simulator called directly, and each target of issue 14 met or missed, all from figures
 * of the same run. Printed, never asserted.
 */
import { bigBodyRatio, type BigBodyResult } from './big-bodies.js';
import { f, grid, type Row } from './report.js';

/** The targets. */
export const TARGETS = {
  maxCpuRatio: 1.5,
  maxAddedP99ClosedMs: 5,
  maxAddedP99PacedMs: 2,
  maxIdleRssMb: 90,
  maxPeakRssMb: 150,
  maxBigBodyRatio: 2.5,
} as const;

/** The medians of one route: direct, passthrough, gateway, closed loop and (unless skipped) paced. */
export interface RouteFigures {
  readonly route: string;
  readonly closed: readonly [Row, Row, Row];
  readonly paced?: { readonly rate: number; readonly rows: readonly [Row, Row, Row] };
}

/** The gateway's memory: RSS idle after start (before load), peak over the load phases, the big-body phase. */
export interface GatewayMemory {
  /** RSS when idle, `idleAfterS` seconds after start with no request yet. */
  readonly idleMb: number;
  readonly idleAfterS: number;
  readonly peakMb: number;
  readonly big?: BigBodyResult;
}

const signed = (n: number): string => `${n >= 0 ? '+' : ''}${f(n, 2)}`;
const label = (ok: boolean): string => (ok ? 'OK' : 'MISSED');
const x = (a: number, b: number): string => `x${f(a / b, 2)}`;

/** Ratio and difference lines of one route. */
function ratios({ route, closed, paced }: RouteFigures): string[] {
  const [direct, pass, gw] = closed;
  const lines = [
    `${route}, gateway / passthrough, closed loop: req/s ${x(gw.reqPerSec, pass.reqPerSec)}, p50 ${x(gw.p50, pass.p50)}, p99 ${x(gw.p99, pass.p99)}, ` +
      `CPU/req ${x(gw.cpuPerReq, pass.cpuPerReq)}, KB/req ${x(gw.allocKbPerReq, pass.allocKbPerReq)}, RSS ${x(gw.rssMb, pass.rssMb)}`,
    `${route}, p99 added over direct, closed loop: passthrough ${signed(pass.p99 - direct.p99)} ms, gateway ${signed(gw.p99 - direct.p99)} ms`,
  ];
  if (paced) {
    const [pd, pp, pg] = paced.rows;
    lines.push(
      `${route}, paced at ${paced.rate} req/s: p99 added over direct: passthrough ${signed(pp.p99 - pd.p99)} ms, gateway ${signed(pg.p99 - pd.p99)} ms; ` +
        `CPU/req gateway / passthrough ${x(pg.cpuPerReq, pp.cpuPerReq)}, KB/req ${x(pg.allocKbPerReq, pp.allocKbPerReq)}`,
    );
  }
  return lines;
}

/** The target lines of one route: CPU per request and p99 added, closed loop and paced. */
function routeTargets({ route, closed, paced }: RouteFigures): string[][] {
  const [direct, pass, gw] = closed;
  const cpu = gw.cpuPerReq / pass.cpuPerReq;
  const added = gw.p99 - direct.p99;
  const rows = [
    [route, `CPU/req <= ${TARGETS.maxCpuRatio}x the pass-through's, closed loop`, `x${f(cpu, 2)}`, label(cpu <= TARGETS.maxCpuRatio)],
    [route, `p99 added over direct < ${TARGETS.maxAddedP99ClosedMs} ms, closed loop`, `${signed(added)} ms`, label(added < TARGETS.maxAddedP99ClosedMs)],
  ];
  if (paced) {
    const [pd, pp, pg] = paced.rows;
    const pacedCpu = pg.cpuPerReq / pp.cpuPerReq;
    const pacedAdded = pg.p99 - pd.p99;
    rows.push(
      [
        route,
        `CPU/req <= ${TARGETS.maxCpuRatio}x the pass-through's, paced at ${paced.rate} req/s`,
        `x${f(pacedCpu, 2)}`,
        label(pacedCpu <= TARGETS.maxCpuRatio),
      ],
      [
        route,
        `p99 added over direct < ${TARGETS.maxAddedP99PacedMs} ms, paced at ${paced.rate} req/s`,
        `${signed(pacedAdded)} ms`,
        label(pacedAdded < TARGETS.maxAddedP99PacedMs),
      ],
    );
  }
  return rows;
}

/** Every ratio and target line, ready to print. */
export function verdict(routes: readonly RouteFigures[], memory: GatewayMemory, failedRequests: number): string {
  const rows = routes.flatMap(routeTargets);
  rows.push(
    [
      'gateway',
      `idle RSS < ${TARGETS.maxIdleRssMb} MB (${memory.idleAfterS} s after start, before load)`,
      `${f(memory.idleMb, 1)} MB`,
      label(memory.idleMb < TARGETS.maxIdleRssMb),
    ],
    ['gateway', `peak RSS < ${TARGETS.maxPeakRssMb} MB (over the load phases)`, `${f(memory.peakMb, 1)} MB`, label(memory.peakMb < TARGETS.maxPeakRssMb)],
  );
  if (memory.big) {
    const { count, bodyBytes } = memory.big;
    const ratio = bigBodyRatio(memory.big);
    const what = `(peak - idle RSS) / bytes in flight <= ${TARGETS.maxBigBodyRatio}, ${count} x ${f(bodyBytes / 2 ** 20, 0)} MB`;
    rows.push(['big bodies', what, `x${f(ratio, 2)}`, label(ratio <= TARGETS.maxBigBodyRatio)]);
  }
  rows.push(['every phase', 'failed requests = 0', String(failedRequests), label(failedRequests === 0)]);
  return [
    ...routes.flatMap(ratios),
    '',
    'targets (ratios and differences from this run; information only, never asserted: the machine is shared):',
    grid(['route', 'target', 'measured', ''], rows),
  ].join('\n');
}
