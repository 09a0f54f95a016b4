import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Gives memory back once the process goes idle. V8 sizes its young generation to the allocation
 * it last saw: compiling the configuration at start (or a burst of traffic) grows it to its
 * maximum, 2 × 16 MB, and an idle process never collects again, so it sat on that and on old pages
 * it no longer used (~135 MB RSS idle; ~105 MB once trimmed: bench/overhead, issue #14). V8
 * shrinks the young generation during a full collection only once the allocation rate it has on
 * record is low, which in practice took two or three collections in a quiet spell. So: while the
 * process stays quiet, one full collection per interval until the young generation is back at
 * its smallest (at most `maxCollections`), then nothing until it has been busy again.
 */
export interface HeapTrimOptions {
  /** How often the process is looked at (default 2 s). */
  readonly intervalMs?: number;
  /** Most collections in one quiet spell (default 6). */
  readonly maxCollections?: number;
  /** Whether the process did work in the interval just ended (default: event-loop utilisation above 1 %). */
  readonly busy?: () => boolean;
  /** The collection itself (default: V8's full GC). */
  readonly gc?: () => void;
  /** Bytes the young generation holds now (default: V8's new space). */
  readonly youngBytes?: () => number;
}

/** The young generation's smallest size worth stopping at: V8's initial 1 MB semi-space, twice. */
const SMALL_YOUNG = 2 * 2 ** 20;

/** Starts trimming; returns the function that stops it. Never keeps the process alive. */
export function trimHeapWhenIdle(opts: HeapTrimOptions = {}): () => void {
  const gc = opts.gc ?? fullGc();
  if (gc === null) return () => undefined;
  const busy = opts.busy ?? busyByEventLoop();
  const youngBytes = opts.youngBytes ?? newSpaceBytes;
  const max = opts.maxCollections ?? 6;
  let collections = 0;
  const timer = setInterval(() => {
    if (busy()) collections = 0;
    else if (collections < max && youngBytes() > SMALL_YOUNG) {
      collections++;
      gc();
    }
  }, opts.intervalMs ?? 2_000);
  timer.unref();
  return () => clearInterval(timer);
}

/** Busy: the event loop ran code more than 1 % of the time since the last look. */
function busyByEventLoop(): () => boolean {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const used = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return used > 0.01;
  };
}

function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
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
