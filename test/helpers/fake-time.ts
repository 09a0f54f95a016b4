/**
 * A fake clock with the poller's timers on it: time moves only when a test says so, and moving it
 * fires the timers that fall due, in order. Looks the timers start still talk real HTTP; the test
 * awaits them (Poller.idle) before moving time again.
 *
 *   const time = new FakeTime(Date.parse('2026-01-01T00:00:00Z'));
 *   const poller = new Poller({ ..., clock: time.clock, timers: time.timers });
 *   time.runNext(); await poller.idle();
 */
import type { PollerTimers } from '../../src/tasks/poller.js';

interface Timer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/** Fake time for one test. */
export class FakeTime {
  now: number;
  readonly #timers = new Map<number, Timer>();
  #ids = 0;

  constructor(start: number) {
    this.now = start;
  }

  readonly clock = (): Date => new Date(this.now);

  readonly timers: PollerTimers = {
    set: (fn, ms) => {
      const id = ++this.#ids;
      this.#timers.set(id, { id, at: this.now + Math.max(0, ms), fn });
      return id;
    },
    clear: (handle) => {
      this.#timers.delete(handle as number);
    },
  };

  /** When the earliest timer is due, or null when none is set. */
  nextAt(): number | null {
    let at: number | null = null;
    for (const t of this.#timers.values()) if (at === null || t.at < at) at = t.at;
    return at;
  }

  /** Moves the clock to the earliest timer (never backwards) and fires it; false when none is set. */
  runNext(): boolean {
    let first: Timer | null = null;
    for (const t of this.#timers.values()) if (!first || t.at < first.at || (t.at === first.at && t.id < first.id)) first = t;
    if (!first) return false;
    this.#timers.delete(first.id);
    this.now = Math.max(this.now, first.at);
    first.fn();
    return true;
  }
}
