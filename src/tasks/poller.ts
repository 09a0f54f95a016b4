import type { CompiledChannel, Snapshot } from '../config/snapshot.js';
import type { TaskRecord } from '../store/store.js';
import { TERMINAL_STATUSES } from '../store/store.js';
import { ChannelSlots } from './channel-slots.js';
import { FollowedTasks } from './followed-tasks.js';
import { LookDispatch } from './look-dispatch.js';
import { PollLeases } from './poll-leases.js';
import { PollSchedule } from './poll-schedule.js';
import { PollerContext, type PollerDeps, type PollerStats } from './poller-deps.js';
import { InFlight } from './single-flight.js';
import { TaskLooks } from './task-looks.js';
import { TaskVerdicts } from './task-verdicts.js';

export { DEFAULT_LEASE_MS, type LeaseSettings, type PollerDeps, type PollerTimers } from './poller-deps.js';

/**
 * Follows every unfinished task to a terminal state. Due times live in one queue with one timer
 * (no timer or sleep per task); each channel has its own concurrency limit and backoff; profiles
 * with a batch query are asked about many tasks per call. Each look at a task is single-flight,
 * shared by the poller and the query routes' on-demand refreshes.
 *
 * The parts, one job each: ./followed-tasks.ts (what is known of each task), ./poll-schedule.ts
 * (when each is due), ./channel-slots.ts (slots and backoff), ./look-dispatch.ts (when looks
 * start), ./task-looks.ts (single and batch looks), ./task-verdicts.ts (what a look's outcome
 * does to the task), ./poll-leases.ts (which replica follows which task).
 */
export class Poller {
  readonly #ctx: PollerContext;
  readonly #tasks: FollowedTasks;
  readonly #schedule: PollSchedule;
  readonly #inflight = new InFlight();
  readonly #dispatch: LookDispatch;
  readonly #leases: PollLeases;
  /** Upstream calls made by the poller and refreshes, for the benchmark and metrics. */
  readonly stats: PollerStats;

  constructor(deps: PollerDeps) {
    const ctx = new PollerContext(deps);
    const tasks = new FollowedTasks(deps.snapshot);
    // A freed slot and a timer tick both hand a channel's ready tasks to the dispatch, made last.
    const slots = new ChannelSlots(ctx, (name) => this.#dispatch.launch(name));
    const schedule = new PollSchedule(ctx, tasks, slots, (name) => this.#dispatch.launch(name));
    const verdicts = new TaskVerdicts(ctx, tasks, schedule, slots);
    const looks = new TaskLooks(ctx, tasks, schedule, slots, this.#inflight, verdicts);
    this.#dispatch = new LookDispatch(ctx, tasks, schedule, slots, this.#inflight, looks);
    this.#leases = new PollLeases(ctx, tasks, schedule, this.#inflight, verdicts);
    this.#ctx = ctx;
    this.#tasks = tasks;
    this.#schedule = schedule;
    this.stats = ctx.stats;
  }

  /** How many tasks are followed. */
  get size(): number {
    return this.#tasks.size;
  }

  /**
   * Claims the unfinished tasks no live replica follows (at start, the sole replica claims them
   * all), then keeps its leases: every third of the lease time it renews what it follows, lets go
   * of what another replica took, and claims what a dead one left. Resolves with how many tasks
   * the first round took.
   */
  resume(): Promise<number> {
    return this.#leases.start();
  }

  /** The lease a task this replica creates starts with (it follows what it submits). */
  newLease(): { owner: string; until: number } {
    return this.#leases.newLease();
  }

  /** Keeps renewing the lease of a task not followed yet (its submission under way) until the returned function is called. */
  holdLease(id: string): () => void {
    return this.#leases.hold(id);
  }

  /** Gives back every lease this replica holds (it is stopping), so the others take its tasks at once. */
  releaseLeases(): Promise<void> {
    return this.#leases.release();
  }

  /**
   * Starts following a task that was just accepted; its first look is one interval away. With
   * `channel` (the definition that accepted it) the task is followed with that definition for as
   * long as this process runs, whatever later reloads make of the channel.
   */
  track(task: TaskRecord, channel?: CompiledChannel): void {
    if (this.#ctx.stopped || TERMINAL_STATUSES.has(task.status)) return;
    if (channel) this.#tasks.pin(task.id, channel);
    this.#tasks.looked(task.id, this.#ctx.now());
    this.#schedule.follow(task.id, task.channel, this.#schedule.nextLook(task.id, task.channel));
    this.#schedule.arm();
  }

  /**
   * The channel definition a task is followed with: the one pinned when it was accepted, else the
   * channel of that name in `snapshot` (default: the current one); undefined when there is none.
   */
  channelFor(task: TaskRecord, snapshot: Snapshot = this.#ctx.deps.snapshot()): CompiledChannel | undefined {
    return this.#tasks.channelFor(task, snapshot);
  }

  /** The distinct definitions unfinished tasks are pinned to (a reload keeps their connection pools). */
  pinnedChannels(): Set<CompiledChannel> {
    return this.#tasks.pinnedChannels();
  }

  /** Time of the last look at a task by this process, or null. */
  lookedAt(id: string): number | null {
    return this.#tasks.lookedAt(id) ?? null;
  }

  /**
   * Looks at a task now, for a query route. Joins a look already under way; returns null without
   * asking when the channel is backing off or has no free slot (the caller answers the record).
   */
  refresh(task: TaskRecord): Promise<TaskRecord | null> {
    return this.#dispatch.refresh(task);
  }

  /**
   * Looks at several tasks now, for a batch query route: batched per channel where the profile
   * allows it. Tasks whose channel is busy or backing off are left out of the answer.
   */
  refreshMany(tasks: readonly TaskRecord[]): Promise<Map<string, TaskRecord | null>> {
    return this.#dispatch.refreshMany(tasks);
  }

  /** Stops polling; looks under way finish on their own. */
  stop(): void {
    this.#ctx.stopped = true;
    this.#leases.stop();
    this.#schedule.stop();
  }

  /** Resolves once no look is under way, nor a read a look waits for (tests step a fake clock between looks). */
  async idle(): Promise<void> {
    do {
      await this.#dispatch.readsDone();
      await this.#inflight.idle();
    } while (this.#dispatch.reading);
  }
}
