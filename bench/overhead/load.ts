/**
 * The load generator: N connections against one target for a warm-up, then for a measured window;
 * hooks run at the window's edges so the caller can read CPU counters there. Closed loop by
 * default (each connection sends its next request as soon as the last is answered, so the target
 * runs flat out), or paced: a fixed total rate spread over the same connections, to see latency
 * when nothing is saturated.
 */
import { Pool } from 'undici';

/** Where and what to send. */
export interface LoadTarget {
  readonly origin: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** How long and how hard. */
export interface LoadOptions {
  readonly connections: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** The window closes early once this many requests have completed in it. */
  readonly maxRequests: number;
  /** Requests per second over all connections; absent or 0 for a closed loop. */
  readonly rate?: number;
  /** Called synchronously when the measured window opens and when it closes. */
  readonly onWindowStart?: () => void;
  readonly onWindowEnd?: () => void;
}

/** What one run measured. */
export interface LoadResult {
  /** 200 answers completed inside the window. */
  readonly completed: number;
  /** Length of the window, in milliseconds. */
  readonly windowMs: number;
  /** Latencies of the 200 answers both sent and completed in the window, ascending, in milliseconds. */
  readonly latencies: Float64Array;
  /** Failures by kind over warm-up and window ("HTTP 502", "ECONNRESET", …). */
  readonly errors: ReadonlyMap<string, number>;
  /** The first failure's details, to print. */
  readonly firstError?: string;
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Runs the closed loop against one target and resolves once every request has finished. */
export async function runLoad(target: LoadTarget, opts: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(target.origin, {
    connections: opts.connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const headers = { 'content-type': 'application/json', ...target.headers };
  const latencies: number[] = [];
  const errors = new Map<string, number>();
  let firstError: string | undefined;
  let phase: 'warmup' | 'window' | 'done' = 'warmup';
  let windowStart = 0;
  let windowEnd = 0;
  let closeTimer: NodeJS.Timeout | undefined;
  let completed = 0;
  const rate = opts.rate ?? 0;
  const origin = performance.now();
  let nextSlot = 0;

  const fail = (kind: string, detail: string): void => {
    errors.set(kind, (errors.get(kind) ?? 0) + 1);
    firstError ??= `${kind}: ${detail}`;
  };
  const openWindow = (): void => {
    opts.onWindowStart?.();
    windowStart = performance.now();
    phase = 'window';
    closeTimer = setTimeout(closeWindow, opts.durationMs);
  };
  function closeWindow(): void {
    if (phase !== 'window') return;
    windowEnd = performance.now();
    phase = 'done';
    clearTimeout(closeTimer);
    opts.onWindowEnd?.();
  }

  // A function, not an inline test: TypeScript would narrow `phase` across the awaits.
  const over = (): boolean => phase === 'done';

  async function worker(): Promise<void> {
    while (!over()) {
      if (rate > 0) {
        // Paced: take the next send time of the schedule and sleep until it. A target that cannot
        // keep up shows as a req/s below the rate (latency is timed from the actual send).
        const wait = origin + (nextSlot++ * 1000) / rate - performance.now();
        if (wait > 0.5) await new Promise((r) => setTimeout(r, wait));
        if (over()) break;
      }
      const started = performance.now();
      try {
        const res = await pool.request({ method: 'POST', path: target.path, headers, body: target.body });
        const body = Buffer.from(await res.body.arrayBuffer());
        const ended = performance.now();
        if (res.statusCode !== 200) {
          fail(`HTTP ${res.statusCode}`, body.subarray(0, 300).toString('utf8'));
          continue;
        }
        if (phase === 'window') {
          // Throughput and CPU count every answer completed in the window; latency only those sent
          // in it, so a straggler of the warm-up (a cold connection, a first JIT) is not a p99.
          completed++;
          if (started >= windowStart) latencies.push(ended - started);
          if (completed >= opts.maxRequests) closeWindow();
        }
      } catch (err) {
        const e = err as { code?: string; name?: string; message?: string };
        fail(e.code ?? e.name ?? 'Error', e.message ?? String(err));
        // A dead target fails instantly; do not spin.
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  }

  if (opts.warmupMs > 0) setTimeout(openWindow, opts.warmupMs);
  else openWindow();
  await Promise.all(Array.from({ length: opts.connections }, worker));
  await pool.close();
  const sorted = Float64Array.from(latencies).sort();
  return { completed, windowMs: windowEnd - windowStart, latencies: sorted, errors, firstError };
}
