import type { Logger } from 'pino';
import type { CompiledPrice, CompiledPrices } from '../config/snapshot.js';
import type { PerSecondPricing } from '../store/store.js';

/**
 * What a request costs (docs/tokens-and-quota.md, "Quota, prices and the ledger"), from channels.yaml `prices`: the
 * units it holds when it is accepted and, for a per-second price, the terms its settlement follows.
 * Computed once per request from the snapshot, the public model and the body, before any vendor
 * call; the channel that serves it plays no part.
 */

/** A request's price. */
export interface Quote {
  /** Units held when the request is accepted: a whole number ≥ 0. */
  readonly price: number;
  /** Per-second prices: how settlement recomputes the charge from the seconds the vendor reports. */
  readonly pricing: PerSecondPricing | null;
}

/** Longest a request is priced for; a larger figure is clamped (bodies are bounded well below it). */
const MAX_SECONDS = 86_400;
/** The largest price: far above any real one, well inside SQLite integers. */
const MAX_PRICE = 1_000_000_000;

/** The price entry of a public model: its exact name, else the longest pattern; null: `prices.default`. */
export function priceOf(prices: CompiledPrices, model: string): CompiledPrice | null {
  const exact = prices.exact.get(model);
  if (exact) return exact;
  for (const { prefix, price } of prices.prefixes) if (model.startsWith(prefix)) return price;
  return null;
}

/**
 * The price of a request. An expression that fails (or runs out of time) on a valid request does
 * not fail the request: the seconds fall back to `default_seconds`, the factor to 1, and a warning
 * names the expression.
 */
export async function quote(prices: CompiledPrices, model: string, body: unknown, log?: Logger): Promise<Quote> {
  const p = priceOf(prices, model);
  if (!p) return { price: prices.default, pricing: null };
  const input = { body: body ?? null, model };
  const factor = p.resolution ? await factorOf(p, p.resolution, input, log) : 1;
  if (!p.perSecond) return { price: units(p.base + p.perRequest * factor), pricing: null };
  const pricing: PerSecondPricing = { base: p.base, perSecond: p.perSecond.rate, factor };
  return { price: chargeFor(pricing, await secondsOf(p, p.perSecond, input, log)), pricing };
}

/** Units a per-second price charges for `seconds`: ceil(base + perSecond × seconds × factor). */
export function chargeFor(pricing: PerSecondPricing, seconds: number): number {
  return units(pricing.base + pricing.perSecond * Math.min(seconds, MAX_SECONDS) * pricing.factor);
}

/** Rounds up to whole units; to a millionth first, so 0.1 × 30 is 3 and not 4. */
function units(x: number): number {
  if (!Number.isFinite(x) || x <= 0) return 0;
  return Math.min(MAX_PRICE, Math.ceil(Math.round(x * 1e6) / 1e6));
}

/** Seconds as a number: a finite number ≥ 0, or a string of digits (multipart fields and string `seconds` send "8"). */
export function asSeconds(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? v : null;
  if (typeof v === 'string' && /^[0-9]{1,9}(\.[0-9]{1,6})?$/.test(v.trim())) return Number(v.trim());
  return null;
}

type Input = { body: unknown; model: string };

async function secondsOf(p: CompiledPrice, per: NonNullable<CompiledPrice['perSecond']>, input: Input, log?: Logger): Promise<number> {
  if (!per.seconds) return secondsAsked(input.body) ?? per.defaultSeconds;
  let out: unknown;
  try {
    out = await per.seconds.evaluate(input);
  } catch (err) {
    warn(log, p, 'seconds', err, `default_seconds (${per.defaultSeconds})`);
    return per.defaultSeconds;
  }
  // Nothing (the field was not sent) is the ordinary case for the default; anything else odd is worth a line.
  if (out === undefined || out === null) return per.defaultSeconds;
  const seconds = asSeconds(out);
  if (seconds === null)
    warn(log, p, 'seconds', `gave ${JSON.stringify(out)?.slice(0, 100)}, not a number of seconds`, `default_seconds (${per.defaultSeconds})`);
  return seconds ?? per.defaultSeconds;
}

/** The built-in `seconds`: the largest of body.seconds, body.duration and body.metadata.duration. */
function secondsAsked(body: unknown): number | null {
  const b = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const m = b.metadata !== null && typeof b.metadata === 'object' ? (b.metadata as Record<string, unknown>) : {};
  const found = [b.seconds, b.duration, m.duration].map(asSeconds).filter((s): s is number => s !== null);
  return found.length > 0 ? Math.max(...found) : null;
}

async function factorOf(p: CompiledPrice, r: NonNullable<CompiledPrice['resolution']>, input: Input, log?: Logger): Promise<number> {
  let value: unknown;
  try {
    value = await r.of.evaluate(input);
  } catch (err) {
    warn(log, p, 'resolution', err, 'factor 1');
    return 1;
  }
  return typeof value === 'string' || typeof value === 'number' ? (r.factors.get(String(value)) ?? 1) : 1;
}

function warn(log: Logger | undefined, p: CompiledPrice, field: string, err: unknown, fallback: string): void {
  const why = err instanceof Error ? err.message : String(err);
  log?.warn({ price: p.name, where: p.where, field }, `the ${field} expression of the price of ${p.name} (${p.where}) failed: ${why}; priced with ${fallback}`);
}
