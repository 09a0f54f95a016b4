import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Gives memory back once the process goes idle. V8 sizes its young generation to the allocation
 * it last saw: compiling the configuration at start (or a burst of traffic) grows it to its
 * maximum, 2 × 16 MB, and an idle process never collects again, so it sat on that and on old pages
 * it no longer used (~135 MB RSS idle; ~105 MB once trimmed: bench/overhead, issue #14). V8
 * shrinks the young generation during a full collection only once its record of the allocation
 * rate (the last 5 s) is low: collecting every 2 s from the first quiet look took four or five
 * collections to get there, collecting once the process has been quiet for 6 s gets there with
 * the first. So: once the process has been quiet for `quietLooks` looks in a row, one full
 * collection per look until the young generation is back at its smallest (at most
 * `maxCollections`), then one that compacts, when over 2 MB of the old generation's pages are
 * free, then nothing until it has been busy again.
 *
 * Why the compacting one: a full collection frees objects but keeps the pages they were on unless
 * V8 picks the page to evacuate, and after the start about 5 MB of old-space pages were left
 * free (committed 25-26 MB for 20 MB live). Compacting moves what lives onto fewer pages and
 * gives the rest back: about 3 MB of RSS (issue 41). It is a longer pause (70-130 ms against
 * 35-80 ms for the plain one, 2 shared cores under load), so it runs once per quiet spell, and
 * last: with the young generation small and the garbage gone it copies only what lives in the
 * old generation (compacting the first collection after the start, 53 MB committed, raised the
 * process's peak RSS by 16 MB). The flag is V8's own, set for that one collection.
 */
export interface HeapTrimOptions {
  /** How often the process is looked at (default 2 s). */
  readonly intervalMs?: number;
  /** Looks in a row that must find the process quiet before the first collection (default 3). */
  readonly quietLooks?: number;
  /** Most collections in one quiet spell (default 6), the compacting one not counted. */
  readonly maxCollections?: number;
  /**
   * Whether the process did work in the interval just ended (default: event-loop utilisation above
   * 2 %, less the time of the trimmer's own collection, `ownMs`).
   */
  readonly busy?: (ownMs: number) => boolean;
  /** The collection itself (default: V8's full GC). */
  readonly gc?: () => void;
  /** The last collection of a quiet spell (default: `gc` with V8's compaction forced). */
  readonly compact?: () => void;
  /** Bytes the young generation holds now (default: V8's new space). */
  readonly youngBytes?: () => number;
  /** Bytes of the old generation's pages that hold nothing (default: V8's old and code spaces, size less used). */
  readonly slackBytes?: () => number;
}

/** The young generation's smallest size worth stopping at: V8's initial 1 MB semi-space, twice. */
const SMALL_YOUNG = 2 * 2 ** 20;
/** Free room in the old generation worth a compacting pause for. */
const SLACK_WORTH_COMPACTING = 2 * 2 ** 20;

/** Starts trimming; returns the function that stops it. Never keeps the process alive. */
export function trimHeapWhenIdle(opts: HeapTrimOptions = {}): () => void {
  const gc = opts.gc ?? fullGc();
  if (gc === null) return () => undefined;
  const compact = opts.compact ?? compacting(gc);
  const busy = opts.busy ?? busyByEventLoop();
  const youngBytes = opts.youngBytes ?? newSpaceBytes;
  const slackBytes = opts.slackBytes ?? oldSlackBytes;
  const max = opts.maxCollections ?? 6;
  const settle = opts.quietLooks ?? 3;
  let quiet = 0;
  let collections = 0;
  let compacted = false;
  // Time spent in the trimmer's own collection during the interval just ended: not the process being busy.
  let ownMs = 0;
  const timed = (collect: () => void) => {
    const started = performance.now();
    collect();
    ownMs = performance.now() - started;
  };
  const timer = setInterval(() => {
    const wasBusy = busy(ownMs);
    ownMs = 0;
    if (wasBusy) {
      quiet = 0;
      collections = 0;
      compacted = false;
    } else if (++quiet < settle) {
      // Not quiet long enough yet.
    } else if (collections < max && youngBytes() > SMALL_YOUNG) {
      collections++;
      timed(gc);
    } else if (collections > 0 && !compacted) {
      // Only after a spell that collected (a process idle from the start has nothing to give back),
      // and only when there is room enough to give back for the pause.
      compacted = true;
      if (slackBytes() > SLACK_WORTH_COMPACTING) timed(compact);
    }
  }, opts.intervalMs ?? 2_000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Busy: the event loop ran code more than 2 % of the time since the last look, less `ownMs`. An
 * idle gateway's own timers (task leases, webhook deliveries, the store's checkpoints) keep it
 * busy 0.6-1.1 % of the time on 2 shared cores under load: at 1 % (issue 14's bound) a look in
 * three or four found it busy, and the quiet spell started over.
 */
function busyByEventLoop(): (ownMs: number) => boolean {
  let last = performance.eventLoopUtilization();
  return (ownMs) => {
    const now = performance.eventLoopUtilization();
    const { active, idle } = performance.eventLoopUtilization(now, last);
    last = now;
    const elapsed = active + idle;
    return elapsed > 0 && (active - ownMs) / elapsed > 0.02;
  };
}

function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

function oldSlackBytes(): number {
  let slack = 0;
  for (const s of getHeapSpaceStatistics()) if (s.space_name === 'old_space' || s.space_name === 'code_space') slack += s.space_size - s.space_used_size;
  return slack;
}

/**
 * `gc` with V8's compaction forced for that one collection. The flag is read when a full
 * collection starts, so setting it just before and clearing it just after touches no other one.
 */
function compacting(gc: () => void): () => void {
  return () => {
    setFlagsFromString('--compact-on-every-full-gc');
    try {
      gc();
    } finally {
      setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}

/**
 * V8's full collection, or null where it cannot be had. `--expose-gc` set after start only makes
 * contexts created from then on see `gc`: the one made here is the only one that does.
 */
function fullGc(): (() => void) | null {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? () => (gc as () => void)() : null;
  } catch {
    return null;
  }
}
