/**
 * Preload of every process the benchmark measures (`node --import <this file>`): the figures only
 * the process itself can see, V8 heap allocation, GC pauses and its event loop's delay, reported on
 * demand. Each SIGUSR2
 * closes the current window and opens the next one: it stops a `v8.GCProfiler`, prints the closed
 * window's figures as one JSON line on stdout (which the benchmark already reads, children.ts),
 * and starts a new profiler. So the benchmark sends one signal where its CPU window opens and one
 * where it closes, and reads the line of the second.
 *
 * Allocated bytes = growth of the used heap over the window + what every GC in it freed
 * (used before − used after). That is the V8 heap only: the contents of Buffers (external memory)
 * are not counted. A GC's pause is its `cost`, the time between its prologue and epilogue on the
 * main thread (concurrent marking on helper threads is not a pause and is not in it).
 */
import { monitorEventLoopDelay, performance as perf } from 'node:perf_hooks';
import { GCProfiler, getHeapStatistics } from 'node:v8';

let seq = 0;
let profiler = new GCProfiler();
let usedAtStart = getHeapStatistics().used_heap_size;
let startedAt = performance.now();
// How busy the event loop was in the window (a loop blocked in a system call counts as busy) and
// how late its timers ran: where a request waits that is not the CPU's doing.
let elu = perf.eventLoopUtilization();
/**
 * The histogram's timer runs every LOOP_RESOLUTION_MS and records the time since its last run, so
 * an idle loop reads about 10 ms: the delay is what exceeds the period (as bench/tasks reads it).
 * A timer due while the loop is blocked runs late by the rest of the block, which is the wait a
 * request arriving at that moment would see; 100 samples a second, 500 in a 5 s window.
 */
const LOOP_RESOLUTION_MS = 10;
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
const lateMs = (ns: number): number | null => (loopDelay.count > 0 ? Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS) : null);
loopDelay.enable();
profiler.start();

process.on('SIGUSR2', () => {
  const stats = profiler.stop()?.statistics ?? [];
  const usedNow = getHeapStatistics().used_heap_size;
  const pausesMs = stats.map((s) => s.cost / 1000).sort((a, b) => a - b);
  const freed = stats.reduce((sum, s) => sum + s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize, 0);
  const line = {
    probe: ++seq,
    windowMs: performance.now() - startedAt,
    allocatedBytes: usedNow - usedAtStart + freed,
    gcs: pausesMs.length,
    gcMs: pausesMs.reduce((a, b) => a + b, 0),
    // Nearest rank, as the benchmark's latency percentiles.
    gcP99Ms: pausesMs.length ? pausesMs[Math.ceil(0.99 * pausesMs.length) - 1] : 0,
    gcMaxMs: pausesMs.at(-1) ?? 0,
    loopBusy: perf.eventLoopUtilization(elu).utilization,
    loopDelayP50Ms: lateMs(loopDelay.percentile(50)),
    loopDelayP99Ms: lateMs(loopDelay.percentile(99)),
    loopDelayMaxMs: lateMs(loopDelay.max),
    loopSamples: loopDelay.count,
  };
  elu = perf.eventLoopUtilization();
  loopDelay.reset();
  process.stdout.write(`${JSON.stringify(line)}\n`);
  profiler = new GCProfiler();
  usedAtStart = usedNow;
  startedAt = performance.now();
  profiler.start();
});
