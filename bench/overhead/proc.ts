/**
 * CPU time and memory of another process, read from /proc (Linux only). The benchmark measures its
 * children from outside so the gateway runs exactly as `gateway start` runs in production.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** Clock ticks per second of the CPU times in /proc/<pid>/stat (`getconf CLK_TCK`, 100 nearly everywhere). */
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU time a process (all its threads) has used so far, in milliseconds. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Field 2 (comm) may hold spaces or parentheses; everything after its closing ')' is fixed.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state), so utime (field 14) and stime (field 15) are rest[11] and rest[12].
  const ticks = Number(rest[11]) + Number(rest[12]);
  if (!Number.isFinite(ticks)) throw new Error(`cannot read CPU times of pid ${pid}`);
  return (ticks * 1000) / clockTicks();
}

/** Resident memory of a process: now (VmRSS) and its high-water mark since it started (VmHWM), in bytes. */
export function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : NaN;
  };
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Machine-wide CPU time so far, in milliseconds summed over all CPUs: busy, idle, and stolen by the host. */
export function machineCpuMs(): { busy: number; idle: number; steal: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number) as number[];
  const ms = (ticks: number | undefined): number => ((ticks ?? 0) * 1000) / clockTicks();
  return {
    busy: ms(user) + ms(nice) + ms(system) + ms(irq) + ms(softirq),
    idle: ms(idle) + ms(iowait),
    steal: ms(steal),
  };
}

/** Resets a process's VmHWM to its current RSS (`clear_refs` 5, Linux 4.0+); false when not allowed. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * Watches a process's peak RSS from now on, in bytes: VmHWM reset to the current RSS and read every
 * 20 ms; where the kernel refuses the reset, VmRSS sampled every 20 ms stands in (it can miss a short
 * spike). The last reading survives the process's death.
 */
export function watchPeak(pid: number): { stop(): number } {
  const exact = resetPeak(pid);
  let peak = 0;
  const read = (): void => {
    try {
      const m = memory(pid);
      peak = Math.max(peak, exact ? m.peak : m.rss);
    } catch {
      // gone: keep the last reading
    }
  };
  read();
  const timer = setInterval(read, 20);
  return {
    stop() {
      clearInterval(timer);
      read();
      return peak;
    },
  };
}
