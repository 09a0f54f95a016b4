import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths.js';

/** The compiled CLI. */
export const CLI = join(PROJECT_ROOT, 'dist/src/cli.js');

/** Runs the CLI to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A CLI process left running, with everything it printed so far. */
export interface Running {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `re` in stdout+stderr; rejects if the process exits first or after `ms`. */
  waitFor(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts the CLI in the background. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Running {
  return startProcess(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });
}

/**
 * Starts any command in the background, with exactly `env` (an installed package's `npx gateway`,
 * say). With `group`, it leads a process group of its own and `stop` signals the whole group, as a
 * terminal's Ctrl-C does: for a command that runs the process that matters as its child (npx).
 */
export function startProcess(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; group?: boolean }): Running {
  const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.group === true });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString('utf8');
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    waitFor(re, ms = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(re);
          if (m) {
            done();
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${re}; output so far:\n${out}`));
        }, ms);
        const onExit = () => {
          check();
          done();
          reject(new Error(`process exited before printing ${re}; output:\n${out}`));
        };
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off('exit', onExit);
        };
        listeners.add(check);
        child.once('exit', onExit);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        if (opts.group === true && child.pid !== undefined) process.kill(-child.pid, signal);
        else child.kill(signal);
      }
      return exited;
    },
  };
}
