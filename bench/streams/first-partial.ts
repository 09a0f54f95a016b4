/**
 * Phase 1 of bench/streams: the time to the first partial image. Each target gets the same stream
 * requests, `concurrency` at a time (1: one after another on one kept-alive connection, the next
 * sent once the last stream has ended), after a warm-up that is not counted; with several rounds
 * the targets take turns, the order rotating each round, so a slow spell of the machine does not
 * fall on one target only. Per target it keeps every stream's times, the CPU its process and the
 * simulator used in its windows, and the V8 heap it allocated (bench/overhead's probe).
 */
import { Pool } from 'undici';
import { percentile } from '../overhead/load.js';
import { markWindow, readWindow } from '../overhead/probe-client.js';
import { cpuMs } from '../overhead/proc.js';
import { readStream, type StreamResult } from './client.js';
import type { Target } from './parties.js';

/** How phase 1 runs. */
export interface FirstPartialOptions {
  /** Measured streams per target, over all rounds. */
  readonly requests: number;
  readonly rounds: number;
  readonly warmup: number;
  readonly concurrency: number;
  readonly partials: number;
  readonly body: string;
}

/** What one target measured over its windows. */
export interface FirstPartialRow {
  readonly name: string;
  readonly streams: number;
  readonly failed: number;
  readonly failures: readonly string[];
  /** Ascending, ms: the answer's headers, the first partial image, the completed event. */
  readonly headers: Float64Array;
  readonly first: Float64Array;
  readonly completed: Float64Array;
  /** The p50 of the first partial in each round, in round order. */
  readonly roundP50: readonly number[];
  readonly cpuMsPerStream: number;
  readonly simCpuMsPerStream: number;
  readonly heapKbPerStream: number;
  readonly gcs: number;
}

const sorted = (values: readonly number[]): Float64Array => Float64Array.from(values.filter((v) => Number.isFinite(v))).sort();

/** Runs `count` streams against `t`, `concurrency` at a time, on `pool`. */
async function batch(pool: Pool, t: Target, count: number, o: FirstPartialOptions): Promise<StreamResult[]> {
  const out: StreamResult[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++;
      out.push(await readStream(pool, t, o.body, o.partials));
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, count) }, worker));
  return out;
}

/** Runs phase 1 on the targets; `sim` is the simulator behind them all. Rows in the targets' order. */
export async function firstPartial(
  targets: readonly Target[],
  simPid: number,
  o: FirstPartialOptions,
  progress: (line: string) => void,
): Promise<FirstPartialRow[]> {
  const pools = new Map(targets.map((t) => [t, new Pool(t.origin, { connections: o.concurrency, pipelining: 1, keepAliveTimeout: 60_000 })]));
  const results = new Map<Target, StreamResult[][]>(targets.map((t) => [t, []]));
  const cpu = new Map(targets.map((t) => [t, { own: 0, sim: 0, heap: 0, gcs: 0 }]));
  try {
    for (const t of targets) {
      const warm = await batch(pools.get(t)!, t, o.warmup, o);
      const bad = warm.find((r) => r.end !== 'completed');
      if (bad) throw new Error(`${t.name}: a warm-up stream failed: ${bad.failure}`);
    }
    const perRound = Math.ceil(o.requests / o.rounds);
    for (let round = 0; round < o.rounds; round++) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const t of order) {
        progress(`bench/streams: first partial, round ${round + 1}/${o.rounds}, ${t.name}…\n`);
        const own0 = cpuMs(t.child.pid);
        const sim0 = cpuMs(simPid);
        markWindow(t.child);
        const rows = await batch(pools.get(t)!, t, Math.min(perRound, o.requests - round * perRound), o);
        const c = cpu.get(t)!;
        c.own += cpuMs(t.child.pid) - own0;
        c.sim += cpuMs(simPid) - sim0;
        const mark1 = markWindow(t.child);
        const heap = await readWindow(t.child, mark1);
        c.heap += heap.allocatedBytes;
        c.gcs += heap.gcs;
        results.get(t)!.push(rows);
      }
    }
  } finally {
    await Promise.all([...pools.values()].map((p) => p.close()));
  }
  return targets.map((t) => {
    const rounds = results.get(t)!;
    const all = rounds.flat();
    const good = all.filter((r) => r.end === 'completed');
    const c = cpu.get(t)!;
    const n = Math.max(1, all.length);
    return {
      name: t.name,
      streams: all.length,
      failed: all.length - good.length,
      failures: all.filter((r) => r.end !== 'completed').map((r) => `${t.name}: ${r.failure}`),
      headers: sorted(good.map((r) => r.headersMs)),
      first: sorted(good.map((r) => r.firstPartialMs)),
      completed: sorted(good.map((r) => r.completedMs)),
      roundP50: rounds.map((rs) => percentile(sorted(rs.filter((r) => r.end === 'completed').map((r) => r.firstPartialMs)), 0.5)),
      cpuMsPerStream: c.own / n,
      simCpuMsPerStream: c.sim / n,
      heapKbPerStream: c.heap / 1024 / n,
      gcs: c.gcs,
    };
  });
}
