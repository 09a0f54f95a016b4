/**
 * The load of bench/inflight: N clients, each with one request in flight at a time, sending its
 * next one as soon as the last is answered (a closed loop). The clients start spread evenly over
 * one vendor period, so arrivals are steady rather than N at once every period: thousands of
 * independent clients do not arrive in lockstep, and a burst of N would measure how long the
 * target takes to get through N requests, not what one request in flight costs.
 *
 * The window counts answers completed in it (throughput, CPU) and times every request sent in it,
 * to its answer even when that comes after the window closed: with a vendor of seconds, timing only
 * requests both sent and answered inside it would drop the slow ones.
 */
import { Pool } from 'undici';

/** Where and what to send. */
export interface InflightTarget {
  readonly origin: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Client i sends body i (modulo the count) and its vendor answers after delays[i] ms. */
  readonly bodies: readonly string[];
  readonly delays: readonly number[];
}

/** How many, how long. */
export interface InflightOptions {
  readonly clients: number;
  /** Clients start one after another over this many ms (one vendor period). */
  readonly rampMs: number;
  /** Unmeasured time after the ramp, before the window opens. */
  readonly settleMs: number;
  readonly durationMs: number;
  /** A request not answered within this is a failure. */
  readonly timeoutMs: number;
  /** Called synchronously where the measured window opens and closes. */
  readonly onWindowStart?: () => void;
  readonly onWindowEnd?: () => void;
  /** Checks a 200 answer's body; false counts as a failure. */
  readonly isGood: (text: string) => boolean;
}

/** What one run measured. */
export interface InflightResult {
  /** Good answers completed inside the window. */
  readonly completed: number;
  readonly windowMs: number;
  /** Latencies, in ms ascending, of the requests sent in the window that got a good answer. */
  readonly latencies: Float64Array;
  /** The same requests' latency beyond their vendor's delay (what the path added), ascending. */
  readonly excess: Float64Array;
  /** The most requests in flight at once, seen by the load generator. */
  readonly maxInFlight: number;
  /** Failures by kind over the whole run ("HTTP 502", "UND_ERR_HEADERS_TIMEOUT", …). */
  readonly errors: ReadonlyMap<string, number>;
  readonly firstError?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the clients against one target until the window has closed and every request has ended. */
export async function runInflight(target: InflightTarget, opts: InflightOptions): Promise<InflightResult> {
  const pool = new Pool(target.origin, {
    connections: opts.clients,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
  const headers = { 'content-type': 'application/json', ...target.headers };
  const latencies: number[] = [];
  const excess: number[] = [];
  const errors = new Map<string, number>();
  let firstError: string | undefined;
  let phase: 'before' | 'window' | 'done' = 'before';
  let windowStart = 0;
  let windowEnd = 0;
  let completed = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  const fail = (kind: string, detail: string): void => {
    errors.set(kind, (errors.get(kind) ?? 0) + 1);
    firstError ??= `${kind}: ${detail}`;
  };
  const over = (): boolean => phase === 'done';

  async function client(i: number): Promise<void> {
    await sleep((i * opts.rampMs) / opts.clients);
    const body = target.bodies[i % target.bodies.length]!;
    const delay = target.delays[i % target.delays.length]!;
    while (!over()) {
      const started = performance.now();
      const timed = phase === 'window';
      inFlight++;
      if (inFlight > maxInFlight) maxInFlight = inFlight;
      try {
        const res = await pool.request({ method: 'POST', path: target.path, headers, body });
        const text = await res.body.text();
        const ended = performance.now();
        if (res.statusCode !== 200 || !opts.isGood(text)) {
          fail(`HTTP ${res.statusCode}`, text.slice(0, 300));
          continue;
        }
        if (phase === 'window') completed++;
        if (timed) {
          latencies.push(ended - started);
          excess.push(ended - started - delay);
        }
      } catch (err) {
        const e = err as { code?: string; name?: string; message?: string };
        fail(e.code ?? e.name ?? 'Error', e.message ?? String(err));
        // A dead target fails at once; do not spin.
        await sleep(100);
      } finally {
        inFlight--;
      }
    }
  }

  const opening = setTimeout(() => {
    opts.onWindowStart?.();
    windowStart = performance.now();
    phase = 'window';
    setTimeout(() => {
      windowEnd = performance.now();
      phase = 'done';
      opts.onWindowEnd?.();
    }, opts.durationMs);
  }, opts.rampMs + opts.settleMs);
  try {
    await Promise.all(Array.from({ length: opts.clients }, (_, i) => client(i)));
  } finally {
    clearTimeout(opening);
    await pool.close();
  }
  return {
    completed,
    windowMs: windowEnd - windowStart,
    latencies: Float64Array.from(latencies).sort(),
    excess: Float64Array.from(excess).sort(),
    maxInFlight,
    errors,
    firstError,
  };
}
