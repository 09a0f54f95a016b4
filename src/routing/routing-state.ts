import type { CompiledChannel, Snapshot } from '../config/snapshot.js';
import type { Metrics } from '../metrics/metrics.js';
import { Breaker, type BreakerState, type Health } from './breaker.js';

/** One channel's live numbers; kept by name across reloads, so a reload resets neither. */
interface ChannelLive {
  inflight: number;
  readonly breaker: Breaker;
  calls: number;
  failures: number;
  lastFailure: { at: number; code: string; message: string } | null;
}

/** Why a channel was passed over without a call. */
export type Skip = { readonly reason: 'saturated' } | { readonly reason: 'open'; readonly retryAt: number };

/** A held slot on a channel: one call in flight. `done` must be called exactly once. */
export interface Slot {
  readonly probe: boolean;
  done(health: Health, failure?: { code: string; message: string }): void;
}

const BREAKER_GAUGE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * The process's live view of its channels and groups: calls in flight (saturation) and circuit
 * breakers. Per process: replicas each keep their own (README, "Saturation").
 */
export class RoutingState {
  readonly #channels = new Map<string, ChannelLive>();
  readonly #groups = new Map<string, number>();
  readonly #metrics: Metrics;
  readonly #clock: () => number;
  readonly #snapshot: () => Snapshot;

  constructor(metrics: Metrics, snapshot: () => Snapshot, clock: () => number = Date.now) {
    this.#metrics = metrics;
    this.#clock = clock;
    this.#snapshot = snapshot;
    metrics.gauge('gateway_channel_breaker_state', 'Circuit breaker of each channel: 0 closed, 1 half open, 2 open', ['channel'], () =>
      this.#current().map((c) => [{ channel: c.name }, BREAKER_GAUGE[this.#live(c.name).breaker.state]] as [Record<string, string>, number]),
    );
    metrics.gauge('gateway_channel_inflight', 'Request-path calls in flight per channel', ['channel'], () =>
      this.#current().map((c) => [{ channel: c.name }, this.#live(c.name).inflight] as [Record<string, string>, number]),
    );
    metrics.gauge('gateway_group_inflight', 'Requests in flight per token group', ['group'], () =>
      [...this.#snapshot().groups].map((g) => [{ group: g }, this.#groups.get(g) ?? 0] as [Record<string, string>, number]),
    );
  }

  #current(): readonly CompiledChannel[] {
    return this.#snapshot().channels;
  }

  #live(name: string): ChannelLive {
    let l = this.#channels.get(name);
    if (!l) {
      l = { inflight: 0, breaker: new Breaker(), calls: 0, failures: 0, lastFailure: null };
      this.#channels.set(name, l);
    }
    return l;
  }

  /**
   * Takes one of the group's request slots; null when the group is at its `max_concurrency`.
   * The returned release must be called once, when the request ends.
   */
  enterGroup(snapshot: Snapshot, group: string): (() => void) | null {
    const limit = snapshot.groupConcurrency.get(group);
    const now = this.#groups.get(group) ?? 0;
    if (limit !== undefined && now >= limit) return null;
    this.#groups.set(group, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.#groups.get(group) ?? 1) - 1;
      if (n <= 0) this.#groups.delete(group);
      else this.#groups.set(group, n);
    };
  }

  /** Takes a call slot on a channel, or says why not (saturated, or its breaker is open). */
  enter(channel: CompiledChannel): Slot | Skip {
    const live = this.#live(channel.name);
    if (channel.maxConcurrency !== null && live.inflight >= channel.maxConcurrency) return { reason: 'saturated' };
    const now = this.#clock();
    const before = live.breaker.state;
    const admitted = live.breaker.admit(channel.breaker, now);
    if (!admitted.ok) return { reason: 'open', retryAt: admitted.retryAt };
    if (live.breaker.state !== before) this.#metrics.breakerTransitions.inc({ channel: channel.name, state: live.breaker.state });
    live.inflight++;
    let finished = false;
    return {
      probe: admitted.probe,
      done: (health, failure) => {
        if (finished) return;
        finished = true;
        live.inflight--;
        live.calls++;
        if (health === 'failure') {
          live.failures++;
          if (failure) live.lastFailure = { at: this.#clock(), ...failure };
        }
        const entered = live.breaker.record(channel.breaker, health, this.#clock(), admitted.probe);
        if (entered) this.#metrics.breakerTransitions.inc({ channel: channel.name, state: entered });
      },
    };
  }

  /** The breaker state of a channel now (an open one whose cool-down is over reads half_open). */
  stateOf(channel: CompiledChannel): BreakerState {
    const b = this.#live(channel.name).breaker;
    return b.state === 'open' && b.retryAt !== null && this.#clock() >= b.retryAt ? 'half_open' : b.state;
  }

  /** Everything `GET /admin/channels` shows about one channel's live state. */
  report(channel: CompiledChannel) {
    const live = this.#live(channel.name);
    const now = this.#clock();
    const b = live.breaker;
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return {
      inflight: live.inflight,
      calls: live.calls,
      failures: live.failures,
      last_failure: live.lastFailure ? { ...live.lastFailure, at: iso(live.lastFailure.at) } : null,
      breaker: {
        state: this.stateOf(channel),
        consecutive_failures: b.consecutive,
        window: channel.breaker.failureRate ? b.window(channel.breaker, now) : null,
        opened_at: iso(b.openedAt),
        probe_at: b.state === 'open' ? iso(b.retryAt) : null,
      },
    };
  }

  /** The clock breakers run on (ms). */
  now(): number {
    return this.#clock();
  }

  /** Requests in flight for a group. */
  groupInflight(group: string): number {
    return this.#groups.get(group) ?? 0;
  }

  /** Forgets channels no longer configured and idle (after a reload). */
  prune(snapshot: Snapshot): void {
    for (const [name, live] of this.#channels) if (!snapshot.channelsByName.has(name) && live.inflight === 0) this.#channels.delete(name);
  }
}
