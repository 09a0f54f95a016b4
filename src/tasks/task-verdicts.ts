import type { CompiledChannel } from '../config/snapshot.js';
import type { TaskRecord } from '../store/store.js';
import { TERMINAL_STATUSES } from '../store/store.js';
import type { ChannelSlots } from './channel-slots.js';
import { cutOffAt, findCutOffTask } from './cut-off.js';
import type { FollowedTasks } from './followed-tasks.js';
import type { PollSchedule } from './poll-schedule.js';
import type { PollerContext } from './poller-deps.js';
import { applyUpdate, patchFor, type TaskUpdate } from './task-update.js';

/**
 * What a look's outcome does to a task: the update written (or the vendor's "lost" held back
 * until it has lasted), the failure of a task past its deadline or cut off, a failed look's
 * backoff, and when the task is looked at next or that it is no longer followed.
 */
export class TaskVerdicts {
  readonly #ctx: PollerContext;
  readonly #tasks: FollowedTasks;
  readonly #schedule: PollSchedule;
  readonly #slots: ChannelSlots;

  constructor(ctx: PollerContext, tasks: FollowedTasks, schedule: PollSchedule, slots: ChannelSlots) {
    this.#ctx = ctx;
    this.#tasks = tasks;
    this.#schedule = schedule;
    this.#slots = slots;
  }

  /** Writes what a look found and decides whether to look again. */
  async settle(task: TaskRecord, update: TaskUpdate, channel: CompiledChannel): Promise<TaskRecord> {
    const now = this.#ctx.now();
    let verdict: TaskUpdate | null = update;
    if (update.lost) verdict = this.#lostVerdict(task, update, channel, now);
    else this.#tasks.noNews.news(task.id);
    if (!verdict) {
      this.#schedule.again(task);
      return task;
    }
    const next = await applyUpdate(this.#ctx.records, task, verdict, now);
    if (next !== task) this.#ctx.stats.updates++;
    if (TERMINAL_STATUSES.has(next.status)) this.#schedule.forget(next.id);
    else this.#schedule.again(next);
    return next;
  }

  /**
   * The vendor says it does not know the task. Once is not enough to give up on it (a replica
   * that has not seen it yet, a vendor's hiccup): the task is failed as task_lost, and refunded,
   * only when such answers have kept coming, with no other news between, for the channel's
   * `polling.lost_after_ms` (NoNews keeps the run). Until then the answer is no news (null).
   */
  #lostVerdict(task: TaskRecord, update: TaskUpdate, channel: CompiledChannel, now: number): TaskUpdate | null {
    const window = this.#ctx.deps.lostAfterMs ?? channel.polling.lostAfterMs;
    const run = this.#tasks.noNews.lost(task.id, now, window);
    if (!run.verdict) {
      this.#ctx.deps.log.info(
        { channel: channel.name, task: task.id, lost_for_ms: run.forMs, lost_after_ms: window },
        'the vendor does not know a task; asking again',
      );
      return null;
    }
    return { ...update, lost: false, status: 'failed', error: { code: 'task_lost', message: update.error?.message ?? 'the vendor no longer knows this task' } };
  }

  /** Fails a task that ran past its deadline or whose submission was cut off, with a refund. */
  async expire(task: TaskRecord): Promise<TaskRecord> {
    const now = this.#ctx.now();
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
      const done = await this.#ctx.records.updateTask(task.id, task.version, {
        status: 'failed',
        error: update.error,
        completedAt: now,
        updatedAt: now,
        refund: true,
      });
      return done ?? task;
    }
    return applyUpdate(this.#ctx.records, task, update, now);
  }

  /** When a `submitting` record can no longer be a submission under way (see ./cut-off.ts). */
  cutOffAt(task: TaskRecord): number {
    return cutOffAt(task, this.#tasks.channelFor(task), this.#ctx.deps.snapshot().retry);
  }

  /**
   * A record still `submitting` (docs/deploying.md, "Tasks cut off by a crash"): left alone until its
   * submission can no longer be under way; then adopted when the profile can find the vendor's
   * task by the reference we sent, else failed and refunded once (its lookup failing, it is asked
   * again until the task's deadline).
   */
  async cutOff(task: TaskRecord, now: number): Promise<TaskRecord> {
    const due = this.cutOffAt(task);
    if (now < due && now < task.deadlineAt) {
      this.#schedule.again(task, due);
      return task;
    }
    const channel = this.#tasks.channelFor(task);
    const protocol = channel?.profile.tasks;
    const log = { task: task.id, channel: task.channel };
    if (channel && protocol && protocol.adopt.length > 0 && now < task.deadlineAt) {
      this.#ctx.stats.queries++;
      const found = await findCutOffTask(protocol, channel, this.#ctx.deps.pools, task, this.#ctx.deps.clock());
      if (!found.ok) {
        this.trouble(channel, found, [task]);
        return task;
      }
      if (found.value) {
        const patch = patchFor(task, { ...found.value, lost: false, status: found.value.status ?? 'queued' }, now);
        const next = await this.#ctx.records.updateTask(task.id, task.version, { ...patch, upstreamId: found.value.id, updatedAt: now });
        if (!next) {
          this.#schedule.again(task);
          return task;
        }
        this.#ctx.deps.log.info(log, 'adopted a task whose submission was cut off: the vendor had it under the reference we sent');
        if (TERMINAL_STATUSES.has(next.status)) this.#schedule.forget(next.id);
        else this.#schedule.again(next);
        return next;
      }
      this.#ctx.deps.log.info(log, 'a submission cut off before the vendor took it: failed and refunded');
    } else {
      this.#ctx.deps.log.warn(log, 'a submission cut off by a crash was failed and refunded; the vendor may have created the task (a possible orphan there)');
    }
    const done = await this.expire(task);
    this.#schedule.forget(task.id);
    return done;
  }

  /**
   * A failed look. The vendor's trouble (429, 408, 5xx, no connection) pauses the whole channel.
   * Anything else (an answer no mapping recognises) is no news about these tasks alone: each
   * waits one interval after the first such look, then twice as long after each further one.
   */
  trouble(channel: CompiledChannel, outcome: { error: Error; retryAfterMs: number | null; vendorTrouble: boolean }, tasks: TaskRecord[]): void {
    let at: number | undefined;
    if (outcome.vendorTrouble) at = this.#slots.backOff(channel, outcome.retryAfterMs);
    this.#ctx.deps.log.warn(
      { channel: channel.name, tasks: tasks.length, err: outcome.error.message, backoff_ms: at ? at - this.#ctx.now() : 0 },
      'task query failed',
    );
    for (const t of tasks) {
      if (at !== undefined) {
        this.#schedule.again(t, at);
        continue;
      }
      this.#schedule.again(t, this.#schedule.nextLook(t.id, t.channel, this.#tasks.noNews.missed(t.id)));
    }
  }
}
