/**
 * The benchmark's side of probe.ts: the node flags that load it into a child, and the window
 * marks (a SIGUSR2 each) whose JSON lines carry the child's heap allocation, GC pauses and loop delay.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { waitForLine, type Child } from './children.js';

/** What probe.ts reports for one window of one process. */
export interface HeapWindow {
  readonly windowMs: number;
  /** V8 heap bytes allocated in the window (Buffer contents not included). */
  readonly allocatedBytes: number;
  readonly gcs: number;
  readonly gcMs: number;
  readonly gcP99Ms: number;
  readonly gcMaxMs: number;
  /** Share of the window the event loop was busy (0..1). */
  readonly loopBusy?: number;
  /**
   * Event-loop delay in the window (`monitorEventLoopDelay`, beyond its 10 ms sampling period):
   * p50, p99 and max ms, null when the window was too short for a sample; and the samples taken.
   */
  readonly loopDelayP50Ms?: number | null;
  readonly loopDelayP99Ms?: number | null;
  readonly loopDelayMaxMs?: number | null;
  readonly loopSamples?: number;
}

/** Node flags that preload the probe; put them before the script. */
export function probeArgs(): string[] {
  return ['--import', pathToFileURL(join(PROJECT_ROOT, 'dist/bench/overhead/probe.js')).href];
}

const marks = new WeakMap<Child, number>();

/** Closes the child's current probe window and opens the next; returns the number of the closed one. */
export function markWindow(child: Child): number {
  const n = (marks.get(child) ?? 0) + 1;
  marks.set(child, n);
  child.proc.kill('SIGUSR2');
  return n;
}

/** The figures of window `n` (as returned by markWindow), once the child has printed them. */
export async function readWindow(child: Child, n: number): Promise<HeapWindow> {
  return (await waitForLine(child, (l) => l.probe === n, 10_000)) as unknown as HeapWindow;
}
