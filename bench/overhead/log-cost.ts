/**
 * The request log's cost (issue 29: under 5 % more gateway CPU per request), from the same run: the
 * gateway with the log on (the default, GATEWAY_REQUEST_LOG_DAYS=7) and a second one beside it,
 * alike but for GATEWAY_REQUEST_LOG_DAYS=0, driven by the same load in the same phases.
 */
import { f, grid, type Row } from './report.js';

/** The target's name of the gateway without a request log. */
export const LOG_OFF = 'gateway, log off';
/** Most extra CPU per request the request log may cost, as a fraction. */
export const MAX_LOG_CPU = 0.05;

/** One phase of one route: the gateway's row with the log on and off. */
export interface LogCostFigures {
  readonly route: string;
  readonly phase: string;
  readonly on: Row;
  readonly off: Row;
  /** Each round's rows, on and off, in the order run: each round's pair shared the machine's state of its moment. */
  readonly rounds: readonly { readonly on: Row; readonly off: Row }[];
}

/** The comparison table and a verdict line per phase; printed, never asserted. */
export function logCostReport(figures: readonly LogCostFigures[]): string {
  if (figures.length === 0) return '';
  const rows = figures.map(({ route, phase, on, off, rounds }) => {
    const more = on.cpuPerReq / off.cpuPerReq - 1;
    return [
      route,
      phase,
      f(off.cpuPerReq, 3),
      f(on.cpuPerReq, 3),
      `x${f(on.cpuPerReq / off.cpuPerReq, 3)}`,
      `${more >= 0 ? '+' : ''}${f(100 * more, 1)} %`,
      f(off.allocKbPerReq, 1),
      f(on.allocKbPerReq, 1),
      more < MAX_LOG_CPU ? 'OK' : 'MISSED',
      rounds.map((r) => `x${f(r.on.cpuPerReq / r.off.cpuPerReq, 2)}`).join(' '),
    ];
  });
  return (
    `request log cost: gateway CPU ms per request with the request log off (GATEWAY_REQUEST_LOG_DAYS=0) and on (7), same run, same load; target under +${100 * MAX_LOG_CPU} %\n` +
    grid(['route', 'phase', 'CPU off', 'CPU on', 'on / off', 'more', 'KB off', 'KB on', `< +${100 * MAX_LOG_CPU} %`, 'on / off by round'], rows) +
    '\n(CPU and KB: medians over rounds; by round: the ratio of each round, a measure of the noise of the machine)\n' +
    '\n'
  );
}
