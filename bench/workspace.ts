/**
 * What every benchmark runner sets up the same way: a scratch directory with the child processes
 * it starts (stopped and removed once, also on Ctrl-C), the line saying which machine ran it, and
 * the shipped channels' variables for a gateway that measures only some of them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { channelEnvNames } from '../src/config/env.js';
import { PROJECT_ROOT } from '../src/config/paths.js';
import { stopChild } from './overhead/children.js';

type Stoppable = Parameters<typeof stopChild>[0];

/** A scratch directory and the children of one run; `cleanup` stops them and removes it, once, also on SIGINT/SIGTERM. */
export function benchWorkspace<C extends Stoppable>(prefix: string): { tmp: string; children: C[]; cleanup(): Promise<void> } {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const children: C[] = [];
  let cleaned = false;
  const cleanup = async (): Promise<void> => {
    if (cleaned) return;
    cleaned = true;
    await Promise.all(children.map((c) => stopChild(c)));
    rmSync(tmp, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
  }
  return { tmp, children, cleanup };
}

/** The first line of a benchmark's output: its name, the time, Node, the CPUs and the load they were under. */
export function machineLine(name: string): string {
  const cpuList = cpus();
  return (
    `${name}  ${new Date().toISOString()}  node ${process.version}  ${cpuList.length} cpu (${cpuList[0]?.model.trim() ?? '?'})  ` +
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`
  );
}

/**
 * The variables of every shipped channel, each base URL a dead local address and each secret a
 * placeholder: `start` refuses unset variables, and a benchmark sets those of the channels it
 * measures over these.
 */
export function deadChannelEnv(): Record<string, string> {
  return Object.fromEntries(channelEnvNames(PROJECT_ROOT).map((n) => [n, n.endsWith('_BASE_URL') ? 'http://127.0.0.1:9' : 'unused']));
}
