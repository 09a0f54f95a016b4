import { randomUUID } from 'node:crypto';
import { DEFAULT_POLLING } from '../config/lookups.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { FollowedTasks } from './followed-tasks.js';
import type { PollSchedule } from './poll-schedule.js';
import { DEFAULT_LEASE_MS, type LeaseSettings, type PollerContext } from './poller-deps.js';
import type { InFlight } from './single-flight.js';
import type { TaskVerdicts } from './task-verdicts.js';

/** Resumed tasks are spread over this much of their first interval, so a restart is not a stampede. */
const RESUME_SPREAD = 1;
const RESUME_PAGE = 1000;
/** Tasks a replica claims per lease round from others that died: the rest is left to the other replicas' rounds. */
const CLAIM_PAGE = 500;

/**
 * This replica's leases on the tasks it follows (docs/deploying.md, "Running several replicas"): claimed at
 * start and from replicas that died, renewed in rounds, given back when it stops.
 */
export class PollLeases {
  readonly #ctx: PollerContext;
  readonly #tasks: FollowedTasks;
  readonly #schedule: PollSchedule;
  readonly #inflight: InFlight;
  readonly #verdicts: TaskVerdicts;
  readonly #lease: LeaseSettings;
  #leaseTimer: NodeJS.Timeout | null = null;
  /** Tasks whose submission is under way: not followed yet, their leases renewed. */
  readonly #held = new Set<string>();

  constructor(ctx: PollerContext, tasks: FollowedTasks, schedule: PollSchedule, inflight: InFlight, verdicts: TaskVerdicts) {
    this.#ctx = ctx;
    this.#tasks = tasks;
    this.#schedule = schedule;
    this.#inflight = inflight;
    this.#verdicts = verdicts;
    this.#lease = ctx.deps.lease ?? { owner: randomUUID(), ms: DEFAULT_LEASE_MS, soleReplica: true };
  }

  /**
   * Claims the unfinished tasks no live replica follows (at start, the sole replica claims them
   * all), then renews every third of the lease time; resolves with how many the first round took.
   */
  async start(): Promise<number> {
    const n = await this.#claim(this.#lease.soleReplica ? Number.MAX_SAFE_INTEGER : this.#ctx.now(), Infinity);
    this.#leaseTimer = setInterval(
      () =>
        void this.#leaseRound().catch((err: unknown) =>
          // The store being away is logged once, where it is found (docs/deploying.md, "When something fails").
          this.#ctx.deps.log[isStoreUnavailable(err) ? 'debug' : 'warn']({ err }, 'lease round failed; trying again'),
        ),
      this.#lease.ms / 3,
    );
    this.#leaseTimer.unref();
    return n;
  }

  /** Stops the lease rounds (the leases themselves run out, or `release` gives them back). */
  stop(): void {
    if (this.#leaseTimer !== null) clearInterval(this.#leaseTimer);
    this.#leaseTimer = null;
  }

  /** The lease a task this replica creates starts with (it follows what it submits). */
  newLease(): { owner: string; until: number } {
    return { owner: this.#lease.owner, until: this.#ctx.now() + this.#lease.ms };
  }

  /** Keeps renewing the lease of a task not followed yet until the returned function is called. */
  hold(id: string): () => void {
    this.#held.add(id);
    return () => void this.#held.delete(id);
  }

  /** Gives back every lease this replica holds, so the others take its tasks at once. */
  release(): Promise<void> {
    return this.#ctx.deps.store.releaseLeases(this.#lease.owner);
  }

  /** Claims free tasks (leases run out at or before `now`) in pages, at most `max`; follows each, spread over its first interval. */
  async #claim(now: number, max: number): Promise<number> {
    let n = 0;
    while (n < max && !this.#ctx.stopped) {
      const page = await this.#ctx.deps.store.claimTasks(this.#lease.owner, now, this.#ctx.now() + this.#lease.ms, Math.min(RESUME_PAGE, max - n));
      const at = this.#ctx.now();
      for (const t of page) {
        if (this.#tasks.has(t.id)) continue;
        const interval = this.#ctx.channel(t.channel)?.polling.intervalMs ?? DEFAULT_POLLING.intervalMs;
        const due = t.status === 'submitting' ? Math.max(at, this.#verdicts.cutOffAt(t)) : at + Math.floor(this.#ctx.random() * interval * RESUME_SPREAD);
        this.#schedule.follow(t.id, t.channel, due);
      }
      n += page.length;
      this.#schedule.arm();
      if (page.length < RESUME_PAGE) break;
    }
    return n;
  }

  /**
   * Renews what this replica follows, lets go of what another took, and claims what a dead one
   * left: one store call renews every lease, however many (UPDATEs over lists of ids; PostgreSQL
   * takes them 500 at a time, so no write waits long for a row the renewal locked).
   */
  async #leaseRound(): Promise<void> {
    if (this.#ctx.stopped) return;
    const ids = [...new Set([...this.#tasks.ids(), ...this.#held])];
    const until = this.#ctx.now() + this.#lease.ms;
    if (ids.length > 0) {
      const held = new Set(await this.#ctx.deps.store.renewLeases(this.#lease.owner, ids, until));
      // Finished meanwhile, or followed by another replica since this one's lease ran out.
      for (const id of ids) if (!held.has(id) && !this.#inflight.has(id) && !this.#held.has(id)) this.#schedule.forget(id);
    }
    await this.#claim(this.#ctx.now(), CLAIM_PAGE);
  }
}
