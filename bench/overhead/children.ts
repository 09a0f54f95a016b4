/**
 * Child processes of the benchmark: spawned with their output going straight to a log file (so a
 * chatty child never blocks on a full pipe and the parent spends no CPU relaying it), waited for
 * by their JSON ready line, and stopped by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

/** A running child: its process and the file that receives its stdout and stderr. */
export interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  readonly exited: Promise<number | string>;
}

/** Starts `node <args>` with stdout and stderr written to `logFile` (truncated first). */
export function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, logFile: string, cwd: string): Child {
  const fd = openSync(logFile, 'w');
  const proc = spawn(process.execPath, args, { env, cwd, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  if (proc.pid === undefined) throw new Error(`${name}: could not start ${args.join(' ')}`);
  const exited = new Promise<number | string>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { name, proc, pid: proc.pid, logFile, exited };
}

/** The last lines of a child's log, for error messages. */
export function logTail(child: Child, lines = 20): string {
  try {
    return readFileSync(child.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

/** JSON objects among the lines of a child's log so far (other lines are skipped). */
export function jsonLines(child: Child): Record<string, unknown>[] {
  let text = '';
  try {
    text = readFileSync(child.logFile, 'utf8');
  } catch {
    return [];
  }
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line still being written, or not ours
    }
  }
  return out;
}

/** Polls the child's log until a JSON line satisfies `pick`; fails if the child exits or time runs out. */
export async function waitForLine(child: Child, pick: (line: Record<string, unknown>) => boolean, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  let ended: number | string | undefined;
  void child.exited.then((c) => (ended = c));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = jsonLines(child).find(pick);
    if (hit) return hit;
    if (ended !== undefined) throw new Error(`${child.name} exited (${ended}) before it was ready:\n${logTail(child)}`);
    if (Date.now() > deadline) throw new Error(`${child.name} was not ready within ${timeoutMs} ms:\n${logTail(child)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Stops a child with SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
export async function stopChild(child: Child, graceMs = 5_000): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}
