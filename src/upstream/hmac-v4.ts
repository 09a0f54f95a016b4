import { createHash, createHmac } from 'node:crypto';
import type { UpstreamRequest } from './upstream-request.js';

/**
 * The HMAC-SHA256 request signature behind auth type `hmac-v4` (a building block any profile may name):
 *
 *   canonical request = METHOD \n path \n sorted-query \n canonical-headers \n signed-headers \n body-hash
 *   string to sign    = "HMAC-SHA256" \n X-Date \n <yyyymmdd>/<region>/<service>/request \n hex(sha256(canonical))
 *   signing key       = HMAC(HMAC(HMAC(HMAC(secret, yyyymmdd), region), service), "request")
 *   Authorization     = HMAC-SHA256 Credential=<AK>/<scope>, SignedHeaders=<names>, Signature=<hex>
 *
 * Query keys and values are percent-encoded per RFC 3986 (unreserved characters kept) and the pairs
 * sorted; canonical headers are `name:trimmed-value\n` for every signed header, sorted by name. The
 * signed headers are content-type (when the request has one), x-content-sha256 and x-date: the host is
 * left out on purpose, so a channel's base URL can change (or pass through a proxy) without re-keying.
 */

/** Options of one signature: the channel's keys, its region and service, and the signing time. */
export interface HmacV4Options {
  readonly accessKey: string;
  readonly secretKey: string;
  readonly region: string;
  readonly service: string;
  readonly nowMs: number;
}

/** Percent-encodes per RFC 3986: everything but `A-Z a-z 0-9 - _ . ~`, upper-case hex. */
export function rfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `YYYYMMDDTHHMMSSZ` in UTC. */
export function xDate(nowMs: number): string {
  return new Date(nowMs).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

const sha256hex = (data: string | Buffer) => createHash('sha256').update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data).digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

/** The query pairs, encoded and sorted by key then value (plain code-unit order of the encoded text). */
function canonicalQuery(pairs: [string, string][]): string {
  return pairs
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

/** Path and query pairs; an absolute URL in `path` (a channel whose base URL is a full URL) is split, as dispatch does. */
function target(req: UpstreamRequest): { path: string; pairs: [string, string][] } {
  if (!/^https?:\/\//i.test(req.path)) return { path: req.path, pairs: Object.entries(req.query) };
  const url = new URL(req.path);
  for (const [k, v] of Object.entries(req.query)) url.searchParams.set(k, v);
  return { path: url.pathname, pairs: [...url.searchParams] };
}

/** The header value of a lower-case name, looked up case-insensitively (callers should use lower case, not all do). */
function headerValue(headers: Record<string, string>, name: string): string | undefined {
  if (headers[name] !== undefined) return headers[name];
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/** Signs `req` in place: adds `x-date`, `x-content-sha256` and `authorization`. Pure: no I/O, time from `o.nowMs`. */
export function signHmacV4(req: UpstreamRequest, o: HmacV4Options): void {
  const date = xDate(o.nowMs);
  const bodyHash = sha256hex(req.body ?? '');
  // A re-signed request (a retry) must not keep a stale value under another spelling.
  for (const k of Object.keys(req.headers)) {
    if (['x-date', 'x-content-sha256', 'authorization'].includes(k.toLowerCase())) delete req.headers[k];
  }
  req.headers['x-date'] = date;
  req.headers['x-content-sha256'] = bodyHash;

  const names = ['content-type', 'x-content-sha256', 'x-date'].filter((n) => headerValue(req.headers, n) !== undefined);
  const signedHeaders = names.join(';');
  const canonicalHeaders = names.map((n) => `${n}:${headerValue(req.headers, n)!.trim()}\n`).join('');
  const { path, pairs } = target(req);
  const canonical = [req.method.toUpperCase(), path, canonicalQuery(pairs), canonicalHeaders, signedHeaders, bodyHash].join('\n');

  const day = date.slice(0, 8);
  const scope = `${day}/${o.region}/${o.service}/request`;
  const toSign = ['HMAC-SHA256', date, scope, sha256hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(o.secretKey, day), o.region), o.service), 'request');
  const signature = createHmac('sha256', key).update(toSign, 'utf8').digest('hex');
  req.headers.authorization = `HMAC-SHA256 Credential=${o.accessKey}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}
