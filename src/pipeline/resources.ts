import type { CompiledRouteResource, ResourceReference } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Mapping } from '../mapping/mapping.js';
import type { ChannelChoice } from '../routing/rank-channels.js';
import { dottedPath } from '../schema/describe-error.js';
import type { Store } from '../store/store.js';
import type { Next } from './compose.js';
import type { RequestContext } from './context.js';
import { requiredString, type ValueSource } from './request-value.js';

/** A resource a request names: which, and where in the request. */
interface Named {
  readonly kind: string;
  readonly id: string;
  /** `error.param` when it is refused. */
  readonly param: string;
  /** How the client wrote it, for messages. */
  readonly written: string;
}

/** The `checkResources` stage: what the request names must be the caller's (`ownedResources`); the request then goes where it is held. */
export function checkResources<C extends RequestContext>(ctx: C, next: Next<C>, deps: { readonly store: Store }): Promise<void> {
  const { route } = ctx;
  if (!route.resource?.id && route.references.length === 0) return next(ctx);
  return ownedThenNext(ctx, next, deps.store);
}

async function ownedThenNext<C extends RequestContext>(ctx: C, next: Next<C>, store: Store): Promise<void> {
  ctx.holder = await ownedResources(ctx, ctx.body, store);
  return next(ctx);
}

/**
 * Resources clients own besides tasks (docs/tokens-and-quota.md, "Authentication, tokens and quota"), checked before
 * any vendor call: the one a route reads (`resource.id`) and every one the body references
 * (`references`) must be the caller's. Another token's is refused exactly like an unknown one: a
 * read is `not_found`, a reference `invalid_request`. Returns the channel that holds them, where
 * the request must go, or null when the request names none.
 */
async function ownedResources(ctx: RequestContext, body: unknown, store: Store): Promise<string | null> {
  const { route } = ctx;
  const read = route.resource?.id ? readId(ctx, route.resource, route.resource.id, body) : null;
  const named = [...(read ? [read] : []), ...referencesIn(body, route.references)];
  if (named.length === 0) return null;
  const holders = new Set<string>();
  for (const kind of new Set(named.map((n) => n.kind))) {
    const wanted = named.filter((n) => n.kind === kind);
    const found = new Map(
      (
        await store.getResources(
          kind,
          wanted.map((n) => n.id),
        )
      ).map((r) => [r.id, r]),
    );
    for (const n of wanted) {
      const r = found.get(n.id);
      if (!r || r.tokenId !== ctx.token.id) {
        throw n === read
          ? new GatewayError('not_found', `no ${kind} has this id`, { param: n.param })
          : new GatewayError('invalid_request', `${n.written} names no ${kind} of this API key`, { param: n.param });
      }
      holders.add(r.channel);
    }
  }
  if (holders.size > 1) {
    throw new GatewayError(
      'invalid_request',
      `the ${named.map((n) => n.written).join(', ')} were made on different upstream accounts and cannot be used in one request`,
    );
  }
  // Every name was found with its holder, or refused: there is exactly one.
  return holders.values().next().value ?? null;
}

/** The id a reading route names: path, query or body, without its prefix. */
function readId(ctx: RequestContext, res: CompiledRouteResource, where: ValueSource, body: unknown): Named {
  const value = requiredString(ctx, where, body);
  const id = res.prefix && value.startsWith(res.prefix) ? value.slice(res.prefix.length) : value;
  return { kind: res.kind, id, param: where.name, written: value };
}

/** Every string of the body that starts with a reference prefix (iterative: a body's depth is bounded, its size is not). */
function referencesIn(body: unknown, refs: readonly ResourceReference[]): Named[] {
  if (refs.length === 0) return [];
  const out: Named[] = [];
  const seen = new Set<string>();
  const stack: [unknown, (string | number)[]][] = [[body, []]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, path] = top;
    if (typeof v === 'string') {
      for (const ref of refs) {
        if (!v.startsWith(ref.prefix) || seen.has(`${ref.kind}\u0000${v}`)) continue;
        seen.add(`${ref.kind}\u0000${v}`);
        out.push({ kind: ref.kind, id: v.slice(ref.prefix.length), param: dottedPath(path), written: v.slice(0, 200) });
      }
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => {
        stack.push([item, [...path, i]]);
      });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) stack.push([item, [...path, k]]);
    }
  }
  return out;
}

/**
 * The ranked channels narrowed to the one that holds the request's resources: an asset lives in
 * one vendor account, and only the channel of that account can use it.
 */
export function onHolder(ctx: RequestContext, candidates: readonly ChannelChoice[], holder: string | null): readonly ChannelChoice[] {
  if (holder === null) return candidates;
  const there = candidates.filter((c) => c.channel.name === holder);
  if (there.length > 0) return there;
  if (!ctx.snapshot.channelsByName.has(holder)) {
    throw new GatewayError('upstream_unavailable', 'the channel that holds what this request names is no longer configured');
  }
  throw new GatewayError('invalid_request', 'what this request names is held by a channel that does not serve this model for this API key');
}

/**
 * The `recordCreated` stage: records the resource a creating route's call made (`resource.creates`,
 * over the public answer) as the caller's, on the channel that served it, before the answer leaves.
 */
export function recordCreated<C extends RequestContext>(ctx: C, next: Next<C>, deps: { readonly store: Store }): Promise<void> {
  const res = ctx.route.resource;
  if (!res?.creates) return next(ctx);
  return recordThenNext(ctx, next, res.kind, res.creates, deps.store);
}

async function recordThenNext<C extends RequestContext>(ctx: C, next: Next<C>, kind: string, creates: Mapping, store: Store): Promise<void> {
  const { answer, served: channel } = ctx;
  let id: unknown;
  try {
    id = await creates.evaluate({ answer });
  } catch (err) {
    throw new GatewayError('internal_error', `the id of the new ${kind} could not be read from the answer`, { cause: err });
  }
  if (typeof id !== 'string' || id === '') throw new GatewayError('bad_response', `the upstream's answer carries no id for the new ${kind}`, { channel });
  const mine = await store.putResource({ kind, id, tokenId: ctx.token.id, channel, vendorId: id, createdAt: ctx.now.getTime() });
  if (!mine) throw new GatewayError('bad_response', `the upstream gave the new ${kind} an id that is already in use`, { channel });
  return next(ctx);
}
