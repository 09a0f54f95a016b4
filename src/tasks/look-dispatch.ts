import type { CompiledChannel } from '../config/snapshot.js';
import type { TaskRecord } from '../store/store.js';
import type { ChannelSlots } from './channel-slots.js';
import type { FollowedTasks } from './followed-tasks.js';
import type { PollSchedule } from './poll-schedule.js';
import type { PollerContext } from './poller-deps.js';
import type { InFlight } from './single-flight.js';
import type { TaskLooks } from './task-looks.js';

/**
 * When looks start: a channel's due tasks as its slots free up (singly, or in batches where the
 * profile allows), and the query routes' refreshes, which join a look under way and never wait
 * for a slot or a backoff.
 */
export class LookDispatch {
  readonly #ctx: PollerContext;
  readonly #tasks: FollowedTasks;
  readonly #schedule: PollSchedule;
  readonly #slots: ChannelSlots;
  readonly #inflight: InFlight;
  readonly #looks: TaskLooks;
  /** Channels already warned about as not configured. */
  readonly #warned = new Set<string>();
  /** Reads of the records of tasks next in line for a slot, started before the slot frees (#readAhead). */
  readonly #reads = new Map<string, { readonly reading: Promise<TaskRecord | null>; done: boolean }>();
  /** The reads ahead under way (see `readsDone`). */
  readonly #pending = new Set<Promise<unknown>>();

  constructor(ctx: PollerContext, tasks: FollowedTasks, schedule: PollSchedule, slots: ChannelSlots, inflight: InFlight, looks: TaskLooks) {
    this.#ctx = ctx;
    this.#tasks = tasks;
    this.#schedule = schedule;
    this.#slots = slots;
    this.#inflight = inflight;
    this.#looks = looks;
  }

  /**
   * Starts looks for a channel's ready tasks while it has free slots. Slots and backoff belong to
   * the channel's name; each look uses the definition its task follows (pinned or current).
   */
  launch(name: string): void {
    const state = this.#slots.state(name);
    // Tasks that waited for a slot while the vendor said 429 wait for the pause too.
    if (state.pausedUntil > this.#ctx.now()) {
      for (const id of state.ready.splice(0)) {
        this.#reads.delete(id);
        this.#schedule.postpone(id, state.pausedUntil + Math.floor(this.#ctx.random() * 1000));
      }
      this.#schedule.arm();
      return;
    }
    const current = this.#ctx.channel(name);
    const single = current?.profile.tasks && !current.profile.tasks.batchQuery;
    if (single) this.#readAhead(name, state.ready, current.polling.concurrency);
    for (let id = state.ready[0]; id !== undefined; id = state.ready[0]) {
      const channel = this.#tasks.pinnedTo(id) ?? current;
      if (!channel?.profile.tasks) {
        // The channel left the config (or lost its task protocol): wait, bounded by each task's deadline.
        if (!this.#warned.has(name)) this.#ctx.deps.log.warn({ channel: name }, 'tasks wait for a channel that is not configured');
        this.#warned.add(name);
        state.ready.shift();
        this.#schedule.started(id);
        this.#looks.lookAtOne(id, null, this.#take(id)).catch(() => undefined);
        continue;
      }
      if (state.active >= channel.polling.concurrency) break;
      const batch = channel.profile.tasks.batchQuery;
      if (batch) {
        // A batch takes the ready tasks that follow this same definition, oldest first.
        const ids: string[] = [];
        state.ready = state.ready.filter((x) => {
          if (ids.length >= batch.maxIds || (this.#tasks.pinnedTo(x) ?? current) !== channel) return true;
          ids.push(x);
          // A batch look reads its tasks itself, in one statement.
          this.#reads.delete(x);
          return false;
        });
        const fresh = ids.filter((x) => !this.#inflight.has(x));
        for (const x of ids) this.#schedule.started(x);
        if (fresh.length > 0) this.#looks.lookAtBatch(channel, channel.profile.tasks, batch, fresh).catch(() => undefined);
      } else {
        // The slot is for the vendor's query: a task whose record is still being read waits for
        // it in line, and the read's end launches again.
        if (this.#reads.get(id)?.done === false && !this.#inflight.has(id)) break;
        state.ready.shift();
        this.#schedule.started(id);
        const reading = this.#take(id);
        if (!this.#inflight.has(id)) this.#looks.lookAtOne(id, null, reading).catch(() => undefined);
      }
    }
  }

  /**
   * Starts reading the records of a channel's tasks next in line for a slot, as many as twice its
   * slots (channels of single queries; a batch look reads its tasks itself): the reads of a turn
   * go out as one statement (./record-batches.ts), and a look starts with its record read, so its
   * slot never waits for a round trip to the store. A record read ahead is at most a few looks
   * old; were it stale, the write's compare-and-set would find out, as for any look.
   */
  #readAhead(name: string, ready: readonly string[], slots: number): void {
    const n = Math.min(ready.length, 2 * slots);
    for (let i = 0; i < n; i++) {
      const id = ready[i];
      if (id === undefined || this.#reads.has(id) || this.#inflight.has(id)) continue;
      const entry = { reading: this.#ctx.records.getTask(id), done: false };
      this.#reads.set(id, entry);
      // A failed read is the look's to report, when it takes it.
      const ended = () => {
        entry.done = true;
        this.#pending.delete(entry.reading);
        if (!this.#ctx.stopped && this.#reads.get(id) === entry) this.launch(name);
      };
      this.#pending.add(entry.reading);
      entry.reading.then(ended, ended);
    }
  }

  /** Whether reads ahead are under way (a look may be waiting for one to start). */
  get reading(): boolean {
    return this.#pending.size > 0;
  }

  /** Resolves once no read ahead is under way; the looks they let start are then under way. */
  async readsDone(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** The read started ahead for a task leaving the line, if any. */
  #take(id: string): Promise<TaskRecord | null> | undefined {
    const entry = this.#reads.get(id);
    this.#reads.delete(id);
    return entry?.reading;
  }

  /**
   * Looks at a task now, for a query route. Joins a look already under way; returns null without
   * asking when the channel is backing off or has no free slot (the caller answers the record).
   */
  refresh(task: TaskRecord): Promise<TaskRecord | null> {
    const running = this.#inflight.get(task.id);
    if (running) return running;
    const channel = this.#tasks.channelFor(task);
    if (!channel) return Promise.resolve(null);
    const state = this.#slots.state(channel.name);
    if (state.pausedUntil > this.#ctx.now() || state.active >= channel.polling.concurrency) return Promise.resolve(null);
    return this.#looks.lookAtOne(task.id, task);
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
      const key = this.#tasks.channelFor(t) ?? t.channel;
      const list = byChannel.get(key);
      if (list) list.push(t);
      else byChannel.set(key, [t]);
    }
    await Promise.all(
      [...byChannel].map(async ([key, list]) => {
        const channel = typeof key === 'string' ? undefined : key;
        const protocol = channel?.profile.tasks;
        const batch = protocol?.batchQuery;
        if (!channel || !protocol || !batch) {
          await Promise.all(list.map(async (t) => out.set(t.id, await this.refresh(t))));
          return;
        }
        const state = this.#slots.state(channel.name);
        const joined = list.flatMap((t) => {
          const look = this.#inflight.get(t.id);
          return look ? [{ id: t.id, look }] : [];
        });
        const fresh = list.filter((t) => !this.#inflight.has(t.id));
        await Promise.all(joined.map(async ({ id, look }) => out.set(id, await look)));
        for (let i = 0; i < fresh.length; i += batch.maxIds) {
          if (state.pausedUntil > this.#ctx.now() || state.active >= channel.polling.concurrency) break;
          for (const [id, t] of await this.#looks.lookAtBatch(
            channel,
            protocol,
            batch,
            fresh.slice(i, i + batch.maxIds).map((t) => t.id),
          ))
            out.set(id, t);
        }
      }),
    );
    return out;
  }
}
