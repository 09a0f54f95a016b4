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
    while (this.#heap.length > 0 && this.#due.get(this.#heap[0]!.id) !== this.#heap[0]!.at) this.#pop();
  }

  #rebuild(): void {
    const live = [...this.#due].map(([id, at]) => ({ id, at }));
    this.#heap.length = 0;
    for (const e of live) {
      this.#heap.push(e);
      this.#up(this.#heap.length - 1);
    }
  }

  #pop(): void {
    const h = this.#heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l]!.at < h[m]!.at) m = l;
      if (r < h.length && h[r]!.at < h[m]!.at) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }

  #up(i: number): void {
    const h = this.#heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.at <= h[i]!.at) return;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
}
