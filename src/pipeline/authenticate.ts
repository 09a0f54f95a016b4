import type { IncomingHttpHeaders } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { KeySource } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Store, TokenRecord } from '../store/store.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import { expiryView, hasExpired } from '../tokens/expiry.js';
import { checkClientAddress } from '../tokens/ip-allow.js';
import { hashKey } from '../tokens/keys.js';
import type { LastUsed } from '../tokens/last-used.js';
import { replacedKeyRefusal } from '../tokens/rotation.js';
import type { Next } from './compose.js';
import type { RequestContext } from './context.js';

const MAX_KEY_LENGTH = 512;
/**
 * How long past its time a cached lookup of a valid key still serves while the store cannot be
 * asked (docs/deploying.md, "When something fails"): a request that needs no store (the model list) keeps
 * working through an outage of up to this long; every other one fails at its first store call anyway.
 */
export const STALE_WHILE_AWAY_MS = 10 * 60_000;

/** How a client is told to send its key, for the error that says none came. */
function form(source: KeySource): string {
  return source.from === 'bearer' ? 'Authorization: Bearer <key>' : source.from === 'header' ? `${source.name}: <key>` : `?${source.name}=<key>`;
}

/** Reads the client's key from the places a route allows (routes.yaml `auth`), in the order it lists them. */
export function extractKey(sources: readonly KeySource[], headers: IncomingHttpHeaders, query: URLSearchParams | null): string | null {
  for (const source of sources) {
    if (source.from === 'bearer') {
      const h = headers.authorization;
      if (h && /^bearer\s+/i.test(h)) return h.replace(/^bearer\s+/i, '').trim();
    } else if (source.from === 'header') {
      const h = headers[source.name];
      if (typeof h === 'string' && h !== '') return h.trim();
    } else {
      const k = query?.get(source.name);
      if (k) return k;
    }
  }
  return null;
}

/**
 * Turns a key into its token. Lookups are cached by key hash for `ttlMs` (unknown keys too, so a
 * flood of bad keys does not reach the store); a disabled or deleted token stops working within
 * that time. Quota is not read from the cache: debits go to the store. While the store cannot be
 * asked, a valid key's lookup keeps serving for up to STALE_WHILE_AWAY_MS past its time. Expiry is
 * compared with `clock` at each request, on the cached record too: a key stops at its instant, not
 * when its lookup runs out. So is the grace of a key a rotation replaced (../tokens/rotation.ts).
 */
export class Authenticator {
  readonly #store: Store;
  /** Null when lookups are not cached (a TTL of 0: lru-cache would read it as "for ever"). */
  readonly #cache: LRUCache<string, { token: TokenRecord | null }> | null;
  readonly #clock: () => number;

  constructor(store: Store, ttlMs = 5_000, clock: () => number = Date.now, max = 10_000) {
    this.#store = store;
    this.#clock = clock;
    // Stale lookups are kept (not deleted when read) for the store's absences.
    this.#cache = ttlMs > 0 ? new LRUCache({ max, ttl: ttlMs, noDeleteOnStaleGet: true }) : null;
  }

  /** Drops what is cached for a key: its token was changed (disabled, rotated, deleted, …). */
  forget(keyHash: string): void {
    this.#cache?.delete(keyHash);
  }

  /** Drops every cached lookup (changes may have been missed while Redis was away). */
  clear(): void {
    this.#cache?.clear();
  }

  /** The token of a request, or invalid_api_key. */
  async authenticate(sources: readonly KeySource[], headers: IncomingHttpHeaders, query: URLSearchParams | null): Promise<TokenRecord> {
    return this.authenticateNow(sources, headers, query);
  }

  /**
   * `authenticate`, giving the token itself when its lookup is cached (most requests): no promise,
   * no await, a few hundred bytes less per request (issue 41). A Promise when the store is asked.
   * Throws at once a refusal it can tell without the store.
   */
  authenticateNow(sources: readonly KeySource[], headers: IncomingHttpHeaders, query: URLSearchParams | null): TokenRecord | Promise<TokenRecord> {
    const key = extractKey(sources, headers, query);
    if (!key) {
      throw new GatewayError('invalid_api_key', `no API key was sent; send it as ${sources.map(form).join(' or ')}`);
    }
    if (key.length > MAX_KEY_LENGTH) throw new GatewayError('invalid_api_key', 'the API key is not valid');
    const hash = hashKey(key);
    const entry = this.#cache?.get(hash);
    if (entry) return this.#valid(entry, hash);
    return this.#lookUp(hash);
  }

  /** The store's lookup of a key not cached (cached then), or the stale one while the store is away. */
  async #lookUp(hash: string): Promise<TokenRecord> {
    let entry: { token: TokenRecord | null };
    try {
      entry = { token: await this.#store.findTokenByHash(hash) };
      this.#cache?.set(hash, entry);
    } catch (err) {
      entry = this.#staleWhileAway(hash, err);
    }
    return this.#valid(entry, hash);
  }

  /** The token of a lookup, if it may be used now; else invalid_api_key. */
  #valid(entry: { token: TokenRecord | null }, hash: string): TokenRecord {
    const token = entry.token;
    if (!token || token.disabled) throw new GatewayError('invalid_api_key', 'the API key is not valid');
    const now = this.#clock();
    const replaced = replacedKeyRefusal(token, hash, now);
    if (replaced) throw new GatewayError('invalid_api_key', replaced);
    if (hasExpired(token.expiresAt, now)) {
      throw new GatewayError('invalid_api_key', `the API key expired at ${expiryView(token.expiresAt)}; ask for a new one, or for its expiry to be moved`);
    }
    return token;
  }

  /** A valid key's lookup past its time, when the store could not be asked; else the store's error again. */
  #staleWhileAway(hash: string, err: unknown): { token: TokenRecord | null } {
    const cache = this.#cache;
    const stale = cache && isStoreUnavailable(err) ? cache.get(hash, { allowStale: true }) : undefined;
    if (!cache || !stale?.token || cache.getRemainingTTL(hash) < -STALE_WHILE_AWAY_MS) throw err;
    return stale;
  }
}

/**
 * The token a request carries before `authenticate` has run: disabled, allowed no model, no quota.
 * A stage that read it out of order could do nothing with it.
 */
export const UNAUTHENTICATED: TokenRecord = Object.freeze({
  id: '',
  name: '',
  keyHash: '',
  group: '',
  models: Object.freeze([]),
  quota: 0,
  used: 0,
  disabled: true,
  createdAt: 0,
});

/**
 * The `authenticate` stage: the caller's token, from the key where the route takes it; otherwise
 * invalid_api_key, or ip_not_allowed from outside the token's allow-list (before its rate limits
 * count the request). A request let through notes the token's use (../tokens/last-used.ts).
 */
export function authenticate<C extends RequestContext>(
  ctx: C,
  next: Next<C>,
  deps: { readonly auth: Authenticator; readonly lastUsed?: LastUsed | null },
): Promise<void> {
  // A cached lookup goes on at once: an await is a few hundred bytes (issue 41).
  const found = deps.auth.authenticateNow(ctx.route.keySources, ctx.req.headers, ctx.search);
  if (found instanceof Promise) return found.then((token) => admitted(ctx, next, deps, token));
  return admitted(ctx, next, deps, found);
}

/** The rest of `authenticate` once the token is known. */
function admitted<C extends RequestContext>(ctx: C, next: Next<C>, deps: { readonly lastUsed?: LastUsed | null }, token: TokenRecord): Promise<void> {
  // Known before the address is checked: the request log says whose request was refused.
  ctx.facts.token = token.id;
  if (token.allowedIps) checkClientAddress(token.allowedIps, ctx.clientAddress);
  ctx.token = token;
  deps.lastUsed?.note(token.id, ctx.now.getTime());
  return next(ctx);
}
