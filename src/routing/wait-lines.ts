/**
 * The explicit waits in front of a limit (docs/routing.md, "Saturation"): a request that finds a
 * channel or a group at its `max_concurrency` waits in that limit's line, first come first
 * served, instead of in a queue nobody sees. Each line is bounded in length (`max_waiting`) and
 * each wait in time (`max_wait_ms`); past either the caller answers 429. A slot given back wakes
 * the longest waiter, and a newcomer does not overtake the line: while anyone waits or a woken
 * waiter has not yet taken its slot, the limit reads full to everyone else.
 */

import type { QueuePolicy } from '../config/snapshot.js';

/** How a wait ended: a slot was given back (`woken`), time to look again (`retry`), or no place (`full`, `timeout`). */
export type WaitEnd = 'woken' | 'retry' | 'full' | 'timeout';

interface Waiter {
  readonly end: (how: WaitEnd) => void;
  /** Called when it becomes first in line: from then on it looks again every `retryMs`, if given. */
  readonly first: () => void;
}

interface Line {
  readonly waiters: Waiter[];
  /** Waiters woken for a slot that have not yet come to take it. */
  woken: number;
}

export class WaitLines {
  readonly #lines = new Map<string, Line>();

  /** Requests waiting in the line of `key`. */
  waiting(key: string): number {
    return this.#lines.get(key)?.waiters.length ?? 0;
  }

  /** Every line with someone in it, with its length (for the gauge). */
  lengths(): [string, number][] {
    return [...this.#lines].filter(([, l]) => l.waiters.length > 0).map(([k, l]) => [k, l.waiters.length]);
  }

  /** Whether a newcomer must leave the slot to the line: someone waits, or was woken and has not taken it yet. */
  ahead(key: string): boolean {
    const line = this.#lines.get(key);
    return line !== undefined && (line.waiters.length > 0 || line.woken > 0);
  }

  /**
   * Waits in the line of `key` until a slot is given back (`woken`: the caller takes it with
   * `claimed`), at most `leftMs`. `full` at once when the line is at its length. `retryMs`, when
   * given, ends the wait of the first in line after that long (`retry`): slots held across
   * replicas are given back elsewhere, unseen here, so the first in line looks again now and then.
   */
  wait(key: string, policy: QueuePolicy, leftMs: number, opts: { front?: boolean; retryMs?: number; signal?: AbortSignal } = {}): Promise<WaitEnd> {
    if (leftMs <= 0 || opts.signal?.aborted) return Promise.resolve('timeout');
    let line = this.#lines.get(key);
    if (!line) {
      line = { waiters: [], woken: 0 };
      this.#lines.set(key, line);
    }
    // A woken waiter put back (its slot went elsewhere) keeps its place at the front.
    if (!opts.front && line.waiters.length >= policy.maxWaiting) {
      this.#forget(key, line);
      return Promise.resolve('full');
    }
    const l = line;
    return new Promise<WaitEnd>((resolve) => {
      const until = performance.now() + leftMs;
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => finish('timeout');
      /** The timer: the wait's end, or sooner the next look when first in line with `retryMs`. */
      const arm = (first: boolean) => {
        clearTimeout(timer);
        const left = until - performance.now();
        const retry = first && opts.retryMs !== undefined && opts.retryMs < left;
        timer = setTimeout(() => finish(retry ? 'retry' : 'timeout'), retry ? opts.retryMs : Math.max(0, left));
      };
      const waiter: Waiter = { end: (how) => finish(how), first: () => arm(true) };
      const finish = (how: WaitEnd) => {
        const at = l.waiters.indexOf(waiter);
        if (at < 0) return;
        l.waiters.splice(at, 1);
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        if (how === 'woken') l.woken++;
        else this.#forget(key, l);
        // The next one is first now: with slots shared across replicas it must look again too.
        if (at === 0 && opts.retryMs !== undefined) l.waiters[0]?.first();
        resolve(how);
      };
      if (opts.front) l.waiters.unshift(waiter);
      else l.waiters.push(waiter);
      arm(l.waiters[0] === waiter);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A woken waiter came for its slot (whether or not it got it). */
  claimed(key: string): void {
    const line = this.#lines.get(key);
    if (!line) return;
    if (line.woken > 0) line.woken--;
    this.#forget(key, line);
  }

  /** A slot of `key` was given back: wakes the longest waiter, if any. */
  wake(key: string): void {
    this.#lines.get(key)?.waiters[0]?.end('woken');
  }

  #forget(key: string, line: Line): void {
    if (line.waiters.length === 0 && line.woken === 0) this.#lines.delete(key);
  }
}
