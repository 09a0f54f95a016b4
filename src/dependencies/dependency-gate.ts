/**
 * The one rule for an optional dependency on a request's path (Redis for shared limits, the result
 * archive for downloads): every call has a budget; a call that runs past it, or fails the way an
 * outage fails, marks the dependency away for the whole process, and from then on no request waits
 * for it at all (callers take their fallback at once) until a probe, sent every `probeEveryMs`,
 * answers within the budget again. Each move between up and away is logged once and read by a gauge
 * (`gateway_<name>_up`); calls cut by the budget are counted (`gateway_dependency_timeouts_total`).
 */
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { Metrics } from '../metrics/metrics.js';

/** What a gate needs to know of its dependency. */
export interface GateOptions {
  /** The dependency's name in metrics and logs: `redis`, `archive`. */
  readonly name: string;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** The gauge's help text (it reads 1 while up). */
  readonly help: string;
  /** The most a call may take before it counts as unanswered, ms. */
  readonly timeoutMs: number;
  /** A cheap call that answers when the dependency is back (Redis PING, S3 HeadBucket). */
  readonly probe: (signal: AbortSignal) => Promise<unknown>;
  /** How often the probe is sent while away; default 1 s. */
  readonly probeEveryMs?: number;
  /** The dependency's own view of its connection (ioredis's `ready`), when it has one: not ready is away. */
  readonly connected?: () => boolean;
  /** Whether a failed call means the dependency is away (default: every failure does); a "not found" does not. */
  readonly isOutage?: (err: unknown) => boolean;
  /** Whether a failed call is the dependency's own timeout (counted as one cut by the budget is); default: none is. */
  readonly isTimeout?: (err: unknown) => boolean;
  /** Runs once the probe answered, before the gate opens again (rebuild what was kept meanwhile); bounded by the budget. */
  readonly beforeBack?: () => Promise<void>;
  /** Called after each move between up and away has been logged. */
  readonly onMove?: (up: boolean) => void;
  /**
   * Whether the first state is said too (a dependency connected at start, whose first answer or
   * failure is news); else the gate starts as up and only a move away is said.
   */
  readonly sayFirst?: boolean;
  /** What is said when the dependency goes away and when it is back (the log lines). */
  readonly saying: { readonly away: string; readonly back: string };
  /** Extra fields of those log lines (the dependency's masked address). */
  readonly logged?: Record<string, unknown>;
}

/** A call the gate did not make (the dependency is away) or cut (it ran past its budget, or failed as an outage). */
export class DependencyAway extends Error {
  constructor(
    readonly dependency: string,
    why: string,
  ) {
    super(`${dependency} is unavailable: ${why}`);
    this.name = 'DependencyAway';
  }
}

const TIMEOUTS_METRIC = 'gateway_dependency_timeouts_total';

/** Keeps one dependency's up/away state for the process; see the file's comment. */
export class DependencyGate {
  readonly #o: GateOptions;
  readonly #timeouts: Counter<'dependency'>;
  /** Why it is away (a call's failure), or null while nothing failed since the last probe answered. */
  #away: string | null = null;
  #probing: NodeJS.Timeout | null = null;
  #probeRunning = false;
  /** What was last said: up, away, or nothing yet (sayFirst). */
  #said: boolean | null;
  #closed = false;

  constructor(o: GateOptions) {
    this.#o = o;
    this.#said = o.sayFirst ? null : true;
    this.#timeouts = o.metrics.counter(
      TIMEOUTS_METRIC,
      'Calls to an optional dependency cut by their budget, by dependency (each marks it away until a probe answers)',
      ['dependency'],
    );
    o.metrics.gauge(`gateway_${o.name}_up`, o.help, [], () => [[{}, this.up ? 1 : 0]]);
  }

  /** Whether calls are made now: connected, and nothing failed since the probe last answered. */
  get up(): boolean {
    return !this.#closed && this.#away === null && (this.#o.connected?.() ?? true);
  }

  /** The budget of one call, ms. */
  get timeoutMs(): number {
    return this.#o.timeoutMs;
  }

  /**
   * Runs `call` under the budget: its answer, or DependencyAway at once while away, or when it ran
   * past the budget (the signal is aborted then) or failed as an outage (both mark it away). Any
   * other failure (a "not found") is thrown as it is.
   */
  async run<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (!this.up) throw new DependencyAway(this.#o.name, this.#away ?? 'not connected');
    try {
      return await within(this.#o.timeoutMs, call);
    } catch (err) {
      const over = err instanceof OverBudget || (this.#o.isTimeout?.(err) ?? false);
      if (over) this.#timeouts.inc({ dependency: this.#o.name });
      if (!over && !(this.#o.isOutage?.(err) ?? true)) throw err;
      const why = (err as Error).message ?? String(err);
      this.markAway(why);
      throw new DependencyAway(this.#o.name, why);
    }
  }

  /** Marks the dependency away (a failure seen outside `run`); the probe brings it back. */
  markAway(why: string): void {
    if (this.#closed) return;
    this.#away ??= why.slice(0, 300);
    this.changed();
    this.#startProbing();
  }

  /**
   * Says whether up/away moved since last said (logged once each way): call it when the
   * dependency's own connection state changes. A connection that came back after a failure is
   * still away until the probe answers.
   */
  changed(): void {
    const up = this.up;
    if (up === this.#said || this.#closed) return;
    this.#said = up;
    const fields = { dependency: this.#o.name, ...this.#o.logged };
    if (up) this.#o.log.info(fields, this.#o.saying.back);
    else this.#o.log.warn({ ...fields, why: this.#away ?? 'not connected' }, this.#o.saying.away);
    this.#o.onMove?.(up);
  }

  close(): void {
    this.#closed = true;
    if (this.#probing) clearInterval(this.#probing);
    this.#probing = null;
  }

  #startProbing(): void {
    if (this.#probing || this.#closed) return;
    this.#probing = setInterval(() => void this.#probe(), this.#o.probeEveryMs ?? 1_000);
    this.#probing.unref();
  }

  /**
   * One probe, none while the last is running; answered within the budget, `beforeBack` runs (for at
   * most a few budgets, its failure ignored: it only restores what was kept meanwhile) and the gate opens.
   */
  async #probe(): Promise<void> {
    if (this.#probeRunning || this.#closed || this.#away === null) return;
    this.#probeRunning = true;
    try {
      await within(this.#o.timeoutMs, (signal) => this.#o.probe(signal));
      if (this.#o.beforeBack) await within(this.#o.timeoutMs * 5, () => this.#o.beforeBack?.() ?? Promise.resolve()).catch(() => undefined);
      if (this.#closed) return;
      this.#away = null;
      if (this.#probing) clearInterval(this.#probing);
      this.#probing = null;
      this.changed();
    } catch {
      // Still away: the next probe tries again.
    } finally {
      this.#probeRunning = false;
    }
  }
}

/** A call that ran past its budget. */
class OverBudget extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/** `call`'s answer, or a rejection (OverBudget) once `ms` have passed (its signal aborted then). */
async function within<T>(ms: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new OverBudget(ms);
      abort.abort(err);
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([call(abort.signal), late]);
  } finally {
    clearTimeout(timer);
  }
}
