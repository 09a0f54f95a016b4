import { DEFAULT_POLLING } from '../config/lookups.js';
import type { TaskRecord } from '../store/store.js';
import type { ChannelSlots } from './channel-slots.js';
import { DueQueue } from './due-queue.js';
import type { FollowedTasks } from './followed-tasks.js';
import type { PollerContext } from './poller-deps.js';

/**
 * A task whose looks keep giving no news (an answer no mapping recognises: a proxy's 404, a body
 * that cannot be read) waits twice as long after each, from one interval up to this (or the
 * interval, if longer), so a proxy answering 404 for hours is not asked every interval.
 */
const TASK_BACKOFF_MAX_MS = 5 * 60_000;

/**
 * When each followed task is looked at next. Due times live in one queue with one timer (no
 * timer or sleep per task); when it fires, the tasks due join their channel's ready tasks, which
 * `launch` sends out as the channel's slots allow.
 */
export class PollSchedule {
  readonly #ctx: PollerContext;
  readonly #tasks: FollowedTasks;
  readonly #slots: ChannelSlots;
  readonly #launch: (channel: string) => void;
  readonly #due = new DueQueue();
  /** Task id → when it fell due, for tasks due and waiting for a slot: how late its look starts is the poll lag. */
  readonly #dueAt = new Map<string, number>();
  #timer: unknown = null;
  #timerAt = Infinity;

  constructor(ctx: PollerContext, tasks: FollowedTasks, slots: ChannelSlots, launch: (channel: string) => void) {
    this.#ctx = ctx;
    this.#tasks = tasks;
    this.#slots = slots;
    this.#launch = launch;
  }

  /** Follows a task on a channel, due at `dueAt` (the timer is the caller's to arm). */
  follow(id: string, channel: string, dueAt: number): void {
    this.#tasks.follow(id, channel);
    this.#due.set(id, dueAt);
  }

  /** Stops following a task: its due time and everything remembered of it go. */
  forget(id: string): void {
    this.#tasks.forget(id);
    this.#dueAt.delete(id);
    this.#due.delete(id);
  }

  /** Sets a new due time for a followed task (the timer is the caller's to arm). */
  set(id: string, at: number): void {
    this.#due.set(id, at);
  }

  /** Puts a task that waited for a slot back in the queue: its lag counts from its new time. */
  postpone(id: string, at: number): void {
    this.#dueAt.delete(id);
    this.#due.set(id, at);
  }

  /** A look at a task the timer made due starts now: how late it is goes to the metrics. */
  started(id: string): void {
    const at = this.#dueAt.get(id);
    if (at === undefined) return;
    this.#dueAt.delete(id);
    this.#ctx.deps.metrics?.pollLag.observe(Math.max(0, this.#ctx.now() - at) / 1000);
  }

  /** Sets the one timer for the earliest due task. */
  arm(): void {
    if (this.#ctx.stopped) return;
    const next = this.#due.peekTime();
    if (next === null || next >= this.#timerAt) return;
    if (this.#timer !== null) this.#ctx.timers.clear(this.#timer);
    this.#timerAt = next;
    this.#timer = this.#ctx.timers.set(() => this.#tick(), Math.max(0, Math.min(next - this.#ctx.now(), 2 ** 31 - 1)));
  }

  /** Clears the timer (the poller stops). */
  stop(): void {
    if (this.#timer !== null) this.#ctx.timers.clear(this.#timer);
    this.#timer = null;
  }

  #tick(): void {
    this.#timer = null;
    this.#timerAt = Infinity;
    if (this.#ctx.stopped) return;
    const now = this.#ctx.now();
    const touched = new Set<string>();
    for (const { id, at } of this.#due.popDueAt(now)) {
      const name = this.#tasks.channelOf(id);
      if (name === undefined) continue;
      const state = this.#slots.state(name);
      if (state.pausedUntil > now) {
        // A channel backing off is not late: its tasks' lag counts from their new time.
        this.#due.set(id, state.pausedUntil + Math.floor(this.#ctx.random() * 1000));
        continue;
      }
      state.ready.push(id);
      this.#dueAt.set(id, at);
      touched.add(name);
    }
    for (const name of touched) this.#launch(name);
    this.arm();
  }

  /**
   * Reschedules a task that is still unfinished one interval from now (or after a backoff), never
   * later than its deadline, so a task that backs off still expires on time (a record still
   * `submitting` keeps its own orphan time: its submission may be under way).
   */
  again(task: TaskRecord, at?: number): void {
    if (this.#ctx.stopped) return;
    let due = at ?? this.nextLook(task.id, task.channel);
    if (task.status !== 'submitting') due = Math.min(due, Math.max(task.deadlineAt, this.#ctx.now()));
    this.follow(task.id, task.channel, due);
    this.arm();
  }

  /**
   * When to look at a task again: one jittered interval after the last look *started*, so time
   * spent waiting for a slot or for the vendor does not stretch every later period; `factor`
   * intervals (capped at TASK_BACKOFF_MAX_MS) for a task backing off. On a channel with a batch
   * query the time is rounded up to a fifth of the interval, so the channel's tasks fall due
   * together and go out in full batches instead of one task per call.
   */
  nextLook(id: string, channelName: string, factor = 1): number {
    const channel = this.#tasks.pinnedTo(id) ?? this.#ctx.channel(channelName);
    const interval = channel?.polling.intervalMs ?? DEFAULT_POLLING.intervalMs;
    const wait = factor === 1 ? interval : Math.min(interval * factor, Math.max(interval, TASK_BACKOFF_MAX_MS));
    const now = this.#ctx.now();
    let at = Math.max(now + interval / 10, (this.#tasks.lookedAt(id) ?? now) + this.#ctx.jitter(wait));
    if (channel?.profile.tasks?.batchQuery) {
      const step = Math.max(100, Math.floor(interval / 5));
      at = Math.ceil(at / step) * step;
    }
    return Math.round(at);
  }
}
