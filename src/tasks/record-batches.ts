import type { Store, TaskPatch, TaskRecord, TaskWrite } from '../store/store.js';

/** Most records read or written by one statement; more wait for the next. */
const MAX_BATCH = 1000;

/**
 * Requests of one kind gathered into batches, each batch one call of `run`: what is asked during a
 * turn of the event loop goes out at its end together, and what is asked while a batch is under
 * way waits for it and goes out together next. So one batch of each kind is in flight at a time,
 * and batches grow with the load instead of the statements multiplying: with a store that answers
 * in R ms, a kind costs one statement per R ms however many looks ask.
 */
class Gathered<I, O> {
  readonly #run: (items: I[]) => Promise<O[]>;
  #queue: { item: I; resolve: (out: O) => void; reject: (err: unknown) => void }[] = [];
  #busy = false;
  #scheduled = false;

  constructor(run: (items: I[]) => Promise<O[]>) {
    this.#run = run;
  }

  ask(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#busy || this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        void this.#flush();
      });
    });
  }

  async #flush(): Promise<void> {
    if (this.#busy || this.#queue.length === 0) return;
    this.#busy = true;
    const batch = this.#queue.splice(0, MAX_BATCH);
    try {
      const out = await this.#run(batch.map((b) => b.item));
      batch.forEach((b, i) => {
        b.resolve(out[i] as O);
      });
    } catch (err) {
      // The store failed the statement: every request in it failed, as each alone would have.
      for (const b of batch) b.reject(err);
    } finally {
      this.#busy = false;
    }
    // Asked while this batch was under way: they have waited one statement already.
    void this.#flush();
  }
}

/**
 * The poller's reads and compare-and-sets of task records, one statement per kind at a time
 * (`getTasks`, `updateTasks`) instead of one per task: on PostgreSQL every statement is a round
 * trip and a connection of the pool, and 10,000 tasks at a 5 s interval are 2,000 looks a second.
 * Each read and write keeps its own answer and its own compare-and-set; a store that fails a
 * batch fails each of its requests.
 */
export class RecordBatches {
  readonly #reads: Gathered<string, TaskRecord | null>;
  readonly #writes: Gathered<TaskWrite, TaskRecord | null>;

  constructor(store: Pick<Store, 'getTasks' | 'updateTasks'>) {
    this.#reads = new Gathered(async (ids) => {
      const found = new Map((await store.getTasks([...new Set(ids)])).map((t) => [t.id, t]));
      return ids.map((id) => found.get(id) ?? null);
    });
    this.#writes = new Gathered((writes) => store.updateTasks(writes));
  }

  /** A task as stored now, or null when there is none (as Store.getTask). */
  getTask(id: string): Promise<TaskRecord | null> {
    return this.#reads.ask(id);
  }

  /** A compare-and-set of a task (as Store.updateTask): its new record, or null when it changed meanwhile or is gone. */
  updateTask(id: string, version: number, patch: TaskPatch): Promise<TaskRecord | null> {
    return this.#writes.ask({ id, version, patch });
  }
}
