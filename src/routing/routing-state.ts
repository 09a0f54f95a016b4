import type { CompiledChannel, Snapshot } from '../config/snapshot.js';
import { perProcess, type LiveEvent, type SharedLive, type SharedSlot } from '../live/shared-live.js';
import type { Metrics } from '../metrics/metrics.js';
import { Breaker, type BreakerState, type Health } from './breaker.js';
import { RecentCalls } from './recent-calls.js';
import { WaitLines, type WaitEnd } from './wait-lines.js';

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
 * With slots shared through Redis, a slot given back on another replica wakes no one here: the
 * first in a line looks again this often (ms).
 */
const SHARED_LOOK_MS = 200;

/** How a wait in a line went: a slot (`release` it when done), or why none came. */
export type Waited<T> = { readonly slot: T; readonly waitedMs: number } | { readonly refused: 'full' | 'timeout'; readonly waitedMs: number };

/** Keys of the lines, as the metrics name them. */
const groupKey = (group: string) => `group:${group}`;
const channelKey = (channel: string) => `channel:${channel}`;

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
  /** Requests waiting for a slot of a full channel or group, by key (`channel:<name>`, `group:<name>`). */
  readonly #lines = new WaitLines();

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
    metrics.gauge('gateway_upstream_queue_length', 'Requests waiting for a slot of a channel or group at its max_concurrency', ['scope', 'name'], () =>
      this.#lines.lengths().map(([key, n]) => {
        const at = key.indexOf(':');
        return [{ scope: key.slice(0, at), name: key.slice(at + 1) }, n] as [Record<string, string>, number];
      }),
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
  async enterGroup(snapshot: Snapshot, group: string, fromLine = false): Promise<(() => void) | null> {
    const held = await this.#take(groupKey(group), snapshot.groupConcurrency.get(group), () => this.#groups.get(group) ?? 0, fromLine);
    return held ? this.#inGroup(group, held) : null;
  }

  /**
   * `enterGroup`, giving the release itself for a group without `max_concurrency` (no promise:
   * issue 41); a Promise when a limit is to be counted (across replicas, maybe).
   */
  enterGroupNow(snapshot: Snapshot, group: string): (() => void) | null | Promise<(() => void) | null> {
    const limit = snapshot.groupConcurrency.get(group);
    if (limit === null || limit === undefined) return this.#inGroup(group, LOCAL_SLOT);
    return this.enterGroup(snapshot, group);
  }

  /** Counts a request in its group with the slot it holds; the release gives both back once. */
  #inGroup(group: string, held: SharedSlot): () => void {
    this.#groups.set(group, (this.#groups.get(group) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.release();
      const n = (this.#groups.get(group) ?? 1) - 1;
      if (n <= 0) this.#groups.delete(group);
      else this.#groups.set(group, n);
      this.#lines.wake(groupKey(group));
    };
  }

  /**
   * A group slot, waiting in the group's line while the group is at its `max_concurrency`
   * (`groups.<name>.queue`), at most until `deadline` (performance.now() ms) and the queue's own
   * wait. The slot's release must be called once, when the request ends.
   */
  async enterGroupWaiting(snapshot: Snapshot, group: string, deadline: number, signal?: AbortSignal): Promise<Waited<() => void>> {
    const policy = snapshot.groupQueue.get(group) ?? { maxWaiting: 0, maxWaitMs: 0 };
    return this.#waiting(groupKey(group), policy, deadline, signal, (fromLine) => this.enterGroup(snapshot, group, fromLine));
  }

  /**
   * Waits in the line of a full channel (`channels[].queue`) until one of its slots is given
   * back, then takes it: a call slot, or why there was none (its line full, the wait over), or
   * the channel's reason to be passed over when it is no longer full but cannot be called (its
   * breaker opened meanwhile).
   */
  async enterWaiting(channel: CompiledChannel, deadline: number, signal?: AbortSignal): Promise<Waited<Slot | Skip>> {
    let skip: Skip | null = null;
    const waited = await this.#waiting(channelKey(channel.name), channel.queue, deadline, signal, async (fromLine) => {
      const got = await this.enter(channel, fromLine);
      if (!('reason' in got)) return got;
      if (got.reason === 'saturated') return null;
      skip = got;
      return got;
    });
    if ('slot' in waited && skip) return { slot: skip, waitedMs: waited.waitedMs };
    return waited;
  }

  /**
   * The wait of one request in the line of `key`: takes a slot with `take` (null: full) each
   * time it is woken, and goes back to the front of the line when the slot went elsewhere (to
   * another replica). Ends with the slot, `full` when the line is at its length, `timeout` when
   * the queue's wait or `deadline` is over.
   */
  async #waiting<T>(
    key: string,
    policy: { readonly maxWaiting: number; readonly maxWaitMs: number },
    deadline: number,
    signal: AbortSignal | undefined,
    take: (fromLine: boolean) => Promise<T | null>,
  ): Promise<Waited<T>> {
    const scope = key.slice(0, key.indexOf(':'));
    const start = performance.now();
    const until = Math.min(deadline, start + policy.maxWaitMs);
    let front = false;
    for (;;) {
      const end: WaitEnd =
        policy.maxWaiting === 0
          ? 'full'
          : await this.#lines.wait(key, policy, until - performance.now(), { front, signal, retryMs: this.#shared.up ? SHARED_LOOK_MS : undefined });
      const waitedMs = performance.now() - start;
      if (end === 'full' || end === 'timeout') {
        this.#metrics.upstreamQueueRefused.inc({ scope, reason: end });
        if (end === 'timeout') this.#metrics.upstreamQueueWait.observe({ scope, outcome: 'timeout' }, waitedMs / 1000);
        return { refused: end, waitedMs };
      }
      let slot: T | null;
      try {
        slot = await take(true);
      } finally {
        if (end === 'woken') this.#lines.claimed(key);
      }
      if (slot !== null) {
        this.#metrics.upstreamQueueWait.observe({ scope, outcome: 'served' }, waitedMs / 1000);
        return { slot, waitedMs };
      }
      // Taken on another replica meanwhile: back to the front, and let the next one look too.
      front = true;
    }
  }

  /**
   * One of `limit` slots of `key`: across replicas when shared, else against this process's
   * count (read after any wait, and taken by the caller before it yields). Null when full, and
   * for a newcomer while others wait in the key's line (`fromLine`: the one the line let through).
   */
  async #take(key: string, limit: number | null | undefined, local: () => number, fromLine = false): Promise<SharedSlot | null> {
    if (limit === null || limit === undefined) return LOCAL_SLOT;
    if (!fromLine && this.#lines.ahead(key)) return null;
    const shared = await this.#shared.takeSlot(key, limit);
    if (shared !== undefined) return shared;
    return local() < limit ? LOCAL_SLOT : null;
  }

  /** Takes a call slot on a channel, or says why not (saturated, or its breaker is open). */
  async enter(channel: CompiledChannel, fromLine = false): Promise<Slot | Skip> {
    const live = this.#live(channel.name);
    const open = this.#openSkip(channel, live);
    if (open) return open;
    const held = await this.#take(channelKey(channel.name), channel.maxConcurrency, () => live.inflight, fromLine);
    if (!held) return { reason: 'saturated' };
    return this.#admit(channel, live, held);
  }

  /**
   * `enter`, giving the slot (or the skip) itself for a channel without `max_concurrency` whose
   * breaker sends no probe (no promise: issue 41); a Promise when a limit is to be counted or a
   * probe claimed (across replicas, maybe).
   */
  enterNow(channel: CompiledChannel): Slot | Skip | Promise<Slot | Skip> {
    if (channel.maxConcurrency !== null) return this.enter(channel);
    const live = this.#live(channel.name);
    return this.#openSkip(channel, live) ?? this.#admit(channel, live, LOCAL_SLOT);
  }

  /** An open breaker is known before any slot is taken: no slot for a call that cannot go. */
  #openSkip(channel: CompiledChannel, live: ChannelLive): Skip | null {
    const until = live.breaker.openUntil();
    return channel.breaker.enabled && until !== null && this.#clock() < until ? { reason: 'open', retryAt: until } : null;
  }

  /** The breaker's say on a call with the slot `held`: the call's slot, or why not (the slot then given back). */
  #admit(channel: CompiledChannel, live: ChannelLive, held: SharedSlot): Slot | Skip | Promise<Slot | Skip> {
    const b = live.breaker;
    // A slot taken and not used goes to the next in line.
    const giveBack = () => {
      held.release();
      this.#lines.wake(channelKey(channel.name));
    };
    const before = b.state;
    // A closed breaker's verdict needs no time: the clock (a Date a reading) is read only otherwise.
    const admitted = b.admit(channel.breaker, channel.breaker.enabled && b.state !== 'closed' ? this.#clock() : 0);
    if (!admitted.ok) {
      giveBack();
      return { reason: 'open', retryAt: admitted.retryAt };
    }
    if (!admitted.probe) return this.#slot(channel, live, before, false, giveBack);
    return this.#shared.claimProbe(channel.name).then((claimed): Slot | Skip => {
      if (claimed) return this.#slot(channel, live, before, true, giveBack);
      // Another replica sends the probe; its outcome reaches this breaker as an event.
      const retryAt = this.#clock() + PROBE_ELSEWHERE_MS;
      b.cancelProbe(retryAt);
      giveBack();
      return { reason: 'open', retryAt };
    });
  }

  /** A call's slot, admitted by the breaker (`probe`: the half-open breaker's one call). */
  #slot(channel: CompiledChannel, live: ChannelLive, before: BreakerState, probe: boolean, giveBack: () => void): Slot {
    const b = live.breaker;
    if (b.state !== before) this.#metrics.breakerTransitions.inc({ channel: channel.name, state: b.state });
    live.inflight++;
    let finished = false;
    return {
      probe,
      done: (health, failure) => {
        if (finished) return;
        finished = true;
        live.inflight--;
        giveBack();
        live.calls++;
        // One reading of the clock for all three: the call ended once (and a reading is a Date: issue 41).
        const now = this.#clock();
        live.recent.record(now, health === 'failure');
        if (health === 'failure') {
          live.failures++;
          if (failure) live.lastFailure = { at: now, ...failure };
        }
        const entered = b.record(channel.breaker, health, now, probe);
        if (probe) this.#shared.endProbe(channel.name);
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
    if (channel.maxConcurrency !== null && (live.inflight >= channel.maxConcurrency || this.#lines.ahead(channelKey(channel.name))))
      return { reason: 'saturated' };
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
      waiting: this.#lines.waiting(channelKey(channel.name)),
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

  /** Requests waiting in the line of a channel (`channel`) or a group. */
  waiting(scope: 'channel' | 'group', name: string): number {
    return this.#lines.waiting(scope === 'channel' ? channelKey(name) : groupKey(name));
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
