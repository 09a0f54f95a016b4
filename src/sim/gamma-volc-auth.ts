import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { group, must } from './invariants.js';

/**
 * The gamma-volc simulator's own check of the HMAC-SHA256 request signature (docs/spec/upstream-protocols.md
 * "gamma-volc"). Written apart from the gateway's signer (src/signers/hmac-v4.ts) on purpose: the
 * two meet only on the wire, so a shared mistake cannot hide. What the official SDK signs
 * (`@volcengine/openapi` Signer) must pass: test/contract/volcengine-gamma.test.ts drives it here.
 *
 * Accepted: `Authorization: HMAC-SHA256 Credential=<AK>/<yyyymmdd>/<region>/<service>/request,
 * SignedHeaders=<names>, Signature=<64 hex>`; SignedHeaders lower-case, `;`-separated, sorted, and
 * including `x-date` (the SDK signs `x-content-sha256` too when there is a body, and every header its
 * caller adds); every signed header present, its value trimmed and whitespace runs folded to one space.
 * The body hash is taken from the bytes received (an `X-Content-Sha256` sent must equal it), the path
 * and query from the request line, the query pairs sorted by decoded key (as the SDK sorts them). The
 * query parameter `sim_fault` is left out of the canonical query, so a test can add it to a signed URL.
 * Refusal reasons (their real-service answer is `refusalOf`; the simulator also names the reason in its
 * `x-sim-refusal` header):
 *   MissingAuthorization      no Authorization header
 *   InvalidAuthorization      not of the form above, or a signed header missing
 *   InvalidTimestamp          X-Date missing or not YYYYMMDDTHHMMSSZ
 *   RequestExpired            X-Date more than 15 minutes away from the simulator's clock
 *   InvalidCredentialScope    scope date not the X-Date's day, or another region / service / terminator
 *   InvalidAccessKey          unknown access key
 *   ContentSha256Mismatch     X-Content-Sha256 is not the hex SHA-256 of the body
 *   SignatureDoesNotMatch     the signature differs
 */

/** A received request as the check needs it. */
export interface ReceivedRequest {
  readonly method: string;
  /** The request target as received: the path and, when there is one, `?` and the raw query. */
  readonly target: string;
  readonly headers: IncomingHttpHeaders | Record<string, string | undefined>;
  readonly body: Buffer;
}

/** The credentials and scope the simulator accepts. */
export interface GammaKeys {
  readonly accessKey: string;
  readonly secretKey: string;
  readonly region: string;
  readonly service: string;
}

/** Outcome of a check: ok, or the refusal reason word and a sentence (and the access key, for InvalidAccessKey). */
export type SignatureCheck = { ok: true } | { ok: false; reason: string; detail: string; accessKey?: string };

/** Largest accepted distance between X-Date and the simulator's clock. */
export const MAX_SKEW_MS = 15 * 60_000;
const AUTH = /^HMAC-SHA256 Credential=([^,\s]+), ?SignedHeaders=([^,\s]+), ?Signature=([0-9a-f]{64})$/;
const X_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const UNSIGNED_QUERY = new Set(['sim_fault']);

const refuse = (reason: string, detail: string, accessKey?: string): SignatureCheck => ({
  ok: false,
  reason,
  detail,
  ...(accessKey === undefined ? {} : { accessKey }),
});
const hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const mac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

function header(h: ReceivedRequest['headers'], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** RFC 3986 encoding: all but unreserved characters as upper-case %XX of the UTF-8 bytes. */
function pct(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The canonical query: pairs sorted by the decoded key (code-unit order, as the SDK sorts), then by encoded value. */
function canonicalQuery(raw: string): string {
  const pairs: [string, string, string][] = [];
  for (const [k, v] of new URLSearchParams(raw)) if (!UNSIGNED_QUERY.has(k)) pairs.push([k, pct(k), pct(v)]);
  pairs.sort((a, b) => (a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0));
  return pairs.map((p) => `${p[1]}=${p[2]}`).join('&');
}

/** Milliseconds of an X-Date, or null when it is not one. */
export function parseXDate(text: string | undefined): number | null {
  const m = text ? X_DATE.exec(text) : null;
  if (!m) return null;
  const n = (i: number) => +group(m, i);
  const ms = Date.UTC(n(1), n(2) - 1, n(3), n(4), n(5), n(6));
  return Number.isNaN(ms) ? null : ms;
}

/** Checks the signature of a received request against `keys` at simulator time `nowMs`. */
export function verifyGammaSignature(req: ReceivedRequest, keys: GammaKeys, nowMs: number): SignatureCheck {
  const auth = header(req.headers, 'authorization');
  if (!auth?.trim()) return refuse('MissingAuthorization', 'the Authorization header is missing');
  const m = AUTH.exec(auth.trim());
  if (!m) return refuse('InvalidAuthorization', 'Authorization must be "HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…"');
  const [, credential, signedList, signature] = m as unknown as [string, string, string, string];

  const date = header(req.headers, 'x-date');
  const at = parseXDate(date);
  if (date === undefined || at === null) return refuse('InvalidTimestamp', 'X-Date must be YYYYMMDDTHHMMSSZ');
  if (Math.abs(at - nowMs) > MAX_SKEW_MS) return refuse('RequestExpired', 'X-Date is more than 15 minutes away from the server time');

  const parts = credential.split('/');
  if (parts.length !== 5) return refuse('InvalidAuthorization', 'Credential must be AK/yyyymmdd/region/service/request');
  const [ak, day, region, service, terminator] = parts as [string, string, string, string, string];
  if (day !== date.slice(0, 8) || region !== keys.region || service !== keys.service || terminator !== 'request') {
    return refuse('InvalidCredentialScope', `credential scope must be ${date.slice(0, 8)}/${keys.region}/${keys.service}/request`);
  }
  if (ak !== keys.accessKey) return refuse('InvalidAccessKey', 'the access key does not exist', ak);

  const names = signedList.split(';');
  const sorted = [...names].sort();
  if (names.some((n, i) => n !== n.toLowerCase() || n !== sorted[i] || n === '' || n === names[i - 1])) {
    return refuse('InvalidAuthorization', 'SignedHeaders must be lower-case, sorted and unique');
  }
  if (!names.includes('x-date')) return refuse('InvalidAuthorization', 'SignedHeaders must include x-date');
  const missing = names.find((n) => header(req.headers, n) === undefined);
  if (missing) return refuse('InvalidAuthorization', `signed header ${missing} is missing`);

  const bodyHash = hex(req.body);
  const sentHash = header(req.headers, 'x-content-sha256');
  if (sentHash !== undefined && sentHash !== bodyHash) return refuse('ContentSha256Mismatch', 'X-Content-Sha256 does not match the body');

  const q = req.target.indexOf('?');
  const path = q < 0 ? req.target : req.target.slice(0, q);
  const query = q < 0 ? '' : req.target.slice(q + 1);
  const canonicalHeaders = names.map((n) => `${n}:${must(header(req.headers, n), `header ${n}`).replace(/\s+/g, ' ').trim()}\n`).join('');
  const canonical = `${req.method.toUpperCase()}\n${path}\n${canonicalQuery(query)}\n${canonicalHeaders}\n${signedList}\n${bodyHash}`;
  const toSign = `HMAC-SHA256\n${date}\n${day}/${region}/${service}/request\n${hex(canonical)}`;
  const signingKey = mac(mac(mac(mac(keys.secretKey, day), region), service), 'request');
  const want = Buffer.from(createHmac('sha256', signingKey).update(toSign).digest('hex'));
  if (!timingSafeEqual(want, Buffer.from(signature))) return refuse('SignatureDoesNotMatch', 'the request signature does not match');
  return { ok: true };
}

/** How the real service answers a refusal: its HTTP status and `ResponseMetadata.Error` (Code, CodeN where published, Message). */
export interface Refusal {
  readonly status: number;
  readonly code: string;
  readonly codeN?: number;
  readonly message: string;
}

const SIGNATURE_DOES_NOT_MATCH: Refusal = {
  status: 401,
  code: 'SignatureDoesNotMatch',
  codeN: 100010,
  message:
    'The request signature we calculated does not match the signature you provided. Check your Secret Access Key and signing method. Consult the service documentation for details.',
};

/**
 * The real service's answer to a refused signature, from Volcengine's public error-code table (codes,
 * CodeN and statuses as published; InvalidAuthorization and InvalidCredential are published without a
 * CodeN, so none is made up). A body hash that does not match is a signature that does not match there.
 */
export function refusalOf(check: Extract<SignatureCheck, { ok: false }>): Refusal {
  switch (check.reason) {
    case 'MissingAuthorization':
      return { status: 401, code: 'MissingAuthenticationToken', codeN: 100003, message: 'Request is missing Authentication Token.' };
    case 'InvalidAuthorization':
      return { status: 400, code: 'InvalidAuthorization', message: "Invalid 'Authorization' header, Pls check authorization header." };
    case 'InvalidCredentialScope':
      return { status: 400, code: 'InvalidCredential', message: "Invalid credential in 'Authorization', Pls check credential in authorization header." };
    case 'InvalidTimestamp':
    case 'RequestExpired':
      return { status: 403, code: 'InvalidTimestamp', codeN: 100006, message: 'The Signature of the request is expired.' };
    case 'InvalidAccessKey':
      return { status: 401, code: 'InvalidAccessKey', codeN: 100009, message: `The accesskey [${check.accessKey ?? ''}] included in the request is invalid.` };
    default:
      return SIGNATURE_DOES_NOT_MATCH;
  }
}
