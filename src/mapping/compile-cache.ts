import { LRUCache } from 'lru-cache';

/** Hits and misses of one compile cache since the process started, and what it holds now. */
export interface CompileCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly entries: number;
  /** Sum of the entries' sizes: characters of their source text. */
  readonly size: number;
}

/** How large one compile cache may grow. */
export interface CompileCacheLimits {
  /** Most entries kept. */
  readonly maxEntries: number;
  /** Most source characters kept, over all entries; one entry larger than this is not kept. */
  readonly maxChars: number;
}

/**
 * A bounded, least-recently-used map from the source text of a compiled artefact (a JSONata
 * expression, a JSON Schema) to what compiling it gave. A reload that changes one line then
 * recompiles only what that line is part of; entries no load has asked for in a long while are the
 * first to go when the bound is reached. Only artefacts that depend on nothing but their key may be
 * kept here, since every later load with the same key gets the same object.
 */
export class CompileCache<V extends object> {
  readonly #lru: LRUCache<string, V>;
  #hits = 0;
  #misses = 0;

  constructor(limits: CompileCacheLimits) {
    // Size by source length: a compiled AST or validator grows with the text it came from.
    this.#lru = new LRUCache<string, V>({ max: limits.maxEntries, maxSize: limits.maxChars, sizeCalculation: (_v, key) => Math.max(1, key.length) });
  }

  /** What `key` compiled to, or undefined (counted as a hit or a miss). */
  get(key: string): V | undefined {
    const v = this.#lru.get(key);
    if (v === undefined) this.#misses++;
    else this.#hits++;
    return v;
  }

  /** Keeps what `key` compiled to; a key longer than the whole bound is silently not kept. */
  set(key: string, value: V): void {
    this.#lru.set(key, value);
  }

  /** Counters and occupancy, for tests and diagnostics. */
  stats(): CompileCacheStats {
    return { hits: this.#hits, misses: this.#misses, entries: this.#lru.size, size: this.#lru.calculatedSize };
  }
}

/**
 * Bounds of the process-wide caches. Expressions and schemas belong to profiles and routes, not to
 * channels: the shipped config has 135 expressions (70 K characters) and 34 schemas (33 K), and a
 * config of 1,000 channels over the same profiles adds none. Measured on it, a compiled expression
 * holds ~55 bytes of heap per source character and a validator ~40 (with its share of the ajv it was
 * compiled on; an ajv kept alive by one validator alone is ~90 KB). So 1 M characters each holds 15
 * to 30 times the shipped config, room for the previous version of what changed, in at most ~100 MB.
 */
export const COMPILE_CACHE_LIMITS = {
  expressions: { maxEntries: 4_096, maxChars: 1024 * 1024 },
  schemas: { maxEntries: 256, maxChars: 1024 * 1024 },
} as const satisfies Record<string, CompileCacheLimits>;
