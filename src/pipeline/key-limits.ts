import { GatewayError } from '../errors/gateway-error.js';
import { type Admission, groupSubject, type KeyLimiter } from '../live/key-limiter.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Next } from './compose.js';
import type { RequestContext } from './context.js';

/**
 * A wait as OpenAI writes it in `x-ratelimit-reset-requests` (Go's duration form: `20ms`, `1s`,
 * `1.5s`, `6m0s`, `1h0m0s`), so clients that read OpenAI's headers read ours.
 */
export function resetText(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) return '0s';
  if (total < 1_000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = (total % 60_000) / 1_000;
  const sec = `${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, '')}s`;
  return h > 0 ? `${h}h${m}m${sec}` : m > 0 ? `${m}m${sec}` : sec;
}

/** The answer the headers describe when both limits admitted: the one with fewer requests left (the key's on a tie). */
function tighter(key: Admission | null, group: Admission | null): Admission {
  if (key === null) return group as Admission;
  if (group === null) return key;
  return group.remaining < key.remaining ? group : key;
}

/**
 * The `limitKey` stage: the key's rate limits (`rpm_limit`, `max_parallel`), read from the token
 * `authenticate` found (no store call), then those its group shares (channels.yaml
 * `groups.<name>.limits`, from the request's snapshot), both checked by the limiter
 * (live/key-limiter.ts). The group's are checked only once the key's admitted, and a refusal by the
 * group gives back what the key's took, so a refused request counts against neither. A key with a
 * limit, or in a group with one, gets the `x-ratelimit-*` headers on every answer from here on,
 * error or not (of the tighter of the two); over a limit, 429 too_many_requests with `Retry-After`.
 * The in-flight slots are given back when the answer ends, however it ends (written, streamed,
 * downloaded, or the client went away).
 */
export function limitKey<C extends RequestContext>(ctx: C, next: Next<C>, deps: { readonly keyLimits: KeyLimiter; readonly metrics: Metrics }): Promise<void> {
  // A key and group without limits go on at once, with no promise of this stage's own (issue 41).
  if ((ctx.token.rpmLimit ?? null) === null && (ctx.token.maxParallel ?? null) === null && !ctx.snapshot.groupLimits.has(ctx.token.group)) return next(ctx);
  return limited(ctx, next, deps);
}

async function limited<C extends RequestContext>(ctx: C, next: Next<C>, deps: { readonly keyLimits: KeyLimiter; readonly metrics: Metrics }): Promise<void> {
  const rpm = ctx.token.rpmLimit ?? null;
  const maxParallel = ctx.token.maxParallel ?? null;
  const groupLimits = ctx.snapshot.groupLimits.get(ctx.token.group) ?? null;
  const own = rpm === null && maxParallel === null ? null : await deps.keyLimits.admit(ctx.token.id, { rpm, maxParallel });
  if (own !== null && !own.admitted) refuse(ctx, own, deps.metrics, 'key', 'this API key is');
  const shared = groupLimits === null ? null : await deps.keyLimits.admit(groupSubject(ctx.token.group), groupLimits);
  if (shared !== null && !shared.admitted) {
    if (own?.admitted) own.refund();
    refuse(ctx, shared, deps.metrics, 'group', `this API key's group ${ctx.token.group} is`);
  }
  if (own === null && shared === null) return next(ctx);
  const a = tighter(own, shared);
  setHeaders(ctx.res, a);
  const release = () => {
    if (own?.admitted) own.release();
    if (shared?.admitted) shared.release();
  };
  if (ctx.res.closed) release();
  else ctx.res.once('close', release);
  return next(ctx);
}

function setHeaders(res: RequestContext['res'], a: Admission): void {
  res.setHeader('x-ratelimit-limit-requests', String(a.limit));
  res.setHeader('x-ratelimit-remaining-requests', String(a.remaining));
  res.setHeader('x-ratelimit-reset-requests', resetText(a.resetMs));
}

/** Writes the refusing limit's headers, counts the refusal (by limit, whose, and the key's group) and throws its 429. */
function refuse(ctx: RequestContext, a: Extract<Admission, { admitted: false }>, metrics: Metrics, scope: 'key' | 'group', who: string): never {
  setHeaders(ctx.res, a);
  metrics.rateLimited.inc({ limit: a.refusedBy, scope, group: ctx.token.group });
  const what = a.refusedBy === 'rpm' ? `${a.limit} requests per minute` : `${a.limit} requests in flight at once`;
  throw new GatewayError('too_many_requests', `${who} limited to ${what}; retry after Retry-After`, { retryAfter: a.retryAfterMs / 1_000 });
}
