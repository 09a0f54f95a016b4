/**
 * Task ids by due time: a binary min-heap with lazy deletion. Setting a new time for an id
 * leaves the old heap entry behind and ignores it when it surfaces, so every operation is
 * O(log n) and 10,000 tasks cost a few hundred kilobytes.
 */
export class DueQueue {
  readonly #heap: { at: number; id: string }[] = [];
  /** The current due time of each id; a heap entry with another time is stale. */
  readonly #due = new Map<string, number>();

  /** Number of ids queued. */
  get size(): number {
    return this.#due.size;
  }

  /** Queues an id at a time, replacing any earlier time. */
  set(id: string, at: number): void {
    this.#due.set(id, at);
    this.#heap.push({ at, id });
    this.#up(this.#heap.length - 1);
    // Stale entries pile up when ids are rescheduled often; rebuild when they outnumber live ones.
    if (this.#heap.length > 64 && this.#heap.length > 4 * this.#due.size) this.#rebuild();
  }

  delete(id: string): void {
    this.#due.delete(id);
  }

  /** The earliest due time, or null when empty. */
  peekTime(): number | null {
    this.#dropStale();
    return this.#heap[0]?.at ?? null;
  }

  /** Removes and returns every id due at or before `now`, earliest first. */
  popDue(now: number): string[] {
    return this.popDueAt(now).map((e) => e.id);
  }

  /** Like popDue, with the time each id was due (how late it is, for the poll lag). */
  popDueAt(now: number): { id: string; at: number }[] {
    const out: { id: string; at: number }[] = [];
    for (;;) {
      this.#dropStale();
      const top = this.#heap[0];
      if (!top || top.at > now) return out;
      this.#pop();
      this.#due.delete(top.id);
      out.push({ id: top.id, at: top.at });
    }
  }

  #dropStale(): void {
    for (let top = this.#heap[0]; top !== undefined && this.#due.get(top.id) !== top.at; top = this.#heap[0]) this.#pop();
  }

  #rebuild(): void {
    const live = [...this.#due].map(([id, at]) => ({ id, at }));
    this.#heap.length = 0;
    for (const e of live) {
      this.#heap.push(e);
      this.#up(this.#heap.length - 1);
    }
  }

  /** Removes the top: the last entry sifts down from the root, each smaller child moving up into its place. */
  #pop(): void {
    const h = this.#heap;
    const last = h.pop();
    if (last === undefined || h.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      let m = -1;
      let least = last;
      const left = h[l];
      if (left !== undefined && left.at < least.at) {
        m = l;
        least = left;
      }
      const right = h[l + 1];
      if (right !== undefined && right.at < least.at) {
        m = l + 1;
        least = right;
      }
      if (m === -1) break;
      h[i] = least;
      i = m;
    }
    h[i] = last;
  }

  /** Sifts the entry at `i` up: each later parent moves down into its place. */
  #up(i: number): void {
    const h = this.#heap;
    const entry = h[i];
    if (entry === undefined) return;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = h[p];
      if (parent === undefined || parent.at <= entry.at) break;
      h[i] = parent;
      i = p;
    }
    h[i] = entry;
  }
}
