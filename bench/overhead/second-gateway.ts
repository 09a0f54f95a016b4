/**
 * A second gateway beside the first, alike but for one setting, driven by the same load in the same
 * phases and rounds: what that setting costs, from the same run. Two are known:
 * - `log`: the request log off (GATEWAY_REQUEST_LOG_DAYS=0); issue 29's target is under 5 % more
 *   gateway CPU per request with it on;
 * - `store-loop`: the embedded store on the event loop (GATEWAY_STORE_THREAD=0) instead of its own
 *   thread (issue 41, item 2); no target, the figures say what the thread costs and gives.
 */
import { f, grid, type Row } from './report.js';

/** What the second gateway changes, and how the comparison is printed. */
export interface SecondGateway {
  /** Its target's name in every table. */
  readonly target: string;
  /** Its environment on top of the first's. */
  readonly env: Readonly<Record<string, string>>;
  /** The first line of its report. */
  readonly title: string;
  /** The columns' words for the second and the first gateway. */
  readonly second: string;
  readonly first: string;
  /** Most extra CPU per request the first may cost over the second, as a fraction; null: printed, not judged. */
  readonly maxMore: number | null;
}

export const SECOND_GATEWAYS: Readonly<Record<'log' | 'store-loop', SecondGateway>> = {
  log: {
    target: 'gateway, log off',
    env: { GATEWAY_REQUEST_LOG_DAYS: '0' },
    title: 'request log cost: gateway CPU ms per request with the request log off (GATEWAY_REQUEST_LOG_DAYS=0) and on (7), same run, same load',
    second: 'off',
    first: 'on',
    maxMore: 0.05,
  },
  'store-loop': {
    target: 'gateway, store on loop',
    env: { GATEWAY_STORE_THREAD: '0' },
    title:
      "the store's thread: gateway CPU ms per request (main thread and every other) with the embedded store on the event loop (GATEWAY_STORE_THREAD=0) and on its own thread (1), same run, same load; loop p99: each one's event-loop delay",
    second: 'loop',
    first: 'thread',
    maxMore: null,
  },
};

/** One phase of one route: the first gateway's row and the second's. */
export interface SecondFigures {
  readonly route: string;
  readonly phase: string;
  readonly first: Row;
  readonly second: Row;
  /** Each round's rows, in the order run: each round's pair shared the machine's state of its moment. */
  readonly rounds: readonly { readonly first: Row; readonly second: Row }[];
}

/** The comparison table and a verdict per phase; printed, never asserted. */
export function secondGatewayReport(g: SecondGateway, figures: readonly SecondFigures[]): string {
  if (figures.length === 0) return '';
  const rows = figures.map(({ route, phase, first, second, rounds }) => {
    const more = first.cpuPerReq / second.cpuPerReq - 1;
    return [
      route,
      phase,
      f(second.cpuPerReq, 3),
      f(first.cpuPerReq, 3),
      `x${f(first.cpuPerReq / second.cpuPerReq, 3)}`,
      `${more >= 0 ? '+' : ''}${f(100 * more, 1)} %`,
      f(second.allocKbPerReq, 1),
      f(first.allocKbPerReq, 1),
      `${f(second.loopP99Ms, 1)} / ${f(first.loopP99Ms, 1)}`,
      `${f(second.p99, 1)} / ${f(first.p99, 1)}`,
      ...(g.maxMore === null ? [] : [more < g.maxMore ? 'OK' : 'MISSED']),
      rounds.map((r) => `x${f(r.first.cpuPerReq / r.second.cpuPerReq, 2)}`).join(' '),
    ];
  });
  const [a, b] = [g.second, g.first];
  return (
    `${g.title}${g.maxMore === null ? '' : `; target under +${100 * g.maxMore} %`}\n` +
    grid(
      [
        'route',
        'phase',
        `CPU ${a}`,
        `CPU ${b}`,
        `${b} / ${a}`,
        'more',
        `KB ${a}`,
        `KB ${b}`,
        `loop p99 ${a} / ${b}`,
        `p99 ms ${a} / ${b}`,
        ...(g.maxMore === null ? [] : [`< +${100 * g.maxMore} %`]),
        `${b} / ${a} by round`,
      ],
      rows,
    ) +
    '\n(CPU and KB: medians over rounds; by round: the ratio of each round, a measure of the noise of the machine)\n' +
    '\n'
  );
}
