import { createHash, createHmac } from 'node:crypto';
import { fill, secretsIn, TEMPLATE, type SignableRequest, type Signer } from './signer.js';

/**
 * The HMAC-SHA256 request signature behind auth type `hmac-v4` (a building block any profile may name):
 *
 *   canonical request = METHOD \n path \n sorted-query \n canonical-headers \n signed-headers \n body-hash
 *   string to sign    = "HMAC-SHA256" \n <date> \n <yyyymmdd>/<region>/<service>/request \n hex(sha256(canonical))
 *   signing key       = HMAC(HMAC(HMAC(HMAC(secret, yyyymmdd), region), service), "request")
 *   Authorization     = HMAC-SHA256 Credential=<AK>/<scope>, SignedHeaders=<names>, Signature=<hex>
 *
 * Query keys and values are percent-encoded per RFC 3986 (unreserved characters kept) and the pairs
 * sorted; canonical headers are `name:trimmed-value\n` for every signed header, sorted by name. The
 * signed headers are content-type (when the request has one), the body-hash header and the date
 * header (their names are the profile's: `hash_header`, `date_header`): the host is left out on
 * purpose, so a channel's base URL can change (or pass through a proxy) without re-keying.
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
function target(req: SignableRequest): { path: string; pairs: [string, string][] } {
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

/** Signs `req` in place: adds the date header, the body-hash header and `authorization`. Pure: no I/O, time from `o.nowMs`. */
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
  req.headers[hashHeader] = bodyHash;

  const names = ['content-type', hashHeader, dateHeader].sort().filter((n) => headerValue(req.headers, n) !== undefined);
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
      'HMAC-SHA256 request signing in the style of AWS SigV4: the date and body-hash headers and authorization `HMAC-SHA256 Credential=AK/date/region/service/request, SignedHeaders=…, Signature=…` over method, path, sorted query, content-type and those two headers, and the body hash.',
    properties: {
      type: { const: 'hmac-v4' },
      access_key: { ...TEMPLATE, description: '`{secret}` template of the access key id.' },
      secret_key: { ...TEMPLATE, description: '`{secret}` template of the secret key.' },
      region: { type: 'string', pattern: '^[a-z0-9-]{1,40}$' },
      service: { type: 'string', pattern: '^[a-z0-9-]{1,40}$' },
      date_header: { ...HEADER_NAME, description: 'The header carrying the signing time (YYYYMMDDTHHMMSSZ), signed.' },
      hash_header: { ...HEADER_NAME, description: "The header carrying the hex SHA-256 of the body, signed." },
    },
  },
  compile: (raw) => ({
    spec: { accessKey: raw.access_key, secretKey: raw.secret_key, region: raw.region, service: raw.service, dateHeader: raw.date_header.toLowerCase(), hashHeader: raw.hash_header.toLowerCase() },
    secrets: secretsIn(raw.access_key, raw.secret_key),
  }),
  sign(spec, req, ctx) {
    signHmacV4(req, { ...spec, accessKey: fill(spec.accessKey, ctx), secretKey: fill(spec.secretKey, ctx), nowMs: ctx.nowMs });
  },
};
