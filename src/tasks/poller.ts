import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import { DEFAULT_POLLING } from '../config/lookups.js';
import type { CompiledChannel, Snapshot } from '../config/snapshot.js';
import type { Store, TaskRecord } from '../store/store.js';
import { TERMINAL_STATUSES } from '../store/store.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { Pools } from '../upstream/pools.js';
import { DueQueue } from './due-queue.js';
import { NoNews } from './no-news.js';
import { cutOffAt, findCutOffTask } from './cut-off.js';
import { applyUpdate, patchFor, type TaskUpdate } from './task-update.js';
import { queryBatch, queryTask } from './vendor-query.js';

/** The one timer the poller keeps; tests give a fake one that runs on their fake clock. */
export interface PollerTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** Node's timers, unref'd: a poller alone never keeps the process alive. */
const NODE_TIMERS: PollerTimers = {
  set: (fn, ms) => setTimeout(fn, ms).unref(),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** What the poller is built from. */
export interface PollerDeps {
  readonly store: Store;
  readonly pools: Pools;
  readonly snapshot: () => Snapshot;
  readonly log: Logger;
  readonly clock: () => Date;
  readonly random?: () => number;
  /** Default: Node's. */
  readonly timers?: PollerTimers;
  /** Overrides every channel's `polling.lost_after_ms` (golden runs: 0, so one answer shows the verdict). */
  readonly lostAfterMs?: number;
  /** How this replica shares the tasks with others; default: a fresh owner, 30 s leases, the only replica. */
  readonly lease?: LeaseSettings;
  /** Where the poll lag goes (`gateway_task_poll_lag_seconds`); default: nowhere. */
  readonly metrics?: Metrics;
}

/**
 * Leases (README, "Running several replicas"): each unfinished task is followed by the replica
 * that holds its lease in the store; holders renew every third of `ms`, and a replica that dies
 * lets its leases run out, so the others claim its tasks within `ms`.
 */
export interface LeaseSettings {
  /** This replica's name in the store (GATEWAY_REPLICA_ID; default: random per process). */
  readonly owner: string;
  /** GATEWAY_TASK_LEASE_MS (default 30 s). */
  readonly ms: number;
  /**
   * No other replica shares the store (the embedded store): at start this one takes every
   * unfinished task at once, whoever held it, instead of waiting for the leases of the process
   * it replaces to run out.
   */
  readonly soleReplica: boolean;
}

export const DEFAULT_LEASE_MS = 30_000;

/** Backoff of a channel in trouble: doubling from 1 s to 60 s, jittered, or the vendor's Retry-After. */
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_MAX_MS = 60_000;
/**
 * A task whose looks keep giving no news (an answer no mapping recognises: a proxy's 404, a body
 * that cannot be read) waits twice as long after each, from one interval up to this (or the
 * interval, if longer), so a proxy answering 404 for hours is not asked every interval.
 */
const TASK_BACKOFF_MAX_MS = 5 * 60_000;
/** Resumed tasks are spread over this much of their first interval, so a restart is not a stampede. */
const RESUME_SPREAD = 1;
const RESUME_PAGE = 1000;
/** Tasks a replica claims per lease round from others that died: the rest is left to the other replicas' rounds. */
const CLAIM_PAGE = 500;

interface ChannelState {
  active: number;
  pausedUntil: number;
  failures: number;
  /** Due tasks waiting for a free slot, oldest first. */
  ready: string[];
}

/**
 * Follows every unfinished task to a terminal state. Due times live in one queue with one timer
 * (no timer or sleep per task); each channel has its own concurrency limit and backoff; profiles
 * with a batch query are asked about many tasks per call. Each look at a task is single-flight,
 * shared by the poller and the query routes' on-demand refreshes.
 */
export class Poller {
  readonly #deps: PollerDeps;
  readonly #due = new DueQueue();
  /** Task id → channel name, for every task followed. */
  readonly #channelOf = new Map<string, string>();
  /**
   * Task id → the channel definition it was accepted under, for tasks tracked by this process: a
   * reload that changes the channel's base URL or credentials must not strand tasks the vendor
   * knows under the old ones. Dropped with the task.
   */
  readonly #pinned = new Map<string, CompiledChannel>();
  /** Task id → time of the last look, for staleness. */
  readonly #lookedAt = new Map<string, number>();
  /** Task id → when it fell due, for tasks due and waiting for a slot: how late its look starts is the poll lag. */
  readonly #dueAt = new Map<string, number>();
  readonly #inflight = new Map<string, Promise<TaskRecord | null>>();
  /** Per task: how long the vendor has said it does not know it, and failed looks in a row. */
  readonly #noNews = new NoNews();
  readonly #channels = new Map<string, ChannelState>();
  readonly #warned = new Set<string>();
  #timer: unknown = null;
  #timerAt = Infinity;
  #stopped = false;
  readonly #lease: LeaseSettings;
  #leaseTimer: NodeJS.Timeout | null = null;
  /** Tasks whose submission is under way: not followed yet, their leases renewed. */
  readonly #held = new Set<string>();
  /** Upstream calls made by the poller and refreshes, for the benchmark and metrics. */
  readonly stats = { queries: 0, batchQueries: 0, updates: 0 };

  constructor(deps: PollerDeps) {
    this.#deps = deps;
    this.#lease = deps.lease ?? { owner: randomUUID(), ms: DEFAULT_LEASE_MS, soleReplica: true };
  }

  /** How many tasks are followed. */
  get size(): number {
    return this.#channelOf.size;
  }

  /**
   * Claims the unfinished tasks no live replica follows (at start, the sole replica claims them
   * all), then keeps its leases: every third of the lease time it renews what it follows, lets go
   * of what another replica took, and claims what a dead one left. Resolves with how many tasks
   * the first round took.
   */
  async resume(): Promise<number> {
    const n = await this.#claim(this.#lease.soleReplica ? Number.MAX_SAFE_INTEGER : this.#now(), Infinity);
    this.#leaseTimer = setInterval(
      () =>
        void this.#leaseRound().catch((err: unknown) =>
          // The store being away is logged once, where it is found (README, "When something fails").
          this.#deps.log[isStoreUnavailable(err) ? 'debug' : 'warn']({ err }, 'lease round failed; trying again'),
        ),
      this.#lease.ms / 3,
    );
    this.#leaseTimer.unref();
    return n;
  }

  /** The lease a task this replica creates starts with (it follows what it submits). */
  newLease(): { owner: string; until: number } {
    return { owner: this.#lease.owner, until: this.#now() + this.#lease.ms };
  }

  /** Keeps renewing the lease of a task not followed yet (its submission under way) until the returned function is called. */
  holdLease(id: string): () => void {
    this.#held.add(id);
    return () => void this.#held.delete(id);
  }

  /** Gives back every lease this replica holds (it is stopping), so the others take its tasks at once. */
  releaseLeases(): Promise<void> {
    return this.#deps.store.releaseLeases(this.#lease.owner);
  }

  /** Claims free tasks (leases run out at or before `now`) in pages, at most `max`; follows each, spread over its first interval. */
  async #claim(now: number, max: number): Promise<number> {
    let n = 0;
    while (n < max && !this.#stopped) {
      const page = await this.#deps.store.claimTasks(this.#lease.owner, now, this.#now() + this.#lease.ms, Math.min(RESUME_PAGE, max - n));
      const at = this.#now();
      for (const t of page) {
        if (this.#channelOf.has(t.id)) continue;
        const interval = this.#channel(t.channel)?.polling.intervalMs ?? DEFAULT_POLLING.intervalMs;
        const due = t.status === 'submitting' ? Math.max(at, this.#cutOffAt(t)) : at + Math.floor(this.#random() * interval * RESUME_SPREAD);
        this.#follow(t.id, t.channel, due);
      }
      n += page.length;
      this.#arm();
      if (page.length < RESUME_PAGE) break;
    }
    return n;
  }

  async #leaseRound(): Promise<void> {
    if (this.#stopped) return;
    const ids = [...new Set([...this.#channelOf.keys(), ...this.#held])];
    const until = this.#now() + this.#lease.ms;
    for (let i = 0; i < ids.length; i += RESUME_PAGE) {
      const chunk = ids.slice(i, i + RESUME_PAGE);
      const held = new Set(await this.#deps.store.renewLeases(this.#lease.owner, chunk, until));
      // Finished meanwhile, or followed by another replica since this one's lease ran out.
      for (const id of chunk) if (!held.has(id) && !this.#inflight.has(id) && !this.#held.has(id)) this.#forget(id);
    }
    await this.#claim(this.#now(), CLAIM_PAGE);
  }

  /**
   * Starts following a task that was just accepted; its first look is one interval away. With
   * `channel` (the definition that accepted it) the task is followed with that definition for as
   * long as this process runs, whatever later reloads make of the channel.
   */
  track(task: TaskRecord, channel?: CompiledChannel): void {
    if (this.#stopped || TERMINAL_STATUSES.has(task.status)) return;
    if (channel) this.#pinned.set(task.id, channel);
    this.#lookedAt.set(task.id, this.#now());
    this.#follow(task.id, task.channel, this.#nextLook(task.id, task.channel));
    this.#arm();
  }

  /**
   * The channel definition a task is followed with: the one pinned when it was accepted, else the
   * channel of that name in `snapshot` (default: the current one); undefined when there is none.
   */
  channelFor(task: TaskRecord, snapshot: Snapshot = this.#deps.snapshot()): CompiledChannel | undefined {
    return this.#pinned.get(task.id) ?? snapshot.channelsByName.get(task.channel);
  }

  /** The distinct definitions unfinished tasks are pinned to (a reload keeps their connection pools). */
  pinnedChannels(): Set<CompiledChannel> {
    return new Set(this.#pinned.values());
  }

  /** Time of the last look at a task by this process, or null. */
  lookedAt(id: string): number | null {
    return this.#lookedAt.get(id) ?? null;
  }

  /**
   * Looks at a task now, for a query route. Joins a look already under way; returns null without
   * asking when the channel is backing off or has no free slot (the caller answers the record).
   */
  refresh(task: TaskRecord): Promise<TaskRecord | null> {
    const running = this.#inflight.get(task.id);
    if (running) return running;
    const channel = this.channelFor(task);
    if (!channel) return Promise.resolve(null);
    const state = this.#state(channel.name);
    if (state.pausedUntil > this.#now() || state.active >= channel.polling.concurrency) return Promise.resolve(null);
    return this.#lookAtOne(task.id, task);
  }

  /**
   * Looks at several tasks now, for a batch query route: batched per channel where the profile
   * allows it. Tasks whose channel is busy or backing off are left out of the answer.
   */
  async refreshMany(tasks: readonly TaskRecord[]): Promise<Map<string, TaskRecord | null>> {
    const out = new Map<string, TaskRecord | null>();
    // One batch speaks for one definition: tasks pinned to an older one of the same name go apart.
    const byChannel = new Map<CompiledChannel | string, TaskRecord[]>();
    for (const t of tasks) {
      const key = this.channelFor(t) ?? t.channel;
      const list = byChannel.get(key);
      if (list) list.push(t);
      else byChannel.set(key, [t]);
    }
    await Promise.all(
      [...byChannel].map(async ([key, list]) => {
        const channel = typeof key === 'string' ? undefined : key;
        const batch = channel?.profile.tasks?.batchQuery;
        if (!channel || !batch) {
          await Promise.all(list.map(async (t) => out.set(t.id, await this.refresh(t))));
          return;
        }
        const state = this.#state(channel.name);
        const joined = list.filter((t) => this.#inflight.has(t.id));
        const fresh = list.filter((t) => !this.#inflight.has(t.id));
        await Promise.all(joined.map(async (t) => out.set(t.id, await this.#inflight.get(t.id)!)));
        for (let i = 0; i < fresh.length; i += batch.maxIds) {
          if (state.pausedUntil > this.#now() || state.active >= channel.polling.concurrency) break;
          for (const [id, t] of await this.#lookAtBatch(
            channel,
            fresh.slice(i, i + batch.maxIds).map((t) => t.id),
          ))
            out.set(id, t);
        }
      }),
    );
    return out;
  }

  /** Stops polling; looks under way finish on their own. */
  stop(): void {
    this.#stopped = true;
    if (this.#leaseTimer !== null) clearInterval(this.#leaseTimer);
    this.#leaseTimer = null;
    if (this.#timer !== null) this.#timers.clear(this.#timer);
    this.#timer = null;
  }

  /** Resolves once no look is under way (tests step a fake clock between looks). */
  async idle(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight.values()]);
  }

  get #timers(): PollerTimers {
    return this.#deps.timers ?? NODE_TIMERS;
  }

  #now(): number {
    return this.#deps.clock().getTime();
  }

  #random(): number {
    return (this.#deps.random ?? Math.random)();
  }

  /** An interval ±10 %, so tasks submitted together drift apart. */
  #jitter(ms: number): number {
    return Math.round(ms * (0.9 + 0.2 * this.#random()));
  }

  #channel(name: string): CompiledChannel | undefined {
    return this.#deps.snapshot().channelsByName.get(name);
  }

  #state(name: string): ChannelState {
    let s = this.#channels.get(name);
    if (!s) {
      s = { active: 0, pausedUntil: 0, failures: 0, ready: [] };
      this.#channels.set(name, s);
    }
    return s;
  }

  #follow(id: string, channel: string, dueAt: number): void {
    this.#channelOf.set(id, channel);
    this.#due.set(id, dueAt);
  }

  #forget(id: string): void {
    this.#channelOf.delete(id);
    this.#pinned.delete(id);
    this.#lookedAt.delete(id);
    this.#dueAt.delete(id);
    this.#noNews.forget(id);
    this.#due.delete(id);
  }

  /** A look at a task the timer made due starts now: how late it is goes to the metrics. */
  #started(id: string): void {
    const at = this.#dueAt.get(id);
    if (at === undefined) return;
    this.#dueAt.delete(id);
    this.#deps.metrics?.pollLag.observe(Math.max(0, this.#now() - at) / 1000);
  }

  /** Sets the one timer for the earliest due task. */
  #arm(): void {
    if (this.#stopped) return;
    const next = this.#due.peekTime();
    if (next === null || next >= this.#timerAt) return;
    if (this.#timer !== null) this.#timers.clear(this.#timer);
    this.#timerAt = next;
    this.#timer = this.#timers.set(() => this.#tick(), Math.max(0, Math.min(next - this.#now(), 2 ** 31 - 1)));
  }

  #tick(): void {
    this.#timer = null;
    this.#timerAt = Infinity;
    if (this.#stopped) return;
    const now = this.#now();
    const touched = new Set<string>();
    for (const { id, at } of this.#due.popDueAt(now)) {
      const name = this.#channelOf.get(id);
      if (name === undefined) continue;
      const state = this.#state(name);
      if (state.pausedUntil > now) {
        // A channel backing off is not late: its tasks' lag counts from their new time.
        this.#due.set(id, state.pausedUntil + Math.floor(this.#random() * 1000));
        continue;
      }
      state.ready.push(id);
      this.#dueAt.set(id, at);
      touched.add(name);
    }
    for (const name of touched) this.#launch(name);
    this.#arm();
  }

  /**
   * Starts looks for a channel's ready tasks while it has free slots. Slots and backoff belong to
   * the channel's name; each look uses the definition its task follows (pinned or current).
   */
  #launch(name: string): void {
    const state = this.#state(name);
    // Tasks that waited for a slot while the vendor said 429 wait for the pause too.
    if (state.pausedUntil > this.#now()) {
      for (const id of state.ready.splice(0)) {
        this.#dueAt.delete(id);
        this.#due.set(id, state.pausedUntil + Math.floor(this.#random() * 1000));
      }
      this.#arm();
      return;
    }
    const current = this.#channel(name);
    while (state.ready.length > 0) {
      const id = state.ready[0]!;
      const channel = this.#pinned.get(id) ?? current;
      if (!channel?.profile.tasks) {
        // The channel left the config (or lost its task protocol): wait, bounded by each task's deadline.
        if (!this.#warned.has(name)) this.#deps.log.warn({ channel: name }, 'tasks wait for a channel that is not configured');
        this.#warned.add(name);
        state.ready.shift();
        this.#started(id);
        this.#lookAtOne(id, null).catch(() => undefined);
        continue;
      }
      if (state.active >= channel.polling.concurrency) break;
      const batch = channel.profile.tasks.batchQuery;
      if (batch) {
        // A batch takes the ready tasks that follow this same definition, oldest first.
        const ids: string[] = [];
        state.ready = state.ready.filter((x) => {
          if (ids.length >= batch.maxIds || (this.#pinned.get(x) ?? current) !== channel) return true;
          ids.push(x);
          return false;
        });
        const fresh = ids.filter((x) => !this.#inflight.has(x));
        for (const x of ids) this.#started(x);
        if (fresh.length > 0) this.#lookAtBatch(channel, fresh).catch(() => undefined);
      } else {
        state.ready.shift();
        this.#started(id);
        if (!this.#inflight.has(id)) this.#lookAtOne(id, null).catch(() => undefined);
      }
    }
  }

  /**
   * Reschedules a task that is still unfinished one interval from now (or after a backoff), never
   * later than its deadline, so a task that backs off still expires on time (a record still
   * `submitting` keeps its own orphan time: its submission may be under way).
   */
  #again(task: TaskRecord, at?: number): void {
    if (this.#stopped) return;
    let due = at ?? this.#nextLook(task.id, task.channel);
    if (task.status !== 'submitting') due = Math.min(due, Math.max(task.deadlineAt, this.#now()));
    this.#follow(task.id, task.channel, due);
    this.#arm();
  }

  /**
   * When to look at a task again: one jittered interval after the last look *started*, so time
   * spent waiting for a slot or for the vendor does not stretch every later period; `factor`
   * intervals (capped at TASK_BACKOFF_MAX_MS) for a task backing off. On a channel with a batch
   * query the time is rounded up to a fifth of the interval, so the channel's tasks fall due
   * together and go out in full batches instead of one task per call.
   */
  #nextLook(id: string, channelName: string, factor = 1): number {
    const channel = this.#pinned.get(id) ?? this.#channel(channelName);
    const interval = channel?.polling.intervalMs ?? DEFAULT_POLLING.intervalMs;
    const wait = factor === 1 ? interval : Math.min(interval * factor, Math.max(interval, TASK_BACKOFF_MAX_MS));
    const now = this.#now();
    let at = Math.max(now + interval / 10, (this.#lookedAt.get(id) ?? now) + this.#jitter(wait));
    if (channel?.profile.tasks?.batchQuery) {
      const step = Math.max(100, Math.floor(interval / 5));
      at = Math.ceil(at / step) * step;
    }
    return Math.round(at);
  }

  /** Fails a task that ran past its deadline or whose submission was cut off, with a refund. */
  async #expire(task: TaskRecord): Promise<TaskRecord> {
    const now = this.#now();
    const interrupted = task.status === 'submitting';
    const span = task.deadlineAt - task.createdAt;
    const spanText = span >= 120_000 ? `${Math.round(span / 60_000)} minutes` : `${Math.round(span / 1000)} seconds`;
    const update: TaskUpdate = {
      id: null,
      status: 'failed',
      lost: false,
      vendorStatus: null,
      progress: null,
      results: null,
      error: interrupted
        ? { code: 'submission_interrupted', message: 'the gateway stopped before the vendor confirmed the task; it was not charged' }
        : { code: 'task_timeout', message: `the vendor did not finish the task within ${spanText}; it was not charged` },
      context: undefined,
      seconds: null,
      size: null,
    };
    if (interrupted) {
      // A submission is confirmed by status change, not by the update rule: move it here directly.
      const done = await this.#deps.store.updateTask(task.id, task.version, {
        status: 'failed',
        error: update.error,
        completedAt: now,
        updatedAt: now,
        refund: true,
      });
      return done ?? task;
    }
    return applyUpdate(this.#deps.store, task, update, now);
  }

  /**
   * A look that failed on its own side (the store away, a write that could not be made): the
   * task is looked at again one interval later, as if the look had found nothing new. Without this
   * a task the poller follows would fall out of its queue, followed by name and never looked at.
   */
  #lookFailed(id: string, channel: string, err: unknown): void {
    if (!this.#channelOf.has(id) || this.#stopped) return;
    this.#deps.log[isStoreUnavailable(err) ? 'debug' : 'warn'](
      { task: id, channel, err: (err as Error).message },
      'a look at a task failed; looking again later',
    );
    this.#due.set(id, this.#nextLook(id, channel));
    this.#arm();
  }

  /** One look at one task, single-flight. `known` skips the store read when the caller has the record. */
  #lookAtOne(id: string, known: TaskRecord | null): Promise<TaskRecord | null> {
    const channelName = this.#channelOf.get(id) ?? known?.channel ?? '';
    const p = this.#withSlot(channelName, () => this.#look(id, known)).catch((err: unknown) => {
      this.#lookFailed(id, channelName, err);
      throw err;
    });
    this.#inflight.set(id, p);
    p.finally(() => this.#inflight.delete(id)).catch(() => undefined);
    return p;
  }

  /** The look itself: read the task (unless known), then cut off, expire, or ask the vendor and settle. */
  async #look(id: string, known: TaskRecord | null): Promise<TaskRecord | null> {
    const task = known ?? (await this.#deps.store.getTask(id));
    if (!task || TERMINAL_STATUSES.has(task.status)) {
      this.#forget(id);
      return task;
    }
    const now = this.#now();
    if (task.status === 'submitting') return this.#cutOff(task, now);
    if (now >= task.deadlineAt) {
      const done = await this.#expire(task);
      this.#forget(id);
      return done;
    }
    const channel = this.channelFor(task);
    if (!channel?.profile.tasks) {
      this.#again(task);
      return task;
    }
    this.stats.queries++;
    this.#lookedAt.set(id, now);
    const outcome = await queryTask(channel.profile.tasks, channel, this.#deps.pools, task, this.#deps.clock());
    if (!outcome.ok) {
      this.#trouble(channel, outcome, [task]);
      return task;
    }
    this.#recovered(channel);
    return this.#settle(task, outcome.value, channel);
  }

  #cutOffAt(task: TaskRecord): number {
    return cutOffAt(task, this.channelFor(task), this.#deps.snapshot().retry);
  }

  /**
   * A record still `submitting` (README, "Tasks cut off by a crash"): left alone until its
   * submission can no longer be under way; then adopted when the profile can find the vendor's
   * task by the reference we sent, else failed and refunded once (its lookup failing, it is asked
   * again until the task's deadline).
   */
  async #cutOff(task: TaskRecord, now: number): Promise<TaskRecord> {
    const due = this.#cutOffAt(task);
    if (now < due && now < task.deadlineAt) {
      this.#again(task, due);
      return task;
    }
    const channel = this.channelFor(task);
    const protocol = channel?.profile.tasks;
    const log = { task: task.id, channel: task.channel };
    if (channel && protocol && protocol.adopt.length > 0 && now < task.deadlineAt) {
      this.stats.queries++;
      const found = await findCutOffTask(protocol, channel, this.#deps.pools, task, this.#deps.clock());
      if (!found.ok) {
        this.#trouble(channel, found, [task]);
        return task;
      }
      if (found.value) {
        const patch = patchFor(task, { ...found.value, lost: false, status: found.value.status ?? 'queued' }, now);
        const next = await this.#deps.store.updateTask(task.id, task.version, { ...patch, upstreamId: found.value.id, updatedAt: now });
        if (!next) {
          this.#again(task);
          return task;
        }
        this.#deps.log.info(log, 'adopted a task whose submission was cut off: the vendor had it under the reference we sent');
        if (TERMINAL_STATUSES.has(next.status)) this.#forget(next.id);
        else this.#again(next);
        return next;
      }
      this.#deps.log.info(log, 'a submission cut off before the vendor took it: failed and refunded');
    } else {
      this.#deps.log.warn(log, 'a submission cut off by a crash was failed and refunded; the vendor may have created the task (a possible orphan there)');
    }
    const done = await this.#expire(task);
    this.#forget(task.id);
    return done;
  }

  /** One batch look at several tasks of a channel; gives what became of each. */
  async #lookAtBatch(channel: CompiledChannel, ids: string[]): Promise<Map<string, TaskRecord | null>> {
    const results = new Map<string, TaskRecord | null>();
    const resolvers = new Map<string, (t: TaskRecord | null) => void>();
    for (const id of ids) {
      const p = new Promise<TaskRecord | null>((resolve) => resolvers.set(id, resolve));
      this.#inflight.set(id, p);
      p.finally(() => this.#inflight.delete(id)).catch(() => undefined);
    }
    const resolve = (id: string, t: TaskRecord | null) => {
      if (!results.has(id)) results.set(id, t);
      resolvers.get(id)?.(t);
    };
    try {
      await this.#withSlot(channel.name, async () => {
        const now = this.#now();
        const tasks: TaskRecord[] = [];
        const rare: Promise<void>[] = [];
        let found: TaskRecord[];
        try {
          found = await this.#deps.store.getTasks(ids);
        } catch (err) {
          for (const id of ids) this.#lookFailed(id, channel.name, err);
          return;
        }
        for (const t of found) {
          if (TERMINAL_STATUSES.has(t.status)) {
            this.#forget(t.id);
            resolve(t.id, t);
          } else if (now >= t.deadlineAt || t.status === 'submitting') {
            // Rare paths; the single look handles them.
            resolvers.delete(t.id);
            this.#inflight.delete(t.id);
            rare.push(
              this.#lookAtOne(t.id, t).then(
                (r) => void results.set(t.id, r),
                () => undefined,
              ),
            );
          } else {
            tasks.push(t);
          }
        }
        await Promise.all(rare);
        if (tasks.length === 0) return;
        this.stats.batchQueries++;
        for (const t of tasks) this.#lookedAt.set(t.id, now);
        const outcome = await queryBatch(
          { ...channel.profile.tasks!, batchQuery: channel.profile.tasks!.batchQuery! },
          channel,
          this.#deps.pools,
          tasks,
          this.#deps.clock(),
        );
        if (!outcome.ok) {
          this.#trouble(channel, outcome, tasks);
          return;
        }
        this.#recovered(channel);
        await Promise.all(
          tasks.map(async (t) => {
            const u = t.upstreamId === null ? undefined : outcome.value.get(t.upstreamId);
            if (!u) {
              this.#again(t);
              resolve(t.id, t);
              return;
            }
            resolve(
              t.id,
              await this.#settle(t, u, channel).catch((err: unknown) => {
                this.#lookFailed(t.id, t.channel, err);
                return t;
              }),
            );
          }),
        );
      });
    } finally {
      for (const id of ids) resolve(id, null);
    }
    return results;
  }

  /** Writes what a look found and decides whether to look again. */
  async #settle(task: TaskRecord, update: TaskUpdate, channel: CompiledChannel): Promise<TaskRecord> {
    const now = this.#now();
    let verdict: TaskUpdate | null = update;
    if (update.lost) verdict = this.#lostVerdict(task, update, channel, now);
    else this.#noNews.news(task.id);
    if (!verdict) {
      this.#again(task);
      return task;
    }
    const next = await applyUpdate(this.#deps.store, task, verdict, now);
    if (next !== task) this.stats.updates++;
    if (TERMINAL_STATUSES.has(next.status)) this.#forget(next.id);
    else this.#again(next);
    return next;
  }

  /**
   * The vendor says it does not know the task. Once is not enough to give up on it (a replica
   * that has not seen it yet, a vendor's hiccup): the task is failed as task_lost, and refunded,
   * only when such answers have kept coming, with no other news between, for the channel's
   * `polling.lost_after_ms` (NoNews keeps the run). Until then the answer is no news (null).
   */
  #lostVerdict(task: TaskRecord, update: TaskUpdate, channel: CompiledChannel, now: number): TaskUpdate | null {
    const window = this.#deps.lostAfterMs ?? channel.polling.lostAfterMs;
    const run = this.#noNews.lost(task.id, now, window);
    if (!run.verdict) {
      this.#deps.log.info(
        { channel: channel.name, task: task.id, lost_for_ms: run.forMs, lost_after_ms: window },
        'the vendor does not know a task; asking again',
      );
      return null;
    }
    return { ...update, lost: false, status: 'failed', error: { code: 'task_lost', message: update.error?.message ?? 'the vendor no longer knows this task' } };
  }

  /**
   * A failed look. The vendor's trouble (429, 408, 5xx, no connection) pauses the whole channel.
   * Anything else (an answer no mapping recognises) is no news about these tasks alone: each
   * waits one interval after the first such look, then twice as long after each further one.
   */
  #trouble(channel: CompiledChannel, outcome: { error: Error; retryAfterMs: number | null; vendorTrouble: boolean }, tasks: TaskRecord[]): void {
    const state = this.#state(channel.name);
    let at: number | undefined;
    if (outcome.vendorTrouble) {
      state.failures++;
      const exp = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(state.failures - 1, 16));
      const wait = outcome.retryAfterMs ?? Math.round(exp * (0.5 + this.#random() * 0.5));
      state.pausedUntil = Math.max(state.pausedUntil, this.#now() + wait);
      at = state.pausedUntil;
    }
    this.#deps.log.warn({ channel: channel.name, tasks: tasks.length, err: outcome.error.message, backoff_ms: at ? at - this.#now() : 0 }, 'task query failed');
    for (const t of tasks) {
      if (at !== undefined) {
        this.#again(t, at);
        continue;
      }
      this.#again(t, this.#nextLook(t.id, t.channel, this.#noNews.missed(t.id)));
    }
  }

  #recovered(channel: CompiledChannel): void {
    const state = this.#state(channel.name);
    state.failures = 0;
  }

  /** Runs `fn` holding one of the channel's slots, then lets waiting tasks of that channel go. */
  async #withSlot<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const state = this.#state(name);
    state.active++;
    try {
      return await fn();
    } finally {
      state.active--;
      if (state.ready.length > 0) this.#launch(name);
    }
  }
}
