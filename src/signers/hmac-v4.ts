import { createHash, createHmac } from 'node:crypto';
import { fill, secretsIn, TEMPLATE, type SignableRequest, type Signer } from './signer.js';

/**
 * The HMAC-SHA256 request signature behind auth type `hmac-v4` (a building block any profile may name),
 * made exactly as the official Volcengine SDK's Signer makes it (`@volcengine/openapi` 1.36.2,
 * lib/base/sign.js; test/contract/volcengine-gamma.test.ts compares the two byte for byte):
 *
 *   canonical request = METHOD \n path \n sorted-query \n canonical-headers \n signed-headers \n body-hash
 *   string to sign    = "HMAC-SHA256" \n <date> \n <yyyymmdd>/<region>/<service>/request \n hex(sha256(canonical))
 *   signing key       = HMAC(HMAC(HMAC(HMAC(secret, yyyymmdd), region), service), "request")
 *   Authorization     = HMAC-SHA256 Credential=<AK>/<scope>, SignedHeaders=<names>, Signature=<hex>
 *
 * Query keys and values are percent-encoded per RFC 3986 (unreserved characters kept), the pairs
 * sorted by the key as written (then by encoded value), as the SDK sorts them. Canonical headers are
 * `name:value\n`, the value trimmed and its runs of whitespace folded to one space. The signed headers
 * are the date header and, when the request has a body, the body-hash header (their names are the
 * profile's: `date_header`, `hash_header`); without a body the hash header is not sent and the hash of
 * the empty string is signed, as the SDK does. Nothing else is signed: not content-type (the SDK never
 * signs it), not the host (so a channel's base URL can change, or pass through a proxy, without
 * re-keying), and not the gateway's own x-request-id / traceparent (a proxy or tracer may rewrite them).
 * The SDK also signs any header its caller adds; the gateway's profiles add none to signed calls.
 */

/** Options of one signature: the channel's keys, its region and service, and the signing time. */
export interface HmacV4Options {
  readonly accessKey: string;
  readonly secretKey: string;
  readonly region: string;
  readonly service: string;
  /** The header carrying the signing time, and the one carrying the body's SHA-256 (lower case). */
  readonly dateHeader: string;
  readonly hashHeader: string;
  readonly nowMs: number;
}

/** Percent-encodes per RFC 3986: everything but `A-Z a-z 0-9 - _ . ~`, upper-case hex. */
export function rfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `YYYYMMDDTHHMMSSZ` in UTC. */
export function xDate(nowMs: number): string {
  return new Date(nowMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

const sha256hex = (data: string | Buffer) =>
  createHash('sha256')
    .update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data)
    .digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

/** The query pairs, encoded and sorted by the key as written (plain code-unit order, the SDK's `sort()`), then by encoded value. */
function canonicalQuery(pairs: [string, string][]): string {
  return [...pairs]
    .sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : rfc3986(va) < rfc3986(vb) ? -1 : rfc3986(va) > rfc3986(vb) ? 1 : 0))
    .map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`)
    .join('&');
}

/** Path and query pairs; an absolute URL in `path` (a channel whose base URL is a full URL) is split, as dispatch does. */
function target(req: SignableRequest): { path: string; pairs: [string, string][] } {
  if (!/^https?:\/\//i.test(req.path)) return { path: req.path, pairs: Object.entries(req.query) };
  const url = new URL(req.path);
  for (const [k, v] of Object.entries(req.query)) url.searchParams.set(k, v);
  return { path: url.pathname, pairs: [...url.searchParams] };
}

/** A header value as it is signed: trimmed, runs of whitespace folded to one space (the SDK's canonicalHeaderValues). */
const canonicalValue = (value: string) => value.replace(/\s+/g, ' ').trim();

/** Signs `req` in place: adds the date header, the body-hash header (when there is a body) and `authorization`. Pure: no I/O, time from `o.nowMs`. */
export function signHmacV4(req: SignableRequest, o: HmacV4Options): void {
  const date = xDate(o.nowMs);
  const bodyHash = sha256hex(req.body ?? '');
  const dateHeader = o.dateHeader.toLowerCase();
  const hashHeader = o.hashHeader.toLowerCase();
  // A re-signed request (a retry) must not keep a stale value under another spelling.
  for (const k of Object.keys(req.headers)) {
    if ([dateHeader, hashHeader, 'authorization'].includes(k.toLowerCase())) delete req.headers[k];
  }
  req.headers[dateHeader] = date;
  // The SDK sends the body hash only with a body; the canonical request carries the hash either way.
  const hasBody = req.body !== null && req.body.length > 0;
  if (hasBody) req.headers[hashHeader] = bodyHash;

  const names = (hasBody ? [hashHeader, dateHeader] : [dateHeader]).sort();
  const signedHeaders = names.join(';');
  // Both were set just above.
  const canonicalHeaders = names.map((n) => `${n}:${canonicalValue(req.headers[n] ?? '')}\n`).join('');
  const { path, pairs } = target(req);
  const canonical = [req.method.toUpperCase(), path, canonicalQuery(pairs), canonicalHeaders, signedHeaders, bodyHash].join('\n');

  const day = date.slice(0, 8);
  const scope = `${day}/${o.region}/${o.service}/request`;
  const toSign = ['HMAC-SHA256', date, scope, sha256hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(o.secretKey, day), o.region), o.service), 'request');
  const signature = createHmac('sha256', key).update(toSign, 'utf8').digest('hex');
  req.headers.authorization = `HMAC-SHA256 Credential=${o.accessKey}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}

type RawHmac = { type: 'hmac-v4'; access_key: string; secret_key: string; region: string; service: string; date_header: string; hash_header: string };
type HmacSpec = Omit<HmacV4Options, 'nowMs'>;

const HEADER_NAME = { type: 'string', pattern: '^[A-Za-z0-9-]{1,64}$' } as const;

/** `auth: {type: hmac-v4, access_key, secret_key, region, service, date_header, hash_header}`. */
export const hmacV4Signer: Signer<RawHmac, HmacSpec> = {
  type: 'hmac-v4',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'access_key', 'secret_key', 'region', 'service', 'date_header', 'hash_header'],
    description:
      'HMAC-SHA256 request signing as the official Volcengine SDK signs (in the style of AWS SigV4): the date header, the body-hash header (with a body) and authorization `HMAC-SHA256 Credential=AK/date/region/service/request, SignedHeaders=…, Signature=…` over method, path, sorted query, those two headers (the only ones signed) and the body hash.',
    properties: {
      type: { const: 'hmac-v4' },
      access_key: { ...TEMPLATE, description: '`{secret}` template of the access key id.' },
      secret_key: { ...TEMPLATE, description: '`{secret}` template of the secret key.' },
      region: { type: 'string', pattern: '^[a-z0-9-]{1,40}$' },
      service: { type: 'string', pattern: '^[a-z0-9-]{1,40}$' },
      date_header: { ...HEADER_NAME, description: 'The header carrying the signing time (YYYYMMDDTHHMMSSZ), signed.' },
      hash_header: { ...HEADER_NAME, description: 'The header carrying the hex SHA-256 of the body, signed; sent only when the request has a body.' },
    },
  },
  compile: (raw) => ({
    spec: {
      accessKey: raw.access_key,
      secretKey: raw.secret_key,
      region: raw.region,
      service: raw.service,
      dateHeader: raw.date_header.toLowerCase(),
      hashHeader: raw.hash_header.toLowerCase(),
    },
    secrets: secretsIn(raw.access_key, raw.secret_key),
  }),
  sign(spec, req, ctx) {
    signHmacV4(req, { ...spec, accessKey: fill(spec.accessKey, ctx), secretKey: fill(spec.secretKey, ctx), nowMs: ctx.nowMs });
  },
};
