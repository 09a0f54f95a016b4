import { createHmac } from 'node:crypto';
import { fill, secretsIn, TEMPLATE, type SignContext, type Signer } from './signer.js';

interface JwtSpec {
  /** `iss` claim and HMAC key, as `{secret}` templates. */
  readonly issuer: string;
  readonly secret: string;
  readonly ttlS: number;
  readonly header: string;
  readonly prefix: string;
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** A compact JWS, HS256: header.payload.signature, each base64url without padding (RFC 7515). */
export function signJwtHs256(claims: Record<string, unknown>, secret: string): string {
  const head = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

// Tokens are reused until half their life is gone: one HMAC per channel every ttl/2, not per call.
// Keyed by the channel's cache key, so a reloaded channel (new secrets) never reuses an old token.
const cache = new WeakMap<object, { token: string; renewAt: number }>();

function tokenFor(spec: JwtSpec, ctx: SignContext): string {
  const cached = cache.get(ctx.cacheKey);
  if (cached && ctx.nowMs < cached.renewAt) return cached.token;
  const now = Math.floor(ctx.nowMs / 1000);
  // nbf a little in the past: the vendor's clock may run behind ours.
  const token = signJwtHs256({ iss: fill(spec.issuer, ctx), exp: now + spec.ttlS, nbf: now - 5 }, fill(spec.secret, ctx));
  cache.set(ctx.cacheKey, { token, renewAt: ctx.nowMs + (spec.ttlS * 1000) / 2 });
  return token;
}

type RawJwt = { type: 'jwt-hs256'; issuer: string; secret: string; ttl_s?: number; header?: string; prefix?: string };

/** `auth: {type: jwt-hs256, issuer, secret, ttl_s?, header?, prefix?}`: a short-lived JWT per channel. */
export const jwtHs256Signer: Signer<RawJwt, JwtSpec> = {
  type: 'jwt-hs256',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'issuer', 'secret'],
    description: 'A JWT signed HS256, sent as `<header>: <prefix><jwt>`; claims iss, exp (now + ttl_s), nbf (now - 5 s).',
    properties: {
      type: { const: 'jwt-hs256' },
      issuer: TEMPLATE,
      secret: TEMPLATE,
      ttl_s: { type: 'integer', minimum: 60, maximum: 86400, description: 'Lifetime of a token. Default 1800.' },
      header: { type: 'string', minLength: 1, description: 'Default authorization.' },
      prefix: { type: 'string', description: 'Default `Bearer `.' },
    },
  },
  compile: (raw) => ({
    spec: {
      issuer: raw.issuer,
      secret: raw.secret,
      ttlS: raw.ttl_s ?? 1800,
      header: (raw.header ?? 'authorization').toLowerCase(),
      prefix: raw.prefix ?? 'Bearer ',
    },
    secrets: secretsIn(raw.issuer, raw.secret),
  }),
  sign(spec, req, ctx) {
    req.headers[spec.header] = `${spec.prefix}${tokenFor(spec, ctx)}`;
  },
};
