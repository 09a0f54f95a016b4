import { GatewayError } from '../errors/gateway-error.js';
import type { KeyLimiter } from '../live/key-limiter.js';
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

/**
 * The `limitKey` stage: the key's rate limits (`rpm_limit`, `max_parallel`), read from the token
 * `authenticate` found (no store call), checked by the limiter (live/key-limiter.ts). A key with a
 * limit gets the `x-ratelimit-*` headers on every answer from here on, error or not; over a limit,
 * 429 too_many_requests with `Retry-After`. The in-flight slot is given back when the answer ends,
 * however it ends (written, streamed, downloaded, or the client went away).
 */
export async function limitKey<C extends RequestContext>(
  ctx: C,
  next: Next<C>,
  deps: { readonly keyLimits: KeyLimiter; readonly metrics: Metrics },
): Promise<void> {
  const rpm = ctx.token.rpmLimit ?? null;
  const maxParallel = ctx.token.maxParallel ?? null;
  if (rpm === null && maxParallel === null) return next(ctx);
  const a = await deps.keyLimits.admit(ctx.token.id, { rpm, maxParallel });
  const res = ctx.res;
  res.setHeader('x-ratelimit-limit-requests', String(a.limit));
  res.setHeader('x-ratelimit-remaining-requests', String(a.remaining));
  res.setHeader('x-ratelimit-reset-requests', resetText(a.resetMs));
  if (!a.admitted) {
    deps.metrics.rateLimited.inc({ limit: a.refusedBy });
    const what = a.refusedBy === 'rpm' ? `${a.limit} requests per minute` : `${a.limit} requests in flight at once`;
    throw new GatewayError('too_many_requests', `this API key is limited to ${what}; retry after Retry-After`, { retryAfter: a.retryAfterMs / 1_000 });
  }
  if (res.closed) a.release();
  else res.once('close', a.release);
  return next(ctx);
}
