/**
 * Bytes this process allocates on the V8 heap while a piece of work runs: a figure a test can
 * assert, unlike a timing. Node 20 has no `total_allocated_bytes` in v8.getHeapStatistics(), and
 * process.memoryUsage() tells what is held, not what was allocated. So, as bench/overhead/probe.ts:
 * allocated = the growth of the used heap over the window + what every GC in the window freed
 * (its used heap before − after), read by a v8.GCProfiler. That sum is exact whatever the GCs
 * did, so no GC is forced first: a forced full GC flushes compiled code and V8's caches, and the
 * work after it rebuilds them, 2 to 6 MB counted against the window (measured on the images
 * route: 58.4 KB a request over 3,000 requests after a forced GC, 55.9 without). This is the V8
 * heap only: the contents of Buffers (external memory) are not counted.
 */
import { GCProfiler, getHeapStatistics } from 'node:v8';

/** The V8 heap bytes allocated while `work` ran (anything else the process did meanwhile included). */
export async function allocatedDuring(work: () => Promise<void> | void): Promise<number> {
  const profiler = new GCProfiler();
  profiler.start();
  const usedAtStart = getHeapStatistics().used_heap_size;
  await work();
  const usedAtEnd = getHeapStatistics().used_heap_size;
  const gcs = profiler.stop()?.statistics ?? [];
  const freed = gcs.reduce((sum, s) => sum + s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize, 0);
  return usedAtEnd - usedAtStart + freed;
}
