/**
 * bench/inflight's conclusion: the ratios gateway / pass-through, what each proxy adds over the
 * vendor called directly, and the targets of issues 41 and 30 met or not, all from figures of the
 * same run. Printed, never asserted.
 */
import { f } from '../overhead/report.js';

/** The figures of one target the conclusion reads. */
export interface TargetFigures {
  readonly failed: number;
  readonly reqPerSec: number;
  /** Latency beyond each request's own vendor delay, p50 and p99 ms. */
  readonly overP50: number;
  readonly overP99: number;
  readonly cpuPerReq: number;
  /** Peak RSS over idle per request in flight, KB. */
  readonly kbPerInFlight: number;
}

/** What the run was. */
export interface RunShape {
  /** Clients run, and asked for (fewer run when the open-file limit allows no more). */
  readonly clients: number;
  readonly asked: number;
  readonly vendorMs: number;
  /** Synchronized waves: every client's vendor delay the same, all started together. */
  readonly waves: boolean;
}

/** Issue 41's targets, ratios to the pass-through measured in the same run. */
export const TARGETS_41 = {
  /** Peak RSS over idle per request in flight, gateway / pass-through, with this many in flight. */
  maxKbInFlightRatio: 1.3,
  inFlight: 2000,
  /** p50 and p99 added over direct, gateway / pass-through, in synchronized waves. */
  maxAddedRatio: 2,
} as const;

const mark = (ok: boolean): string => (ok ? 'met' : 'NOT MET');
const ms = (n: number): string => `${n >= 0 ? '+' : ''}${f(n, 1)} ms`;
/** a / b as a factor, or '-' where b is not a positive figure to divide by. */
const ratio = (a: number, b: number, digits = 2): string => (b > 0 ? `x${f(a / b, digits)}` : '-');

/** The lines to print, after the table. */
export function conclusion(direct: TargetFigures, pass: TargetFigures, gw: TargetFigures, run: RunShape): string[] {
  const failed = direct.failed + pass.failed + gw.failed;
  const added = (r: TargetFigures) => ({ p50: r.overP50 - direct.overP50, p99: r.overP99 - direct.overP99 });
  const gwAdded = added(gw);
  const passAdded = added(pass);
  const how = run.waves ? 'in synchronized waves' : 'in a closed loop, started over one vendor period';
  const lines = [
    `gateway / passthrough: req/s ${ratio(gw.reqPerSec, pass.reqPerSec, 3)}, CPU per request ${ratio(gw.cpuPerReq, pass.cpuPerReq)}, ` +
      `KB per request in flight ${ratio(gw.kbPerInFlight, pass.kbPerInFlight)}`,
    `added over direct, p50 / p99: passthrough ${ms(passAdded.p50)} / ${ms(passAdded.p99)}, gateway ${ms(gwAdded.p50)} / ${ms(gwAdded.p99)}; ` +
      `gateway / passthrough ${ratio(gwAdded.p50, passAdded.p50)} / ${ratio(gwAdded.p99, passAdded.p99)}`,
    '',
    `targets (issue 41), ${run.clients} in flight ${how}, a ${run.vendorMs} ms vendor:`,
    `  zero failed requests: ${failed} failed (gateway ${gw.failed})  ${mark(failed === 0)}`,
    `  peak RSS over idle per request in flight <= ${TARGETS_41.maxKbInFlightRatio} x passthrough's: gateway ${f(gw.kbPerInFlight, 1)} KB, ` +
      `passthrough ${f(pass.kbPerInFlight, 1)} KB, ${ratio(gw.kbPerInFlight, pass.kbPerInFlight)}  ` +
      mark(gw.kbPerInFlight <= TARGETS_41.maxKbInFlightRatio * pass.kbPerInFlight),
  ];
  if (run.waves) {
    // Judged as gateway <= 2 x pass-through rather than by the ratio, which means nothing when the
    // pass-through adds nothing (or less than direct's own noise).
    for (const q of ['p50', 'p99'] as const)
      lines.push(
        `  ${q} added over direct <= ${TARGETS_41.maxAddedRatio} x passthrough's: gateway ${ms(gwAdded[q])}, passthrough ${ms(passAdded[q])}, ` +
          `${ratio(gwAdded[q], passAdded[q])}  ${mark(gwAdded[q] <= TARGETS_41.maxAddedRatio * passAdded[q])}`,
      );
  } else lines.push(`  (p50 and p99 added at most ${TARGETS_41.maxAddedRatio} x the pass-through's: judged with --waves)`);
  if (run.clients !== TARGETS_41.inFlight) lines.push(`  (issue 41 judges these with ${TARGETS_41.inFlight} in flight; this run had ${run.clients})`);
  if (run.clients < run.asked) lines.push(`  (run at ${run.clients} in flight, not the ${run.asked} asked: the limit on open files, above)`);
  if (!run.waves) {
    const r = gw.reqPerSec / pass.reqPerSec;
    lines.push(
      '',
      `targets (issue 30, item 2; earlier, kept for comparison), ${run.clients} in flight, a ${run.vendorMs} ms vendor:`,
      `  req/s >= 0.98 x passthrough's: x${f(r, 3)}  ${mark(r >= 0.98)}`,
      `  p50 added < 5 ms: ${f(gwAdded.p50, 1)} ms  ${mark(gwAdded.p50 < 5)}`,
      `  p99 added < 50 ms: ${f(gwAdded.p99, 1)} ms  ${mark(gwAdded.p99 < 50)}`,
      `  peak RSS over idle < 30 KB per request in flight: ${f(gw.kbPerInFlight, 1)} KB  ${mark(gw.kbPerInFlight < 30)}`,
    );
  }
  return lines;
}
