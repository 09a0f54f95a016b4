import { readsModel, routeMayServePrefix, type RouteOutline } from './compile-route-draft.js';
import { routeServesModel } from './lookups.js';
import { type ConfigIssue, errorsSince } from './issues.js';
import { compileMappingAt } from './compile-mapping.js';
import type { CompiledPrice, CompiledPrices } from './snapshot.js';
import type { YamlSource } from './yaml-source.js';

/** A price as channels.schema.json admits it: units per request, or the object form. */
type RawPrice =
  | number
  | {
      base?: number;
      per_request?: number;
      per_second?: number;
      seconds?: string;
      default_seconds?: number;
      resolution?: string;
      factors?: Record<string, number>;
    };

/** Units of a request whose model has no price of its own, when `prices.default` is not set. */
export const DEFAULT_PRICE = 1;

/**
 * Compiles channels.yaml `prices` (docs/tokens-and-quota.md, "Quota, prices and the ledger"): each model's price with
 * its JSONata expressions, exact names apart from patterns (longest first). A name no route serves,
 * a price that says neither per request nor per second (or both), and an expression that does not
 * compile are errors at their line.
 */
export function compilePrices(src: YamlSource, routes: readonly RouteOutline[], issues: ConfigIssue[]): CompiledPrices {
  const raw = (src.value as { prices?: { default?: number; models?: Record<string, RawPrice> } }).prices ?? {};
  const modelRoutes = routes.filter(readsModel);
  const exact = new Map<string, CompiledPrice>();
  const prefixes: { prefix: string; price: CompiledPrice }[] = [];
  for (const [name, p] of Object.entries(raw.models ?? {})) {
    const at = (...rest: string[]) => ['prices', 'models', name, ...rest];
    const pattern = name.endsWith('*');
    const prefix = pattern ? name.slice(0, -1) : name;
    if (pattern && (prefix === '' || prefix.includes('*'))) {
      issues.push(src.issue(at(), `price pattern "${name}" must be a model name prefix followed by one *; prices.default prices every other model`));
      continue;
    }
    const served = pattern ? modelRoutes.some((r) => routeMayServePrefix(r, prefix)) : modelRoutes.some((r) => routeServesModel(r, name));
    if (!served) issues.push(src.issue(at(), `model "${name}" is priced but not served by any route of routes.yaml`));
    const price = compilePrice(src, name, p, at, issues);
    if (!price) continue;
    if (pattern) prefixes.push({ prefix, price });
    else exact.set(name, price);
  }
  prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
  return Object.freeze({ default: raw.default ?? DEFAULT_PRICE, exact, prefixes: Object.freeze(prefixes) });
}

/** One model's price; null when it is wrong (the problem is an issue). */
function compilePrice(src: YamlSource, name: string, p: RawPrice, at: (...rest: string[]) => string[], issues: ConfigIssue[]): CompiledPrice | null {
  // The merged source knows which file each price came from: an issue there names it.
  const here = src.issue(at(), '');
  const where = `${here.file}:${here.line}`;
  if (typeof p === 'number') {
    if (Number.isInteger(p)) return Object.freeze({ name, where, base: 0, perRequest: p, perSecond: null, resolution: null });
    issues.push(
      src.issue(at(), `the price of ${name} must be a whole number of units (${p} is not); fractions are for per_request and per_second, rounded up`),
    );
    return null;
  }
  const before = issues.length;
  if ((p.per_request === undefined) === (p.per_second === undefined)) {
    issues.push(src.issue(at(), `the price of ${name} must give per_request or per_second (one of them)`));
  }
  const seconds = p.seconds === undefined ? null : compileMappingAt(src, p.seconds, at('seconds'), issues);
  const of = p.resolution === undefined ? null : compileMappingAt(src, p.resolution, at('resolution'), issues);
  if (errorsSince(issues, before)) return null;
  return Object.freeze({
    name,
    where,
    base: p.base ?? 0,
    perRequest: p.per_request ?? 0,
    // The schema asks for default_seconds with per_second.
    perSecond:
      p.per_second === undefined || p.default_seconds === undefined ? null : Object.freeze({ rate: p.per_second, seconds, defaultSeconds: p.default_seconds }),
    resolution: of ? Object.freeze({ of, factors: new Map(Object.entries(p.factors ?? {})) }) : null,
  });
}
