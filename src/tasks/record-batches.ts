import type { Store, TaskPatch, TaskRecord, TaskWrite } from '../store/store.js';

/** Most records read or written by one statement; more wait for the next. */
const MAX_BATCH = 1000;
/**
 * Least time between the starts of two statements of one kind: at most 100 a second, whatever
 * the looks (2,000 a second for 10,000 tasks at 5 s), for at most 10 ms more per look, a small
 * part of an interval of seconds. A statement costs the store and this process the same whether
 * it carries one record or fifty; on a busy machine its round trip is what the looks wait for.
 */
const MIN_GAP_MS = 10;

/**
 * Requests of one kind gathered into batches, each batch one call of `run`. A batch starts at the
 * end of the turn of the event loop of its first request, or MIN_GAP_MS after the previous one
 * started if that is later, and never while the previous one is under way: what is asked
 * meanwhile goes out together next. So batches grow with the load instead of the statements
 * multiplying.
 */
class Gathered<I, O> {
  readonly #run: (items: I[]) => Promise<O[]>;
  #queue: { item: I; resolve: (out: O) => void; reject: (err: unknown) => void }[] = [];
  #busy = false;
  #scheduled = false;
  #lastStart = -Infinity;

  constructor(run: (items: I[]) => Promise<O[]>) {
    this.#run = run;
  }

  ask(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#busy || this.#scheduled || this.#queue.length === 0) return;
    this.#scheduled = true;
    const go = () => {
      this.#scheduled = false;
      void this.#flush();
    };
    const wait = this.#lastStart + MIN_GAP_MS - performance.now();
    if (wait > 0) setTimeout(go, wait);
    else setImmediate(go);
  }

  async #flush(): Promise<void> {
    if (this.#busy || this.#queue.length === 0) return;
    this.#busy = true;
    this.#lastStart = performance.now();
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
    this.#schedule();
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
