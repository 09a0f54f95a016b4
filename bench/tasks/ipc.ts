/**
 * Child processes of bench/tasks with an IPC channel: the child announces itself with one `ready`
 * message and answers requests (`{seq, type, payload}` → `{seq, body}`). Output goes straight to a
 * log file, as in bench/overhead, so a chatty child never blocks on a pipe. A child whose parent
 * goes away (IPC disconnect) exits by itself.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

/** A running child with a request/answer channel. */
export interface IpcChild {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly logFile: string;
  /** The child's `ready` message. */
  readonly ready: Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  readonly exited: Promise<number | string>;
  /** Sends a request and resolves with the child's answer. */
  request<T>(type: string, payload?: unknown): Promise<T>;
}

/** The last lines of a child's log, for error messages. */
export function logTail(logFile: string, lines = 20): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

/** Starts `node <script>` with IPC (advanced serialisation: typed arrays cross as they are). */
export function startIpcChild(name: string, script: string, env: NodeJS.ProcessEnv, logFile: string, cwd: string, readyTimeoutMs = 30_000): IpcChild {
  const fd = openSync(logFile, 'w');
  const proc = fork(script, [], { env, cwd, stdio: ['ignore', fd, fd, 'ipc'], serialization: 'advanced' });
  closeSync(fd);
  if (proc.pid === undefined) throw new Error(`${name}: could not start ${script}`);
  const exited = new Promise<number | string>((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let seq = 0;
  let readyResolve!: (m: Record<string, unknown>) => void;
  let readyReject!: (e: Error) => void;
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    readyResolve = resolve;
    readyReject = reject;
  });
  const timer = setTimeout(() => readyReject(new Error(`${name} was not ready within ${readyTimeoutMs} ms:\n${logTail(logFile)}`)), readyTimeoutMs);
  proc.on('message', (raw) => {
    const m = raw as { type?: string; seq?: number; body?: unknown; error?: string };
    if (m.type === 'ready') {
      clearTimeout(timer);
      readyResolve(m as Record<string, unknown>);
    } else if (typeof m.seq === 'number') {
      const p = pending.get(m.seq);
      pending.delete(m.seq);
      if (m.error !== undefined) p?.reject(new Error(`${name}: ${m.error}`));
      else p?.resolve(m.body);
    }
  });
  void exited.then((code) => {
    clearTimeout(timer);
    const err = new Error(`${name} exited (${code}):\n${logTail(logFile)}`);
    readyReject(err);
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  });
  ready.catch(() => undefined);
  return {
    name,
    proc,
    pid: proc.pid,
    logFile,
    ready,
    exited,
    request<T>(type: string, payload?: unknown): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const n = ++seq;
        pending.set(n, { resolve: resolve as (v: unknown) => void, reject });
        proc.send({ seq: n, type, payload }, (err) => {
          if (err) {
            pending.delete(n);
            reject(err);
          }
        });
      });
    },
  };
}

/**
 * Child side: announces `ready` with `info`, answers requests with `handlers`, and runs `stop`
 * on SIGTERM, SIGINT or when the parent goes away.
 */
export function serveParent(info: Record<string, unknown>, handlers: Record<string, (payload: unknown) => unknown>, stop: () => Promise<void>): void {
  let stopping = false;
  const end = (): void => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('message', (raw) => {
    const m = raw as { seq: number; type: string; payload?: unknown };
    const handler = handlers[m.type];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown request ${m.type}`);
        return handler(m.payload);
      })
      .then(
        (body) => process.send?.({ seq: m.seq, body }),
        (err: unknown) => process.send?.({ seq: m.seq, error: err instanceof Error ? err.message : String(err) }),
      );
  });
  process.once('SIGTERM', end);
  process.once('SIGINT', end);
  process.once('disconnect', end);
  process.send?.({ type: 'ready', ...info });
}
