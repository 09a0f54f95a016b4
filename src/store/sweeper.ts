import type { Logger } from 'pino';
import { isStoreUnavailable } from './unavailable.js';

/**
 * Runs `sweep` every `intervalMs` until the returned function is called: housekeeping of rows that
 * expired (holds of requests that died, links past their time). A sweep still running when the
 * next is due is not doubled; a failed one is logged and tried again next time (at debug level
 * while the store is away: that is logged once, where it is found).
 */
export function startSweeper(what: string, sweep: (now: number) => Promise<unknown>, log: Logger, clock: () => Date, intervalMs: number): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweep(clock().getTime())
      .catch((err: unknown) => log[isStoreUnavailable(err) ? 'debug' : 'warn']({ err: (err as Error).message }, `sweeping ${what} failed`))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
