import { setTimeout as delay } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Snapshot } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Health } from './breaker.js';
import type { ChannelChoice } from './rank-channels.js';
import type { RoutingState, Skip, Slot } from './routing-state.js';
import type { TokenRecord } from '../store/store.js';

/**
 * How one vendor call ended (docs/routing.md, "Retries and fallback"):
 * `unsent` never reached the vendor; `rate_limited` a 429 or a rate-limit refusal; `refused` a
 * complete error answer that is the vendor's or the channel's fault (5xx, credentials, overload);
 * `rejected` a complete answer that blames the request (the same request fails anywhere);
 * `unknown` the vendor may have received it and no answer came (reset or timeout after sending, an
 * unreadable 2xx); `fault` a failure of ours (a mapping, the store), no vendor's.
 */
export type Outcome = 'unsent' | 'rate_limited' | 'refused' | 'rejected' | 'unknown' | 'fault';

const CHANNEL_SIDE = new Set(['bad_response', 'upstream_unavailable', 'upstream_timeout', 'internal_error']);

/** Classifies a failed vendor call from what its error says about how far the call got. */
export function outcomeOf(err: unknown): Outcome {
  const upstream = err instanceof GatewayError ? err.details.upstream : undefined;
  if (!upstream) return 'fault';
  if (upstream.phase !== 'answered') return upstream.phase;
  const e = err as GatewayError;
  if (e.code === 'too_many_requests' || upstream.status === 429) return 'rate_limited';
  if ((upstream.status ?? 0) >= 500 || CHANNEL_SIDE.has(e.code)) return 'refused';
  return 'rejected';
}

/**
 * Whether a failed call may be sent to the next channel. Anything the vendor certainly did not
 * take may; a call that may have been received is sent again only when it creates nothing (a
 * synchronous call), so a task is never created twice and no client pays for two.
 */
export function mayRetry(outcome: Outcome, creates: boolean): boolean {
  switch (outcome) {
    case 'unsent':
    case 'rate_limited':
    case 'refused':
      return true;
    case 'unknown':
      return !creates;
    case 'rejected':
    case 'fault':
      return false;
  }
}

/**
 * What a failed call says about the channel's health, for its breaker. A 2xx our mapping could not
 * translate says nothing against the vendor: five such answers once opened a breaker on a vendor
 * that did its job.
 */
function healthOf(outcome: Outcome, err: unknown): Health {
  if (err instanceof GatewayError && err.details.upstream?.blame === 'mapping') return 'neutral';
  return outcome === 'rejected' ? 'success' : outcome === 'rate_limited' || outcome === 'fault' ? 'neutral' : 'failure';
}

/** What the fallback loop needs from the process. */
export interface AttemptDeps {
  readonly routing: RoutingState;
  readonly metrics: Metrics;
  readonly random?: () => number;
}

/** One attempt's handle: `accepted()` says the vendor took the work, so no later failure is retried. */
export interface Attempt {
  accepted(): void;
}

const tooMany = (message: string, retryAfter: number) => new GatewayError('too_many_requests', message, { retryAfter });

/** What fallback reads of the request: its snapshot, its token's group, and where to log; `facts.channel` is told each channel called. */
export interface FallbackRequest {
  readonly requestId: string;
  readonly snapshot: Snapshot;
  readonly token: Pick<TokenRecord, 'group'>;
  readonly log: Logger;
  readonly facts?: { channel: string | null };
  /** The client's answer: a client that leaves while its request waits in a line gives its place up. */
  readonly res?: Pick<ServerResponse, 'once' | 'off'>;
}

/** An abort signal for the time a request waits in a line: aborted when its client goes away. Made only for a wait, not for every request. */
function whileConnected(res: FallbackRequest['res']): { signal?: AbortSignal; done(): void } {
  if (!res) return { done: () => undefined };
  const gone = new AbortController();
  const abort = () => gone.abort();
  res.once('close', abort);
  return { signal: gone.signal, done: () => res.off('close', abort) };
}

/** The 429 of a line that had no place, or whose wait ran out. */
function queueRefusal(what: string, refused: 'full' | 'timeout', waitedMs: number, retryAfterS: number): GatewayError {
  const why = refused === 'full' ? 'its queue is full' : `no slot came free in ${Math.round(waitedMs)} ms`;
  return tooMany(`${what} is at its max_concurrency and ${why}; retry later`, retryAfterS);
}

/**
 * Runs `call` on the ranked channels until one succeeds: a channel whose breaker is open or that
 * is at its `max_concurrency` is passed over without a call; a failed call moves on to the next
 * channel when `mayRetry` allows, after a jittered backoff, within `routing.max_attempts` calls and
 * `routing.deadline_ms`. Every call holds a slot of its channel and reports its outcome to the
 * channel's breaker; the whole request holds a slot of the token's group. When nothing was served:
 * every channel saturated or rate limited → 429 (shape B) with Retry-After; every channel's
 * breaker open → 503 with Retry-After; otherwise the last call's error.
 */
export async function withFallback<T>(
  ctx: FallbackRequest,
  candidates: readonly ChannelChoice[],
  deps: AttemptDeps,
  /** Whether a call on this channel creates something at the vendor (a task). */
  creates: (choice: ChannelChoice) => boolean,
  call: (choice: ChannelChoice, attempt: Attempt) => Promise<T>,
): Promise<T> {
  const { snapshot, token } = ctx;
  const policy = snapshot.retry;
  const started = performance.now();
  const deadline = started + policy.deadlineMs;
  // Awaited only where a limit is counted: an await is a few hundred bytes of heap (issue 41).
  const entered = deps.routing.enterGroupNow(snapshot, token.group);
  let leaveGroup = entered instanceof Promise ? await entered : entered;
  if (!leaveGroup) {
    // The group is full: wait in its line (groups.<name>.queue), or 429 when it has no place.
    const conn = whileConnected(ctx.res);
    const waited = await deps.routing.enterGroupWaiting(snapshot, token.group, deadline, conn.signal).finally(conn.done);
    if ('refused' in waited) {
      deps.metrics.shed.inc({ reason: 'group_saturated' });
      throw queueRefusal(`the group ${token.group}`, waited.refused, waited.waitedMs, policy.retryAfterS);
    }
    leaveGroup = waited.slot;
  }
  /** Why nothing served so far; made at the first channel that did not (most requests are served at once). */
  let shortfall: Shortfall | null = null;
  const why = () => (shortfall ??= new Shortfall());
  let attempts = 0;
  let backoffDue = false;
  /** Channels called already: a pass after a wait in line does not call them again (the first apart: most requests call one). */
  let calledFirst: string | null = null;
  let calledMore: string[] | null = null;
  /** A slot a line gave this request, taken before the pass that uses it. */
  let given: { choice: ChannelChoice; slot: Slot | Skip } | null = null;
  try {
    for (;;) {
      /** The best channel passed over because it was full: where to wait if nothing serves. */
      let full: ChannelChoice | null = null;
      const first = given?.choice;
      const order: readonly ChannelChoice[] = first ? [first, ...candidates.filter((c) => c !== first)] : candidates;
      for (const choice of order) {
        let slot: Slot | Skip;
        if (given && given.choice === choice) {
          // The slot a line gave: first in this pass, with no backoff (the wait in line stood for it).
          slot = given.slot;
          given = null;
        } else {
          if (choice.channel.name === calledFirst || calledMore?.includes(choice.channel.name)) continue;
          if (attempts >= policy.maxAttempts) break;
          if (attempts > 0) {
            const left = deadline - performance.now();
            if (left <= 0) break;
            // One wait per failed call, before the next call (a channel passed over costs none).
            if (backoffDue) {
              backoffDue = false;
              const wait = backoff(policy, attempts, deps.random ?? Math.random);
              // A call that could only start after the deadline is not waited for.
              if (wait >= left) break;
              if (wait > 0) await delay(wait);
            }
          }
          const taken = deps.routing.enterNow(choice.channel);
          slot = taken instanceof Promise ? await taken : taken;
        }
        if ('reason' in slot) {
          why().passedOver(slot);
          deps.metrics.shed.inc({ reason: slot.reason === 'saturated' ? 'channel_saturated' : 'breaker_open' });
          if (slot.reason === 'saturated') full ??= choice;
          continue;
        }
        attempts++;
        if (calledFirst === null) calledFirst = choice.channel.name;
        else (calledMore ??= []).push(choice.channel.name);
        if (ctx.facts) ctx.facts.channel = choice.channel.name;
        let accepted = false;
        // Timed by hand rather than with startTimer, whose closures and label merge are half a KB a call (issue 41).
        const callStarted = performance.now();
        // How the call ended, for its duration's label: a fast refusal and a slow success are not one latency.
        let ended = 'ok';
        try {
          const out = await call(choice, { accepted: () => void (accepted = true) });
          slot.done('success');
          deps.metrics.upstreamAttempts.count({ channel: choice.channel.name, outcome: 'ok' });
          return out;
        } catch (err) {
          const outcome: Outcome = outcomeOf(err);
          ended = accepted ? 'accepted' : outcome;
          const code = err instanceof GatewayError ? err.code : 'internal_error';
          // After acceptance the channel did its part: a later failure (the task failed, a look timed
          // out) says nothing of its health, and must reach the client as it is.
          slot.done(accepted ? 'success' : healthOf(outcome, err), { code, message: err instanceof Error ? err.message : String(err) });
          deps.metrics.upstreamAttempts.count({ channel: choice.channel.name, outcome: accepted ? 'accepted' : outcome });
          if (err instanceof GatewayError) err.details.channel ??= choice.channel.name;
          if (accepted || !mayRetry(outcome, creates(choice))) throw err;
          why().failed(err, outcome);
          backoffDue = true;
          deps.metrics.fallbacks.inc({ reason: outcome });
          ctx.log.info({ req_id: ctx.requestId, channel: choice.channel.name, outcome, code }, 'vendor call failed; the next channel may serve it');
        } finally {
          deps.metrics.upstreamSeconds.record({ channel: choice.channel.name, outcome: ended }, (performance.now() - callStarted) / 1000);
        }
      }
      // Nothing served. A channel that was only full may still: wait in its line (channels[].queue),
      // then go round again with the slot it gives, within the attempts and the deadline.
      if (!full || attempts >= policy.maxAttempts) break;
      const conn = whileConnected(ctx.res);
      const waited = await deps.routing.enterWaiting(full.channel, deadline, conn.signal).finally(conn.done);
      if ('refused' in waited) {
        why().queueRefused(queueRefusal(`the channel ${full.channel.name}`, waited.refused, waited.waitedMs, policy.retryAfterS));
        break;
      }
      given = { choice: full, slot: waited.slot };
    }
  } finally {
    leaveGroup();
  }
  throw why().error(attempts, deps.routing.now(), policy.retryAfterS);
}

/** The jittered exponential wait before call number `attempts + 1`. */
function backoff(policy: Snapshot['retry'], attempts: number, random: () => number): number {
  const base = Math.min(policy.backoffMaxMs, policy.backoffMs * 2 ** (attempts - 1));
  return Math.round(base * (0.5 + 0.5 * random()));
}

/** Why nothing served: channels passed over (saturated, breaker open) and calls that failed, for load or otherwise (also the admin playground's, when every channel would be passed over). */
export class Shortfall {
  #saturated = 0;
  #openUntil = Infinity;
  #failedOtherwise = 0;
  #vendorRetryAfter: number | undefined;
  #last: unknown = null;
  #queue: GatewayError | null = null;

  passedOver(skip: Skip): void {
    if (skip.reason === 'saturated') this.#saturated++;
    else this.#openUntil = Math.min(this.#openUntil, skip.retryAt);
  }

  /** The line of a full channel had no place, or its wait ran out: the 429 to give when nothing else failed. */
  queueRefused(err: GatewayError): void {
    this.#queue = err;
  }

  failed(err: unknown, outcome: Outcome): void {
    this.#last = err;
    if (outcome === 'rate_limited') {
      const ra = (err as GatewayError).details.retryAfter;
      if (ra !== undefined) this.#vendorRetryAfter = Math.min(this.#vendorRetryAfter ?? Infinity, ra);
    } else this.#failedOtherwise++;
  }

  /**
   * The client's error: every channel's breaker open → 503 with Retry-After; every channel that
   * could be asked saturated or rate limited → 429; otherwise the last call's error.
   */
  error(attempts: number, now: number, retryAfterS: number): unknown {
    if (attempts === 0 && this.#saturated === 0) {
      return new GatewayError('upstream_unavailable', 'every channel for this model is failing and taken out for a cool-down; retry later', {
        retryAfter: Math.max(1, Math.ceil((this.#openUntil - now) / 1000)),
      });
    }
    if (this.#failedOtherwise > 0) return this.#last;
    const retryAfter = this.#vendorRetryAfter ?? retryAfterS;
    // The vendor's own words, when the last call was a plain rate limit; ours when channels were full.
    const last = this.#last;
    if (last instanceof GatewayError && last.code === 'too_many_requests') {
      last.details.retryAfter = retryAfter;
      return last;
    }
    if (this.#queue && this.#vendorRetryAfter === undefined) return this.#queue;
    return tooMany('the upstream channels for this model are saturated; retry later', retryAfter);
  }
}
