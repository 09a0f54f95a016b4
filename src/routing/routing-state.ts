import type { CompiledChannel, Snapshot } from '../config/snapshot.js';
import { perProcess, type LiveEvent, type SharedLive, type SharedSlot } from '../live/shared-live.js';
import type { Metrics } from '../metrics/metrics.js';
import { Breaker, type BreakerState, type Health } from './breaker.js';
import { RecentCalls } from './recent-calls.js';

/** One channel's live numbers; kept by name across reloads, so a reload resets neither. */
interface ChannelLive {
  inflight: number;
  readonly breaker: Breaker;
  calls: number;
  failures: number;
  readonly recent: RecentCalls;
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

/** A half-open breaker whose probe another replica claimed is asked again after this (ms). */
const PROBE_ELSEWHERE_MS = 1_000;

/** No slot to give back: the limit is absent, or kept in-process. */
const LOCAL_SLOT: SharedSlot = { release: () => undefined };

/**
 * The process's live view of its channels and groups: calls in flight (saturation) and circuit
 * breakers. With `shared` (Redis, docs/deploying.md, "Running several replicas") the limits hold across
 * replicas and breakers follow each other's transitions; without it, or while Redis is away,
 * each replica applies them on its own.
 */
export class RoutingState {
  readonly #channels = new Map<string, ChannelLive>();
  readonly #groups = new Map<string, number>();
  readonly #metrics: Metrics;
  readonly #clock: () => number;
  readonly #snapshot: () => Snapshot;
  readonly #shared: SharedLive;

  constructor(metrics: Metrics, snapshot: () => Snapshot, clock: () => number = Date.now, shared: SharedLive = perProcess) {
    this.#metrics = metrics;
    this.#clock = clock;
    this.#snapshot = snapshot;
    this.#shared = shared;
    shared.onEvent((e) => {
      if (e.t === 'breaker') this.#follow(e);
    });
    shared.onResync(() => void this.pullBreakers());
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
      l = { inflight: 0, breaker: new Breaker(), calls: 0, failures: 0, recent: new RecentCalls(), lastFailure: null };
      this.#channels.set(name, l);
    }
    return l;
  }

  /**
   * Takes one of the group's request slots; null when the group is at its `max_concurrency`.
   * The returned release must be called once, when the request ends.
   */
  async enterGroup(snapshot: Snapshot, group: string): Promise<(() => void) | null> {
    const held = await this.#take(`group:${group}`, snapshot.groupConcurrency.get(group), () => this.#groups.get(group) ?? 0);
    if (!held) return null;
    this.#groups.set(group, (this.#groups.get(group) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.release();
      const n = (this.#groups.get(group) ?? 1) - 1;
      if (n <= 0) this.#groups.delete(group);
      else this.#groups.set(group, n);
    };
  }

  /**
   * One of `limit` slots of `key`: across replicas when shared, else against this process's
   * count (read after any wait, and taken by the caller before it yields). Null when full.
   */
  async #take(key: string, limit: number | null | undefined, local: () => number): Promise<SharedSlot | null> {
    if (limit === null || limit === undefined) return LOCAL_SLOT;
    const shared = await this.#shared.takeSlot(key, limit);
    if (shared !== undefined) return shared;
    return local() < limit ? LOCAL_SLOT : null;
  }

  /** Takes a call slot on a channel, or says why not (saturated, or its breaker is open). */
  async enter(channel: CompiledChannel): Promise<Slot | Skip> {
    const live = this.#live(channel.name);
    const b = live.breaker;
    // An open breaker is known here: no slot is taken for a call that cannot go.
    const until = b.openUntil();
    if (channel.breaker.enabled && until !== null && this.#clock() < until) return { reason: 'open', retryAt: until };
    const held = await this.#take(`channel:${channel.name}`, channel.maxConcurrency, () => live.inflight);
    if (!held) return { reason: 'saturated' };
    const before = b.state;
    const admitted = b.admit(channel.breaker, this.#clock());
    if (!admitted.ok) {
      held.release();
      return { reason: 'open', retryAt: admitted.retryAt };
    }
    if (admitted.probe && !(await this.#shared.claimProbe(channel.name))) {
      // Another replica sends the probe; its outcome reaches this breaker as an event.
      const retryAt = this.#clock() + PROBE_ELSEWHERE_MS;
      b.cancelProbe(retryAt);
      held.release();
      return { reason: 'open', retryAt };
    }
    if (b.state !== before) this.#metrics.breakerTransitions.inc({ channel: channel.name, state: b.state });
    live.inflight++;
    let finished = false;
    return {
      probe: admitted.probe,
      done: (health, failure) => {
        if (finished) return;
        finished = true;
        live.inflight--;
        held.release();
        live.calls++;
        live.recent.record(this.#clock(), health === 'failure');
        if (health === 'failure') {
          live.failures++;
          if (failure) live.lastFailure = { at: this.#clock(), ...failure };
        }
        const entered = b.record(channel.breaker, health, this.#clock(), admitted.probe);
        if (admitted.probe) this.#shared.endProbe(channel.name);
        if (!entered) return;
        this.#metrics.breakerTransitions.inc({ channel: channel.name, state: entered });
        if (entered === 'open' || entered === 'closed')
          this.#shared.publish({ t: 'breaker', channel: channel.name, state: entered, openedAt: b.openedAt, retryAt: b.retryAt });
      },
    };
  }

  /**
   * Why `enter` would pass a channel over now, or null when it would try it; takes no slot and no
   * probe. Saturation is this replica's count: with Redis, the shared one is only known by taking a slot.
   */
  peek(channel: CompiledChannel): Skip | null {
    const live = this.#channels.get(channel.name);
    if (!live) return null;
    const b = live.breaker;
    const now = this.#clock();
    const until = b.openUntil();
    if (channel.breaker.enabled && until !== null && now < until) return { reason: 'open', retryAt: until };
    if (channel.maxConcurrency !== null && live.inflight >= channel.maxConcurrency) return { reason: 'saturated' };
    const verdict = b.peek(channel.breaker, now);
    return verdict.ok ? null : { reason: 'open', retryAt: verdict.retryAt };
  }

  /** Applies another replica's breaker transition to this replica's breaker of that channel. */
  #follow(e: Extract<LiveEvent, { t: 'breaker' }>): void {
    const channel = this.#snapshot().channelsByName.get(e.channel);
    if (!channel?.breaker.enabled) return;
    const entered = this.#live(e.channel).breaker.follow(e.state, e.openedAt, e.retryAt);
    if (entered) this.#metrics.breakerTransitions.inc({ channel: e.channel, state: entered });
  }

  /** Takes the breakers other replicas hold open (at start, and after Redis comes back). */
  async pullBreakers(): Promise<void> {
    const open = await this.#shared.openBreakers(this.#current().map((c) => c.name));
    for (const e of open.values()) this.#follow(e);
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
      recent: { window_s: (RecentCalls.BUCKETS * RecentCalls.BUCKET_MS) / 1000, ...live.recent.totals(now) },
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
