import type { CompiledChannel, CompiledTaskProtocol } from '../config/snapshot.js';
import type { TaskRecord } from '../store/store.js';
import { TERMINAL_STATUSES } from '../store/store.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { ChannelSlots } from './channel-slots.js';
import type { FollowedTasks } from './followed-tasks.js';
import type { PollSchedule } from './poll-schedule.js';
import type { PollerContext } from './poller-deps.js';
import type { InFlight } from './single-flight.js';
import type { TaskVerdicts } from './task-verdicts.js';
import { type BatchQuery, queryBatch, queryTask } from './vendor-query.js';

/**
 * The looks at tasks: one task at a time, or many in one batch query where the profile has one.
 * Each holds a slot of its channel and is single-flight; what it finds goes to the verdicts.
 */
export class TaskLooks {
  readonly #ctx: PollerContext;
  readonly #tasks: FollowedTasks;
  readonly #schedule: PollSchedule;
  readonly #slots: ChannelSlots;
  readonly #inflight: InFlight;
  readonly #verdicts: TaskVerdicts;

  constructor(ctx: PollerContext, tasks: FollowedTasks, schedule: PollSchedule, slots: ChannelSlots, inflight: InFlight, verdicts: TaskVerdicts) {
    this.#ctx = ctx;
    this.#tasks = tasks;
    this.#schedule = schedule;
    this.#slots = slots;
    this.#inflight = inflight;
    this.#verdicts = verdicts;
  }

  /**
   * A look that failed on its own side (the store away, a write that could not be made): the
   * task is looked at again one interval later, as if the look had found nothing new. Without this
   * a task the poller follows would fall out of its queue, followed by name and never looked at.
   */
  #lookFailed(id: string, channel: string, err: unknown): void {
    if (!this.#tasks.has(id) || this.#ctx.stopped) return;
    this.#ctx.deps.log[isStoreUnavailable(err) ? 'debug' : 'warn'](
      { task: id, channel, err: (err as Error).message },
      'a look at a task failed; looking again later',
    );
    this.#schedule.set(id, this.#schedule.nextLook(id, channel));
    this.#schedule.arm();
  }

  /**
   * One look at one task, single-flight. `known` skips the store read when the caller has the
   * record, `reading` when the dispatch read it ahead (./look-dispatch.ts). The channel's slot bounds the vendor's queries: it is given back once the vendor has
   * answered, and what the answer says is written after, so a slot never waits for the store's write.
   */
  lookAtOne(id: string, known: TaskRecord | null, reading?: Promise<TaskRecord | null>): Promise<TaskRecord | null> {
    const channelName = this.#tasks.channelOf(id) ?? known?.channel ?? '';
    const p = this.#slots
      .withSlot(channelName, () => this.#look(id, known, reading))
      .then((r) => (typeof r === 'function' ? r() : r))
      .catch((err: unknown) => {
        this.#lookFailed(id, channelName, err);
        throw err;
      });
    this.#inflight.add(id, p);
    return p;
  }

  /**
   * The look itself: read the task (unless known), then cut off, expire, or ask the vendor. What
   * the vendor said comes back as the write still to make (the verdict), for after the slot.
   */
  async #look(id: string, known: TaskRecord | null, reading?: Promise<TaskRecord | null>): Promise<TaskRecord | null | (() => Promise<TaskRecord>)> {
    const task = known ?? (await (reading ?? this.#ctx.records.getTask(id)));
    if (!task || TERMINAL_STATUSES.has(task.status)) {
      this.#schedule.forget(id);
      return task;
    }
    const now = this.#ctx.now();
    if (task.status === 'submitting') return this.#verdicts.cutOff(task, now);
    if (now >= task.deadlineAt) {
      const done = await this.#verdicts.expire(task);
      this.#schedule.forget(id);
      return done;
    }
    const channel = this.#tasks.channelFor(task);
    if (!channel?.profile.tasks) {
      this.#schedule.again(task);
      return task;
    }
    this.#ctx.stats.queries++;
    this.#tasks.looked(id, now);
    const outcome = await queryTask(channel.profile.tasks, channel, this.#ctx.deps.pools, task, this.#ctx.deps.clock());
    if (!outcome.ok) {
      this.#verdicts.trouble(channel, outcome, [task]);
      return task;
    }
    this.#slots.recovered(channel);
    return () => this.#verdicts.settle(task, outcome.value, channel);
  }

  /** One batch look at several tasks of a channel; gives what became of each. */
  async lookAtBatch(channel: CompiledChannel, protocol: CompiledTaskProtocol, batch: BatchQuery, ids: string[]): Promise<Map<string, TaskRecord | null>> {
    const results = new Map<string, TaskRecord | null>();
    const resolvers = new Map<string, (t: TaskRecord | null) => void>();
    for (const id of ids) {
      const p = new Promise<TaskRecord | null>((resolve) => resolvers.set(id, resolve));
      this.#inflight.add(id, p);
    }
    const resolve = (id: string, t: TaskRecord | null) => {
      if (!results.has(id)) results.set(id, t);
      resolvers.get(id)?.(t);
    };
    try {
      // As for one look, the slot covers the read and the vendor's answer; the writes come after it.
      const verdicts = await this.#slots.withSlot(channel.name, async (): Promise<(() => Promise<void>) | null> => {
        const now = this.#ctx.now();
        const tasks: TaskRecord[] = [];
        const rare: Promise<void>[] = [];
        let found: TaskRecord[];
        try {
          found = await this.#ctx.deps.store.getTasks(ids);
        } catch (err) {
          for (const id of ids) this.#lookFailed(id, channel.name, err);
          return null;
        }
        for (const t of found) {
          if (TERMINAL_STATUSES.has(t.status)) {
            this.#schedule.forget(t.id);
            resolve(t.id, t);
          } else if (now >= t.deadlineAt || t.status === 'submitting') {
            // Rare paths; the single look handles them.
            resolvers.delete(t.id);
            this.#inflight.delete(t.id);
            rare.push(
              this.lookAtOne(t.id, t).then(
                (r) => void results.set(t.id, r),
                () => undefined,
              ),
            );
          } else {
            tasks.push(t);
          }
        }
        await Promise.all(rare);
        if (tasks.length === 0) return null;
        this.#ctx.stats.batchQueries++;
        for (const t of tasks) this.#tasks.looked(t.id, now);
        const outcome = await queryBatch(protocol, batch, channel, this.#ctx.deps.pools, tasks, this.#ctx.deps.clock());
        if (!outcome.ok) {
          this.#verdicts.trouble(channel, outcome, tasks);
          return null;
        }
        this.#slots.recovered(channel);
        return async () => {
          await Promise.all(
            tasks.map(async (t) => {
              const u = t.upstreamId === null ? undefined : outcome.value.get(t.upstreamId);
              if (!u) {
                this.#schedule.again(t);
                resolve(t.id, t);
                return;
              }
              resolve(
                t.id,
                await this.#verdicts.settle(t, u, channel).catch((err: unknown) => {
                  this.#lookFailed(t.id, t.channel, err);
                  return t;
                }),
              );
            }),
          );
        };
      });
      await verdicts?.();
    } finally {
      for (const id of ids) resolve(id, null);
    }
    return results;
  }
}
