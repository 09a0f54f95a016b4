/**
 * Phase 2 of bench/streams: many streams held open at once through one target. Every stream asks
 * the simulator to stall after its first event (`[sim:fault=stream-stall:MS]` in the prompt), so
 * once each client has its first event the target holds them all, idle, mid-stream. The phase
 * reads the RSS of the target and the simulator before (idle), while all are held,
 * and after they have ended; then the stalls end, every stream runs to its completed event, and
 * each is checked. Synchronisation is by counting: "all held" is the moment the last client got its
 * first event, never a sleep.
 */
import { readdirSync } from 'node:fs';
import { Pool } from 'undici';
import { memory, watchPeak } from '../overhead/proc.js';
import { readStream, type StreamResult } from './client.js';
import type { Target } from './parties.js';

/** How a hold runs. */
export interface HoldOptions {
  readonly streams: number;
  readonly partials: number;
  /** The stall of each stream after its first event, in ms (the body carries it). */
  readonly stallMs: number;
  readonly body: string;
  /** How long after all are held the held RSS is read (the processes settle). */
  readonly settleMs: number;
}

/** What one hold measured. RSS in bytes; times in ms. */
export interface HoldRow {
  readonly name: string;
  readonly streams: number;
  /** Streams that had their first event when the RSS was read (all, unless some stall ended first). */
  readonly heldAtRead: number;
  /** The most streams held at once (first event in, not yet ended), as this process saw them. */
  readonly maxHeld: number;
  /** From the first request sent to the last client's first event; NaN when not all got one. */
  readonly allHeldMs: number;
  /** From the end of the stalls' (the first stream's stall) to the last stream's end. */
  readonly drainMs: number;
  readonly completed: number;
  readonly failed: number;
  readonly failures: readonly string[];
  readonly rss: { readonly idle: number; readonly held: number; readonly after: number; readonly peak: number };
  readonly simRss: { readonly idle: number; readonly held: number; readonly after: number };
  readonly fds: { readonly idle: number; readonly held: number };
  readonly simDelta: Readonly<Record<string, number>>;
}

/** Open file descriptors of a process now. */
export function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Holds `o.streams` streams through `t` (see the module comment). */
export async function hold(t: Target, simPid: number, simStats: () => Promise<Record<string, number>>, o: HoldOptions): Promise<HoldRow> {
  const pid = t.child.pid;
  const stats0 = await simStats();
  const idle = memory(pid).rss;
  const simIdle = memory(simPid).rss;
  const fdIdle = fdCount(pid);
  const peak = watchPeak(pid);
  const pool = new Pool(t.origin, {
    connections: o.streams,
    pipelining: 1,
    keepAliveTimeout: 10_000,
    headersTimeout: o.stallMs + 60_000,
    bodyTimeout: o.stallMs + 60_000,
  });
  let held = 0;
  let maxHeld = 0;
  let firsts = 0;
  let allHeldAt = NaN;
  let allHeld!: () => void;
  const whenAllHeld = new Promise<void>((resolve) => {
    allHeld = resolve;
  });
  const t0 = performance.now();
  let firstHeldAt = NaN;
  const runs: Promise<StreamResult>[] = [];
  for (let i = 0; i < o.streams; i++) {
    let mine = false;
    runs.push(
      readStream(pool, t, o.body, o.partials, {
        onFirstEvent: () => {
          mine = true;
          if (Number.isNaN(firstHeldAt)) firstHeldAt = performance.now();
          held++;
          maxHeld = Math.max(maxHeld, held);
          if (++firsts === o.streams) {
            allHeldAt = performance.now();
            allHeld();
          }
        },
      }).then((r) => {
        if (mine) held--;
        return r;
      }),
    );
  }
  // All held, or every stream ended (some failed before their first event): whichever comes first.
  const ended = Promise.all(runs);
  await Promise.race([whenAllHeld, ended]);
  // The processes settle a moment, but the reading must come before the first stall ends.
  await sleep(Math.min(o.settleMs, Math.max(0, firstHeldAt + o.stallMs - performance.now() - 250)));
  const heldAtRead = held;
  const rss = memory(pid).rss;
  const simRss = memory(simPid).rss;
  const fdHeld = fdCount(pid);
  const results = await ended;
  const doneAt = performance.now();
  await pool.close();
  // The target answers its last stream's end before its own bookkeeping ends: a moment for it.
  await sleep(500);
  const after = memory(pid).rss;
  const simAfter = memory(simPid).rss;
  const peakBytes = peak.stop();
  const stats1 = await simStats();
  const good = results.filter((r) => r.end === 'completed');
  return {
    name: t.name,
    streams: o.streams,
    heldAtRead,
    maxHeld,
    allHeldMs: allHeldAt - t0,
    drainMs: doneAt - (firstHeldAt + o.stallMs),
    completed: good.length,
    failed: results.length - good.length,
    failures: results.filter((r) => r.end !== 'completed').map((r) => `${t.name} (held): ${r.failure}`),
    rss: { idle, held: rss, after, peak: peakBytes },
    simRss: { idle: simIdle, held: simRss, after: simAfter },
    fds: { idle: fdIdle, held: fdHeld },
    simDelta: Object.fromEntries(Object.keys(stats1).map((k) => [k, (stats1[k] ?? 0) - (stats0[k] ?? 0)])),
  };
}
