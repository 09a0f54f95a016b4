import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledRoute } from '../config/snapshot.js';

/**
 * Cross-origin requests from browsers (GATEWAY_CORS_ORIGINS): a comma list of exact origins, or
 * `*`. Only public routes are ever CORS-enabled (the server hands operator paths to the admin
 * routes before it asks this module anything). With `*` only the routes that take a key are, and
 * with no credentials mode: a key is a header (or query value) the page's script sends itself, never
 * one the browser adds, so any origin may send it; a link route, whose URL is the credential, opens
 * only to origins listed by name. Unset: no CORS header anywhere, and `OPTIONS` is answered as before.
 */
export interface CorsPolicy {
  /** `*`: any origin, on routes that take a key. */
  readonly any: boolean;
  /** The exact origins allowed (lowercase, as browsers send them); empty with `any`. */
  readonly origins: ReadonlySet<string>;
}

const SETTING = 'GATEWAY_CORS_ORIGINS';
const MAX_ORIGINS = 100;
const MAX_ORIGIN_LENGTH = 300;

/**
 * How long a browser may reuse a preflight answer (seconds). Chromium keeps it at most 2 hours; ten
 * minutes lets a changed route (a reload) reach browsers soon.
 */
export const PREFLIGHT_MAX_AGE_S = 600;

/**
 * The headers of the gateway's answers a page's script may read besides the safelisted ones: the
 * request id and trace, the wait of a 429/503, a task answer's warning, a download's range, and the
 * rate-limit headers of OpenAI's API (exposed now so a client can rely on them once they are sent).
 */
export const EXPOSED_HEADERS = [
  'x-request-id',
  'traceparent',
  'retry-after',
  'warning',
  'content-range',
  'accept-ranges',
  'etag',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
].join(', ');

/** Reads GATEWAY_CORS_ORIGINS; unset or empty: null (no CORS). Throws a message naming the setting. */
export function parseCorsOrigins(raw: string | undefined): CorsPolicy | null {
  const text = (raw ?? '').trim();
  if (text === '') return null;
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.includes('*')) {
    if (entries.length > 1) throw new Error(`${SETTING}: * allows every origin; give it alone, or list exact origins without it`);
    return { any: true, origins: new Set() };
  }
  if (entries.length > MAX_ORIGINS) throw new Error(`${SETTING} lists more than ${MAX_ORIGINS} origins`);
  return { any: false, origins: new Set(entries.map(checkOrigin)) };
}

/** An origin as a browser sends it in `Origin`: scheme, host and port only; else an error saying what it would be. */
function checkOrigin(entry: string): string {
  const shown = JSON.stringify(entry.slice(0, MAX_ORIGIN_LENGTH));
  let url: URL | null = null;
  try {
    url = entry.length <= MAX_ORIGIN_LENGTH ? new URL(entry) : null;
  } catch {
    url = null;
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new Error(`${SETTING}: ${shown} is not an origin; write each as scheme://host[:port], e.g. https://app.example.com`);
  }
  if (url.origin !== entry.toLowerCase()) {
    throw new Error(`${SETTING}: ${shown} is not an origin (no path, no trailing slash, no default port); did you mean ${url.origin}?`);
  }
  return url.origin;
}

/** Whether `origin` may read this route's answers: listed by name, or (with `*`) any origin on a route that takes a key. */
function allows(policy: CorsPolicy, origin: string, route: CompiledRoute | null): boolean {
  if (policy.any) return route === null || route.kind !== 'link-content';
  return policy.origins.has(origin);
}

/** The `Origin` a browser sent, or null (not a cross-origin browser request, or a serialised `null` origin). */
function originOf(req: IncomingMessage): string | null {
  const origin = req.headers.origin;
  return typeof origin === 'string' && origin !== 'null' && origin.length <= MAX_ORIGIN_LENGTH ? origin : null;
}

/**
 * Marks an answer readable by the page that asked, before anything writes it (an error answer
 * included: the error boundary's headers are merged with these). `route` is null when no route
 * matched: a 404 or 405 is readable too, so the page can tell what went wrong.
 */
export function allowActual(policy: CorsPolicy, req: IncomingMessage, res: ServerResponse, route: CompiledRoute | null): void {
  // The answer differs by Origin whenever origins are listed: caches must key on it.
  if (!policy.any) res.setHeader('vary', 'origin');
  const origin = originOf(req);
  if (origin === null || !allows(policy, origin, route)) return;
  res.setHeader('access-control-allow-origin', policy.any ? '*' : origin);
  res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
}

/** A browser's preflight: `OPTIONS` with `Origin` (any, even `null`: it is refused like any other not allowed) and `Access-Control-Request-Method`. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && typeof req.headers.origin === 'string' && typeof req.headers['access-control-request-method'] === 'string';
}

/**
 * Answers a preflight for a path that has routes: 204 with the methods of the path's routes, the
 * request headers they read and those the browser asked for. An origin not allowed gets the 204 with no CORS header at all (as the
 * `cors` middleware of Express and Hono answer): the browser then refuses the request itself, and
 * nothing tells a stranger which origins are.
 */
export function answerPreflight(policy: CorsPolicy, req: IncomingMessage, res: ServerResponse, routes: readonly CompiledRoute[]): void {
  const origin = originOf(req);
  const open = origin === null ? [] : routes.filter((r) => allows(policy, origin, r));
  // The allowed headers follow what the browser asked: caches must key on it too.
  const headers: Record<string, string | number> = { vary: policy.any ? 'access-control-request-headers' : 'origin, access-control-request-headers' };
  if (open.length > 0) {
    headers['access-control-allow-origin'] = policy.any ? '*' : (origin ?? '');
    headers['access-control-allow-methods'] = [...new Set(open.map((r) => r.method))].join(', ');
    headers['access-control-allow-headers'] = [...new Set([...open.flatMap(requestHeadersOf), ...askedHeaders(req)])].join(', ');
    headers['access-control-max-age'] = PREFLIGHT_MAX_AGE_S;
  }
  res.writeHead(204, headers);
  res.end();
}

/** At most this many headers a preflight asks for are allowed (Chromium asks for each the script set, lowercase). */
const MAX_ASKED_HEADERS = 50;
/** A header name as RFC 9110 spells a token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]{1,100}$/;

/**
 * The headers the page's script set that the browser asks leave for (`Access-Control-Request-Headers`),
 * allowed as asked, as the `cors` middleware of Express does by default: the official SDKs send
 * headers of their own (`openai` its `x-stainless-*`, `@google/genai` `x-goog-api-client`), which
 * the gateway reads not, and refusing them would only keep those clients out of browsers of an
 * allowed origin. A name that is not a header token, or past the first 50, is not allowed.
 */
function askedHeaders(req: IncomingMessage): string[] {
  const asked = req.headers['access-control-request-headers'];
  if (typeof asked !== 'string') return [];
  return asked
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => HEADER_NAME.test(h))
    .slice(0, MAX_ASKED_HEADERS);
}

/**
 * The request headers a route reads that a browser would not send without asking (the safelisted
 * ones need no permission): its key's header, the body's type and encoding when it takes a body, the
 * request id and trace context every route keeps, and `range` and `if-range` where it serves a
 * file (a resume: docs/client-api.md, "Downloads").
 */
export function requestHeadersOf(route: CompiledRoute): string[] {
  const out: string[] = [];
  for (const source of route.keySources) {
    if (source.from === 'bearer') out.push('authorization');
    else if (source.from === 'header') out.push(source.name.toLowerCase());
  }
  if (route.body !== null) out.push('content-type', 'content-encoding');
  out.push('x-request-id', 'traceparent', 'tracestate');
  if (route.kind === 'task-content' || route.kind === 'link-content') out.push('range', 'if-range');
  return out;
}
