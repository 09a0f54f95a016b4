import type { TaskRecord } from '../store/store.js';

/**
 * The looks under way, at most one per task, shared by the poller and the query routes'
 * on-demand refreshes: a look asked for while one runs joins it.
 */
export class InFlight {
  readonly #looks = new Map<string, Promise<TaskRecord | null>>();

  /** How many looks are under way. */
  get size(): number {
    return this.#looks.size;
  }

  /** The look under way at a task, if any. */
  get(id: string): Promise<TaskRecord | null> | undefined {
    return this.#looks.get(id);
  }

  /** Whether a look at a task is under way. */
  has(id: string): boolean {
    return this.#looks.has(id);
  }

  /** Records a look under way; it is dropped when it settles. */
  add(id: string, look: Promise<TaskRecord | null>): void {
    this.#looks.set(id, look);
    look.finally(() => this.#looks.delete(id)).catch(() => undefined);
  }

  /** Drops a look before it settles (another look takes the task over). */
  delete(id: string): void {
    this.#looks.delete(id);
  }

  /** Resolves once no look is under way. */
  async idle(): Promise<void> {
    while (this.#looks.size > 0) await Promise.allSettled([...this.#looks.values()]);
  }
}
