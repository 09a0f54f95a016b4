import type { CompiledChannel, Snapshot } from '../config/snapshot.js';
import type { TaskRecord } from '../store/store.js';
import { NoNews } from './no-news.js';

/**
 * What the poller remembers of each task it follows: its channel, the definition it is pinned
 * to, when it was last looked at, and its runs of looks without news. All of it goes with the task.
 */
export class FollowedTasks {
  readonly #snapshot: () => Snapshot;
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
  /** Per task: how long the vendor has said it does not know it, and failed looks in a row. */
  readonly noNews = new NoNews();

  constructor(snapshot: () => Snapshot) {
    this.#snapshot = snapshot;
  }

  /** How many tasks are followed. */
  get size(): number {
    return this.#channelOf.size;
  }

  /** Whether a task is followed. */
  has(id: string): boolean {
    return this.#channelOf.has(id);
  }

  /** The channel name a followed task runs on; undefined for a task not followed. */
  channelOf(id: string): string | undefined {
    return this.#channelOf.get(id);
  }

  /** The ids of every task followed. */
  ids(): IterableIterator<string> {
    return this.#channelOf.keys();
  }

  /** Follows a task on a channel (its due time is the schedule's). */
  follow(id: string, channel: string): void {
    this.#channelOf.set(id, channel);
  }

  /** Pins a task to the definition that accepted it, for as long as this process follows it. */
  pin(id: string, channel: CompiledChannel): void {
    this.#pinned.set(id, channel);
  }

  /** The definition a task is pinned to, if any. */
  pinnedTo(id: string): CompiledChannel | undefined {
    return this.#pinned.get(id);
  }

  /** The pinned definition of a task, else the channel of its name in `snapshot` (default: the current one). */
  channelFor(task: TaskRecord, snapshot: Snapshot = this.#snapshot()): CompiledChannel | undefined {
    return this.#pinned.get(task.id) ?? snapshot.channelsByName.get(task.channel);
  }

  /** The distinct definitions tasks are pinned to. */
  pinnedChannels(): Set<CompiledChannel> {
    return new Set(this.#pinned.values());
  }

  /** Time of the last look at a task, if any. */
  lookedAt(id: string): number | undefined {
    return this.#lookedAt.get(id);
  }

  /** Records that a look at a task started at `at`. */
  looked(id: string, at: number): void {
    this.#lookedAt.set(id, at);
  }

  /** Drops everything remembered of a task. */
  forget(id: string): void {
    this.#channelOf.delete(id);
    this.#pinned.delete(id);
    this.#lookedAt.delete(id);
    this.noNews.forget(id);
  }
}
