/**
 * The benchmark's side of probe.ts: the node flags that load it into a child, and the window
 * marks (a SIGUSR2 each) whose JSON lines carry the child's heap allocation and GC pauses.
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
  /** Share of the window the event loop was busy (0..1), and the p99 of its timers' lateness. */
  readonly loopBusy?: number;
  readonly loopDelayP99Ms?: number;
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
