import type { CompiledChannel } from '../config/snapshot.js';
import type { PollerContext } from './poller-deps.js';

/** Backoff of a channel in trouble: doubling from 1 s to 60 s, jittered, or the vendor's Retry-After. */
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_MAX_MS = 60_000;

/** One channel as the poller sees it. */
export interface ChannelState {
  active: number;
  pausedUntil: number;
  failures: number;
  /** Due tasks waiting for a free slot, oldest first. */
  ready: string[];
}

/**
 * Each channel's slots (its `polling.concurrency`), its backoff, and its due tasks waiting for a
 * slot. They belong to the channel's name: every definition of that name shares them.
 */
export class ChannelSlots {
  readonly #ctx: PollerContext;
  /** Called when a slot frees and tasks of the channel are waiting for one. */
  readonly #onFree: (name: string) => void;
  readonly #channels = new Map<string, ChannelState>();

  constructor(ctx: PollerContext, onFree: (name: string) => void) {
    this.#ctx = ctx;
    this.#onFree = onFree;
  }

  /** The state of a channel, made on first use. */
  state(name: string): ChannelState {
    let s = this.#channels.get(name);
    if (!s) {
      s = { active: 0, pausedUntil: 0, failures: 0, ready: [] };
      this.#channels.set(name, s);
    }
    return s;
  }

  /** Runs `fn` holding one of the channel's slots, then lets waiting tasks of that channel go. */
  async withSlot<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const state = this.state(name);
    state.active++;
    try {
      return await fn();
    } finally {
      state.active--;
      if (state.ready.length > 0) this.#onFree(name);
    }
  }

  /** The vendor's trouble pauses the whole channel, a little longer at each failure in a row; returns until when. */
  backOff(channel: CompiledChannel, retryAfterMs: number | null): number {
    const state = this.state(channel.name);
    state.failures++;
    const exp = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(state.failures - 1, 16));
    const wait = retryAfterMs ?? Math.round(exp * (0.5 + this.#ctx.random() * 0.5));
    state.pausedUntil = Math.max(state.pausedUntil, this.#ctx.now() + wait);
    return state.pausedUntil;
  }

  /** A look went through: the next trouble backs off from the start. */
  recovered(channel: CompiledChannel): void {
    const state = this.state(channel.name);
    state.failures = 0;
  }
}
