import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import type { ConfigControl, ConfigStatus, ReloadOutcome } from './config-control.js';
import { formatIssue, type ConfigIssue } from './issues.js';
import { loadConfig, loadConfigOrThrow, type LoadOptions } from './load.js';
import type { Snapshot } from './snapshot.js';
import { watchConfig, type ConfigWatcher } from './watch-config.js';

/** Called after each swap, with the snapshot now serving and the one it replaced. */
export type SwapListener = (next: Snapshot, previous: Snapshot, generation: number) => void;

/** What a live configuration is built from. */
export interface LiveConfigOptions {
  /** The main config directory. */
  readonly dir: string;
  /** The loader options the process started with; every reload uses the same (`extraDirs` are watched too). */
  readonly load?: LoadOptions;
  readonly log: Logger;
  /** Where reload counts, the last result and the generation are reported. */
  readonly metrics?: Metrics;
  /** Quiet time after the last file event before a watched change reloads; default 200 ms. */
  readonly debounceMs?: number;
}

/** Issues kept for `GET /admin/config` and logs; a config with more errors is broken enough. */
const MAX_KEPT_ISSUES = 200;
/** Distinct reasons named in one coalesced reload. */
const MAX_REASONS = 8;

interface Pending {
  readonly reasons: Set<string>;
  readonly waiters: ((outcome: ReloadOutcome) => void)[];
}

/**
 * The configuration of a running process: one reference to the snapshot serving, swapped only
 * when a reload builds a complete new one. Builds are serialised; reload requests that arrive while
 * one is under way are answered together by one more build after it. A build that fails keeps the
 * old snapshot serving and reports its issues (log, status, metrics).
 */
export class LiveConfig implements ConfigControl {
  readonly #dir: string;
  readonly #load: LoadOptions;
  readonly #log: Logger;
  readonly #metrics: Metrics | undefined;
  readonly #debounceMs: number;
  readonly #listeners = new Set<SwapListener>();
  #current: Snapshot;
  #generation = 1;
  #lastReload: ConfigStatus['lastReload'] = null;
  #pending: Pending | null = null;
  #busy = false;
  #watcher: ConfigWatcher | null = null;
  #closed = false;

  /** Wraps a snapshot already loaded from `opts.dir` with `opts.load` (generation 1). */
  constructor(first: Snapshot, opts: LiveConfigOptions) {
    this.#current = first;
    this.#dir = opts.dir;
    this.#load = opts.load ?? {};
    this.#log = opts.log;
    this.#metrics = opts.metrics;
    this.#debounceMs = opts.debounceMs ?? 200;
    this.#metrics?.configGeneration.set(1);
    this.#metrics?.configLastReloadOk.set(1);
  }

  /** Loads the first snapshot; throws a ConfigLoadError naming every problem when it does not compile. */
  static open(opts: LiveConfigOptions): LiveConfig {
    return new LiveConfig(loadConfigOrThrow(opts.dir, opts.load), opts);
  }

  /** The snapshot serving now; a request reads it once, when it starts. */
  current(): Snapshot {
    return this.#current;
  }

  /** Number of the snapshot serving, from 1. */
  get generation(): number {
    return this.#generation;
  }

  /** Builds a new snapshot from the files and swaps it in only if it compiles; joins a build that has not started yet. */
  reload(reason: string): Promise<ReloadOutcome> {
    return new Promise((resolve) => {
      this.#pending ??= { reasons: new Set(), waiters: [] };
      if (this.#pending.reasons.size < MAX_REASONS) this.#pending.reasons.add(reason);
      this.#pending.waiters.push(resolve);
      if (!this.#busy) void this.#drain();
    });
  }

  /** The serving generation, the last reload and what is watched, for `GET /admin/config`. */
  status(): ConfigStatus {
    return {
      generation: this.#generation,
      version: this.#current.version,
      loadedAt: this.#current.loadedAt,
      lastReload: this.#lastReload,
      dirs: [this.#dir, ...(this.#load.extraDirs ?? [])],
      watching: this.#watcher !== null,
    };
  }

  /**
   * Reloads when a config file changes (debounced); idempotent. `onChange` does the reload instead
   * (the process's, which records it in the audit log); it must reload with reason `watch`.
   */
  watch(onChange: () => void = () => void this.reload('watch')): void {
    if (this.#watcher || this.#closed) return;
    this.#watcher = watchConfig(this.status().dirs, onChange, { debounceMs: this.#debounceMs, log: this.#log });
  }

  /** Whether a watched change is waiting for its debounce to end. */
  get changePending(): boolean {
    return this.#watcher?.pending ?? false;
  }

  /** Calls `listener` after every swap; returns a function that removes it. */
  onSwap(listener: SwapListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops watching; the serving snapshot stays readable. A build under way finishes. */
  close(): void {
    this.#closed = true;
    this.#watcher?.close();
    this.#watcher = null;
  }

  /** Runs builds one after the other while requests wait; each build answers every request that was waiting when it began. */
  async #drain(): Promise<void> {
    this.#busy = true;
    try {
      while (this.#pending) {
        // Requests made in the same turn (a burst of signals, several admins) join this build.
        await new Promise((r) => setImmediate(r));
        const batch = this.#pending;
        this.#pending = null;
        const outcome = this.#build([...batch.reasons].join(', '));
        for (const w of batch.waiters) w(outcome);
      }
    } finally {
      this.#busy = false;
    }
  }

  /** One build; swaps when it compiles. Never throws: a loader fault is reported like a bad file. */
  #build(reason: string): ReloadOutcome {
    const started = performance.now();
    let result: { snapshot: Snapshot | null; issues: ConfigIssue[] };
    try {
      result = loadConfig(this.#dir, this.#load);
    } catch (err) {
      result = {
        snapshot: null,
        issues: [{ file: this.#dir, line: 1, column: 1, message: `the configuration could not be loaded: ${(err as Error).message}`, severity: 'error' }],
      };
    }
    const ms = Math.round(performance.now() - started);
    const at = new Date();
    const issues = result.issues.slice(0, MAX_KEPT_ISSUES);
    const errors = result.issues.filter((i) => i.severity === 'error');
    if (!result.snapshot || errors.length > 0) {
      this.#lastReload = { at, ok: false, reason, ms, issues };
      this.#metrics?.configReloads.inc({ result: 'error' });
      this.#metrics?.configLastReloadOk.set(0);
      this.#log.error(
        { reason, generation: this.#generation, ms, errors: errors.length, issues: errors.slice(0, 20).map(formatIssue) },
        'configuration reload failed; the previous configuration keeps serving',
      );
      return { ok: false, generation: this.#generation, issues, ms };
    }
    const previous = this.#current;
    this.#current = result.snapshot;
    this.#generation++;
    this.#lastReload = { at, ok: true, reason, ms, issues };
    this.#metrics?.configReloads.inc({ result: 'ok' });
    this.#metrics?.configLastReloadOk.set(1);
    this.#metrics?.configGeneration.set(this.#generation);
    this.#log.info(
      { reason, generation: this.#generation, ms, channels: result.snapshot.channels.length, routes: result.snapshot.routes.length, warnings: issues.length },
      'configuration reloaded',
    );
    for (const listener of this.#listeners) {
      try {
        listener(result.snapshot, previous, this.#generation);
      } catch (err) {
        // The swap has happened; a listener's fault (pool pruning) must not undo or hide it.
        this.#log.error({ err: (err as Error).message }, 'after-reload step failed');
      }
    }
    return { ok: true, generation: this.#generation, issues, ms };
  }
}
