/**
 * One phase of bench/overhead: every target of a route driven in turn, for one or more rounds, with
 * the processes' counters read at the edges of each measured window: CPU and memory from /proc,
 * heap allocation, GC pauses and event-loop delay from the process's own probe (probe.ts).
 */
import type { Child } from './children.js';
import { percentile, runLoad, type LoadTarget } from './load.js';
import { markWindow, readWindow } from './probe-client.js';
import { cpuMs, machineCpuMs, memory } from './proc.js';
import { medianRow, table, type Row } from './report.js';

/** A target of the load: its name, the process measured for it, and what to send. */
export interface Target {
  readonly name: string;
  readonly child: Child;
  readonly load: LoadTarget;
}

/** How long and how hard each window is. */
export interface PhaseSettings {
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly connections: number;
  readonly rounds: number;
  readonly maxRequests: number;
}

/** Drives one target for one window and reads the processes' counters at the window's edges. */
async function measure(t: Target, sim: Child, s: PhaseSettings, rate: number): Promise<{ row: Row; errors: string[] }> {
  const { pid } = t.child;
  let machine0 = machineCpuMs();
  let machine1 = machine0;
  let cpu0 = 0;
  let sim0 = 0;
  let self0 = process.cpuUsage();
  let cpu1 = 0;
  let sim1 = 0;
  let self1 = self0;
  let heapWindow = 0;
  const result = await runLoad(t.load, {
    connections: s.connections,
    warmupMs: s.warmupMs,
    durationMs: s.durationMs,
    maxRequests: s.maxRequests,
    rate,
    onWindowStart: () => {
      markWindow(t.child);
      machine0 = machineCpuMs();
      cpu0 = cpuMs(pid);
      sim0 = cpuMs(sim.pid);
      self0 = process.cpuUsage();
    },
    onWindowEnd: () => {
      machine1 = machineCpuMs();
      cpu1 = cpuMs(pid);
      sim1 = cpuMs(sim.pid);
      self1 = process.cpuUsage(self0);
      heapWindow = markWindow(t.child);
    },
  });
  const heap = await readWindow(t.child, heapWindow);
  const mem = memory(pid);
  const n = result.completed;
  const selfMs = (self1.user + self1.system) / 1000;
  const measuredMs = cpu1 - cpu0;
  const simMs = sim1 - sim0;
  const errors = [...result.errors.values()].reduce((a, b) => a + b, 0);
  const row: Row = {
    name: t.name,
    reqPerSec: (n * 1000) / result.windowMs,
    p50: percentile(result.latencies, 0.5),
    p99: percentile(result.latencies, 0.99),
    max: percentile(result.latencies, 1),
    cpuPerReq: measuredMs / n,
    simCpuPerReq: simMs / n,
    loadCpuPerReq: selfMs / n,
    allocKbPerReq: heap.allocatedBytes / 1024 / n,
    gcs: heap.gcs,
    gcP99Ms: heap.gcP99Ms,
    loopP50Ms: heap.loopDelayP50Ms ?? NaN,
    loopP99Ms: heap.loopDelayP99Ms ?? NaN,
    loopMaxMs: heap.loopDelayMaxMs ?? NaN,
    busyCores: (measuredMs + (pid === sim.pid ? 0 : simMs) + selfMs) / result.windowMs,
    machineCores: (machine1.busy - machine0.busy) / result.windowMs,
    stealPct:
      (100 * (machine1.steal - machine0.steal)) /
      Math.max(1, machine1.busy + machine1.idle + machine1.steal - (machine0.busy + machine0.idle + machine0.steal)),
    rssMb: mem.rss / 2 ** 20,
    peakMb: mem.peak / 2 ** 20,
    completed: n,
    errors,
  };
  const lines = [...result.errors].map(([kind, count]) => `${t.name}: ${count} x ${kind}`);
  if (result.firstError) lines.push(`${t.name}: first failure: ${result.firstError.slice(0, 300)}`);
  return { row, errors: lines };
}

/**
 * Every target for every round at one rate (0: closed loop); prints each round (when several) and
 * the per-target medians, adds failures to `errorLines`, and returns the medians in target order.
 * `rounds`, when given, gets every round's row of each target, by target name.
 */
export async function runPhase(
  title: string,
  targets: readonly Target[],
  sim: Child,
  s: PhaseSettings,
  rate: number,
  errorLines: string[],
  rounds: Map<string, Row[]> = new Map(),
): Promise<Row[]> {
  const rows = rounds;
  for (const t of targets) rows.set(t.name, []);
  for (let round = 1; round <= s.rounds; round++) {
    // Later rounds alternate the order so slow drift on the machine does not favour one target.
    const order = round % 2 === 1 ? targets : [...targets].reverse();
    for (const t of order) {
      const { row, errors } = await measure(t, sim, s, rate);
      rows.get(t.name)!.push(row);
      errorLines.push(...errors.map((e) => `${title}, ${e}`));
      await new Promise((r) => setTimeout(r, 200));
    }
    if (s.rounds > 1) process.stdout.write(`${title}, round ${round}\n${table(targets.map((t) => rows.get(t.name)!.at(-1)!))}\n\n`);
  }
  const summary = targets.map((t) => medianRow(rows.get(t.name)!));
  process.stdout.write(`${title}${s.rounds > 1 ? `, median of ${s.rounds} rounds` : ''}\n${table(summary)}\n`);
  process.stdout.write(`load generator CPU ms/req: ${summary.map((r) => `${r.name} ${r.loadCpuPerReq.toFixed(3)}`).join(', ')}\n\n`);
  return summary;
}
