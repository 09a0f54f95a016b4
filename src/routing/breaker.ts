import type { BreakerPolicy } from '../config/snapshot.js';

/** Where a breaker is: serving, out for a cool-down, or letting one probe through. */
export type BreakerState = 'closed' | 'open' | 'half_open';

/** How a vendor call ended, as far as the channel's health goes. */
export type Health = 'success' | 'failure' | 'neutral';

const BUCKETS = 10;

/** Whether a call may go: with `probe` when it is a half-open breaker's single probe; else when one may. */
export type BreakerVerdict = { readonly ok: true; readonly probe: boolean } | { readonly ok: false; readonly retryAt: number };

/** The verdict of a closed (or disabled) breaker: one object for every call (issue 41). */
const GO: BreakerVerdict = Object.freeze({ ok: true, probe: false });

/**
 * One channel's circuit breaker. Closed: every call goes; `consecutiveFailures` failures in a row,
 * or a failure share of `failureRate.threshold` over `windowMs` (once `minRequests` calls were
 * seen), open it. Open: no call goes until `cooldownMs` has passed. Half open: exactly one call
 * (the probe) goes; its success closes the breaker, its failure opens it for another cool-down.
 * Rate limits and client errors are neutral: the vendor is alive.
 */
export class Breaker {
  state: BreakerState = 'closed';
  consecutive = 0;
  /** When it opened last, and when a probe may go (ms). */
  openedAt: number | null = null;
  retryAt: number | null = null;
  #probing = false;
  /** A half-open breaker whose probe another replica sends lets none through before this (ms). */
  #probeElsewhereUntil = 0;
  /** The failure-rate window in ten buckets: [start, calls, failures]. */
  #buckets: [number, number, number][] = [];

  /** Whether a call may go now; true for a half-open breaker's single probe (the caller must report it). */
  admit(policy: BreakerPolicy, now: number): BreakerVerdict {
    const verdict = this.peek(policy, now);
    if (!policy.enabled || this.state === 'closed') return verdict;
    // A cool-down that is over lets the breaker half open, whether or not its probe may go now.
    const until = this.openUntil();
    if (until !== null && now >= until) this.state = 'half_open';
    if (verdict.ok) this.#probing = true;
    return verdict;
  }

  /** When an open breaker lets its probe go (ms); null when it is not open. */
  openUntil(): number | null {
    return this.state === 'open' ? this.retryAt : null;
  }

  /** What `admit` would answer now, changing nothing: for looks that must not take the probe (the admin playground). */
  peek(policy: BreakerPolicy, now: number): BreakerVerdict {
    if (!policy.enabled || this.state === 'closed') return GO;
    const until = this.openUntil();
    if (until !== null && now < until) return { ok: false, retryAt: until };
    if (this.#probing) return { ok: false, retryAt: now + 1000 };
    if (now < this.#probeElsewhereUntil) return { ok: false, retryAt: this.#probeElsewhereUntil };
    return { ok: true, probe: true };
  }

  /** The probe `admit` granted is not sent: another replica sends it. None goes from here before `until`. */
  cancelProbe(until: number): void {
    this.#probing = false;
    this.#probeElsewhereUntil = until;
  }

  /**
   * Takes the state another replica's breaker of the same channel entered (docs/deploying.md, "Running several
   * replicas"): open until its `retryAt`, or closed by its successful probe. Returns the state
   * entered when this breaker's changed, else null.
   */
  follow(state: 'open' | 'closed', openedAt: number | null, retryAt: number | null): BreakerState | null {
    if (state === 'open') {
      if (retryAt === null) return null;
      const was = this.state;
      if (was === 'open' && this.retryAt !== null && this.retryAt >= retryAt) return null;
      this.state = 'open';
      this.openedAt = openedAt;
      this.retryAt = retryAt;
      return was === 'open' ? null : 'open';
    }
    if (this.state === 'closed') return null;
    this.state = 'closed';
    this.consecutive = 0;
    this.openedAt = this.retryAt = null;
    this.#buckets = [];
    return 'closed';
  }

  /** Records how an admitted call ended; returns the state entered when it changed, else null. */
  record(policy: BreakerPolicy, health: Health, now: number, probe: boolean): BreakerState | null {
    if (probe) this.#probing = false;
    if (!policy.enabled) return null;
    if (health === 'neutral') return null;
    this.#count(policy, health === 'failure', now);
    if (health === 'success') {
      this.consecutive = 0;
      if (this.state === 'closed') return null;
      // A success closes only through the probe; a call admitted before the breaker opened says less.
      if (!probe) return null;
      this.state = 'closed';
      this.openedAt = this.retryAt = null;
      this.#buckets = [];
      return 'closed';
    }
    this.consecutive++;
    if (this.state === 'half_open' && !probe) return null;
    if (this.state === 'open') return null;
    if (this.state === 'half_open' || this.consecutive >= policy.consecutiveFailures || this.#rateTripped(policy, now)) {
      this.state = 'open';
      this.openedAt = now;
      this.retryAt = now + policy.cooldownMs;
      return 'open';
    }
    return null;
  }

  /** Calls and failures in the failure-rate window. */
  window(policy: BreakerPolicy, now: number): { calls: number; failures: number } {
    const windowMs = policy.failureRate?.windowMs ?? 0;
    let calls = 0;
    let failures = 0;
    for (const [start, c, f] of this.#buckets) {
      if (start + windowMs / BUCKETS > now - windowMs) {
        calls += c;
        failures += f;
      }
    }
    return { calls, failures };
  }

  #count(policy: BreakerPolicy, failed: boolean, now: number): void {
    if (!policy.failureRate) return;
    const width = policy.failureRate.windowMs / BUCKETS;
    const start = now - (now % width);
    let last = this.#buckets[this.#buckets.length - 1];
    if (!last || last[0] !== start) {
      last = [start, 0, 0];
      this.#buckets.push(last);
      while (this.#buckets.length > BUCKETS + 1) this.#buckets.shift();
    }
    last[1]++;
    if (failed) last[2]++;
  }

  #rateTripped(policy: BreakerPolicy, now: number): boolean {
    const rate = policy.failureRate;
    if (!rate) return false;
    const { calls, failures } = this.window(policy, now);
    return calls >= rate.minRequests && failures / calls >= rate.threshold;
  }
}
