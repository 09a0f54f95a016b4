import { createHash, randomBytes } from 'node:crypto';
import type { CompiledRoute, LinkPlaces, Snapshot, SyncRoute } from '../config/snapshot.js';
import type { Next } from '../pipeline/compose.js';
import { StreamAnswer } from '../pipeline/open-stream.js';
import type { RequestContext } from '../pipeline/context.js';
import type { LinkRecord, Store } from '../store/store.js';

/**
 * Links instead of vendor URLs (docs/client-api.md, "Links instead of vendor URLs"): the files a synchronous
 * answer carries, a vendor's URL or a `data:` URI, are replaced by links to the gateway's
 * `link-content` route. What a link stands for is kept in the store under the hash of its secret,
 * so any replica serves it and a copy of the store gives no working link.
 */

/** What handing out links needs from the process. */
export interface LinkDeps {
  readonly store: Store;
  /** How long a link serves; docs/operating.md, GATEWAY_LINK_TTL_MS. */
  readonly linkTtlMs: number;
  /** Makes a link's secret; golden runs make them deterministic. */
  readonly newLinkSecret?: () => string;
  /** The result archive (GATEWAY_ARCHIVE), for routes that archive their links; absent or null: none. */
  readonly archive?: LinkArchive | null;
}

/** What handing out links asks of the result archive (src/archive/, docs/archive.md). */
export interface LinkArchive {
  /** Days the files behind a route's links are kept for this token; 0: the route's links are not archived. */
  linkKeepDays(route: SyncRoute, tokenId: string): Promise<number>;
}

/** How long a link serves by default: an hour, as long as the presigned URLs OpenAI hands out. */
export const DEFAULT_LINK_TTL_MS = 3_600_000;

/** A new link secret: 24 random bytes, as unguessable as an API key. */
export function newLinkSecret(): string {
  return randomBytes(24).toString('base64url');
}

/** Deterministic link secrets for golden runs: `goldenlink1…`, `goldenlink2…`, each 32 characters as real ones. */
export function sequentialLinkSecrets(): () => string {
  let n = 0;
  return () => `goldenlink${String(++n)}`.padEnd(32, '0');
}

/** The store's id of a link: the SHA-256 of its secret. */
export function linkIdOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

const VENDOR_URL = /^https?:\/\/[^\s]+$/i;
/** A `data:` URI in base64: its media type (parameters dropped) and where the bytes start. */
const DATA_URI = /^data:([^,;]*)(?:;[^,;]*)*;base64,/i;
/** A media type fit for a header (`type/subtype`); anything else is served as bytes. */
const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}$/;

/** The `linkFiles` stage: the answer's files become gateway links (`handOutLinks`), through the channel that served it. */
export function linkFiles(ctx: RequestContext<SyncRoute>, next: Next<RequestContext<SyncRoute>>, deps: LinkDeps): Promise<void> {
  const { answer } = ctx;
  if (answer instanceof StreamAnswer) {
    // A stream's files are handed out event by event as the relay writes them, at the stream's places.
    const places = ctx.route.links.mode === 'pass' ? ctx.route.links : (ctx.route.stream?.links ?? ctx.route.links);
    const channel = ctx.served;
    if (places.mode !== 'pass') answer.rewrite = (data) => handOutLinks(ctx, data, channel, deps, places);
    return next(ctx);
  }
  // An answer with no file at the route's places (an image in base64, say) goes on at once: no
  // promise, no await, nothing made to find that out (issue 41). handOutLinks would give it back as it is.
  if (!holdsFiles(ctx.snapshot, answer, ctx.route.links)) return next(ctx);
  return handOutLinks(ctx, answer, ctx.served, deps).then((out) => {
    ctx.answer = out;
    return next(ctx);
  });
}

/** The snapshot's `link-content` route, looked up once per snapshot. */
const linkRoutes = new WeakMap<Snapshot, CompiledRoute | null>();
function linkRouteOf(snapshot: Snapshot): CompiledRoute | null {
  let route = linkRoutes.get(snapshot);
  if (route === undefined) {
    route = snapshot.routes.find((r) => r.kind === 'link-content') ?? null;
    linkRoutes.set(snapshot, route);
  }
  return route;
}

/**
 * Whether handOutLinks would make a link of something in `answer`: a string at the places that
 * is a vendor URL (or, at named places, a base64 data: URI), the snapshot having a link route.
 */
function holdsFiles(snapshot: Snapshot, answer: unknown, places: LinkPlaces): boolean {
  if (places.mode === 'pass' || linkRouteOf(snapshot) === null) return false;
  if (places.mode === 'scan') return anyString(answer, false);
  for (const place of places.places) if (anyAt(answer, place, 0)) return true;
  return false;
}

/** A string that would be linked: a vendor URL, or (`stored`, at a named place) a base64 data: URI. */
function linkable(s: string, stored: boolean): boolean {
  return VENDOR_URL.test(s) || (stored && DATA_URI.test(s));
}

/** Whether a string anywhere in `value` would be linked (the walk of `everyString`). */
function anyString(value: unknown, stored: boolean): boolean {
  if (typeof value === 'string') return linkable(value, stored);
  if (Array.isArray(value)) {
    for (const child of value) if (anyString(child, stored)) return true;
    return false;
  }
  if (value !== null && typeof value === 'object') {
    for (const k in value) if (Object.hasOwn(value, k) && anyString((value as Record<string, unknown>)[k], stored)) return true;
  }
  return false;
}

/** Whether a string at a JSON pointer's place in `value` would be linked (the walk of `atPlace`). */
function anyAt(value: unknown, place: readonly string[], depth: number): boolean {
  const key = place[depth];
  if (key === undefined) return typeof value === 'string' && linkable(value, true);
  if (key === '*') {
    if (Array.isArray(value)) {
      for (const child of value) if (anyAt(child, place, depth + 1)) return true;
    } else if (value !== null && typeof value === 'object') {
      for (const k in value) if (Object.hasOwn(value, k) && anyAt((value as Record<string, unknown>)[k], place, depth + 1)) return true;
    }
    return false;
  }
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return INDEX.test(key) && Number(key) < value.length && anyAt(value[Number(key)], place, depth + 1);
  return Object.hasOwn(value, key) && anyAt((value as Record<string, unknown>)[key], place, depth + 1);
}

/**
 * The answer with its files replaced by gateway links, each recorded in the store (all of them or
 * none) for `ctx.token`, through `channel`: the route's `links` places (a `data:` URI there becomes
 * a stored result), or every vendor URL of the answer when it names none. An answer the route
 * passes as it is (`pass_vendor_url`) is returned untouched, as is one that carries no file.
 */
export async function handOutLinks(
  ctx: RequestContext<SyncRoute>,
  answer: unknown,
  channel: string,
  deps: LinkDeps,
  places: LinkPlaces = ctx.route.links,
): Promise<unknown> {
  const route = linkRouteOf(ctx.snapshot);
  if (!places || places.mode === 'pass' || !route) return answer;
  const now = ctx.now.getTime();
  // The links' lifetime is read once a file is found: an answer (or a stream's event) with none asks nothing of the store.
  const records: Omit<LinkRecord, 'expiresAt'>[] = [];
  const handedOut = new Set<string>();
  const link = (value: string, stored: boolean): string => {
    if (handedOut.has(value)) return value;
    const data = stored ? DATA_URI.exec(value) : null;
    if (!data && !VENDOR_URL.test(value)) return value;
    const secret = (deps.newLinkSecret ?? newLinkSecret)();
    records.push({
      id: linkIdOf(secret),
      tokenId: ctx.token.id,
      channel,
      url: data ? null : value,
      data: data ? Buffer.from(value.slice(data[0].length), 'base64') : null,
      contentType: data ? mediaTypeOf(data[1]) : null,
      createdAt: now,
    });
    const url = linkUrl(ctx.publicBase, route, secret);
    handedOut.add(url);
    return url;
  };
  const out = rewrite(answer, places, link);
  if (records.length === 0) return out;
  // A route that archives its links keeps them serving as long as the archive keeps their files.
  const keepDays = deps.archive ? await deps.archive.linkKeepDays(ctx.route, ctx.token.id) : 0;
  const expiresAt = now + Math.max(deps.linkTtlMs, keepDays * 86_400_000);
  await deps.store.putLinks(records.map((r) => ({ ...r, expiresAt })));
  // Queued before the answer leaves: a crash before this loses the answer too, never only its copy.
  const copies = keepDays > 0 ? records.filter((r) => r.url !== null) : [];
  if (copies.length > 0)
    await deps.store.queueArchiveJobs(copies.map((r) => ({ id: r.id, kind: 'link', tokenId: r.tokenId, route: ctx.route.id, createdAt: now })));
  return out;
}

/** The public URL of a link: the link route's path with the secret as its one parameter. */
function linkUrl(base: string, route: CompiledRoute, secret: string): string {
  return `${base}${route.path.replace(`{${route.matcher.params[0] ?? ''}}`, secret)}`;
}

/** A stored file's media type as a `data:` URI named it, when it is fit for a header; else bytes. */
function mediaTypeOf(named: string | undefined): string {
  return named !== undefined && MEDIA_TYPE.test(named) ? named.toLowerCase() : 'application/octet-stream';
}

type Swap = (value: string, stored: boolean) => string;

function rewrite(answer: unknown, places: Exclude<LinkPlaces, { mode: 'pass' }>, swap: Swap): unknown {
  if (places.mode === 'scan') return everyString(answer, (s) => swap(s, false));
  let out = answer;
  for (const place of places.places) out = atPlace(out, place, 0, (s) => swap(s, true));
  return out;
}

/** `value` with `swap` applied to every string in it; parts that did not change are shared, not copied. */
function everyString(value: unknown, swap: (s: string) => string): unknown {
  if (typeof value === 'string') return swap(value);
  return eachChild(value, (child) => everyString(child, swap));
}

/** An array index as a JSON pointer writes it: `0`, `1`, … (no sign, no leading zero). */
const INDEX = /^(0|[1-9][0-9]*)$/;

/**
 * `value` with `swap` applied to the strings at a JSON pointer whose `*` segments match every key
 * or index. A named segment goes straight to its child: this runs on every answer of a route
 * with `links`, so it walks no more of the answer than the pointer names.
 */
function atPlace(value: unknown, place: readonly string[], depth: number, swap: (s: string) => string): unknown {
  const key = place[depth];
  // Past the pointer's last segment: the value at the place.
  if (key === undefined) return typeof value === 'string' ? swap(value) : value;
  if (key === '*') return eachChild(value, (child) => atPlace(child, place, depth + 1, swap));
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    if (!INDEX.test(key) || Number(key) >= value.length) return value;
    const i = Number(key);
    const next = atPlace(value[i], place, depth + 1, swap);
    if (next === value[i]) return value;
    const copy = value.slice();
    copy[i] = next;
    return copy;
  }
  if (!Object.hasOwn(value, key)) return value;
  const child = (value as Record<string, unknown>)[key];
  const next = atPlace(child, place, depth + 1, swap);
  return next === child ? value : { ...(value as Record<string, unknown>), [key]: next };
}

/** A copy of an array or object with `change` applied to each child; itself when none changed. */
function eachChild(value: unknown, change: (child: unknown) => unknown): unknown {
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      const next = change(child);
      if (next !== child) (copy ??= value.slice())[i] = next;
    }
    return copy ?? value;
  }
  if (value !== null && typeof value === 'object') {
    let copy: Record<string, unknown> | null = null;
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      const child = (value as Record<string, unknown>)[k];
      const next = change(child);
      if (next !== child) (copy ??= { ...(value as Record<string, unknown>) })[k] = next;
    }
    return copy ?? value;
  }
  return value;
}
