import { createHmac } from 'node:crypto';
import type { AuthSpec, CompiledChannel } from '../config/snapshot.js';
import { signHmacV4 } from './hmac-v4.js';
import type { UpstreamRequest } from './upstream-request.js';

const PLACEHOLDER = /\{([a-z][a-z0-9_]*)\}/g;

/** Fills `{secret}` placeholders of an auth template with the channel's secrets. */
function fill(template: string, channel: CompiledChannel): string {
  return template.replace(PLACEHOLDER, (_m, name: string) => channel.secrets[name]?.reveal() ?? '');
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** A compact JWS, HS256: header.payload.signature, each base64url without padding (RFC 7515). */
export function signJwtHs256(claims: Record<string, unknown>, secret: string): string {
  const head = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

// Tokens are reused until half their life is gone: one HMAC per channel every ttl/2, not per call.
// Keyed by the channel object, so a reloaded channel (new secrets) never reuses an old token.
const jwtCache = new WeakMap<CompiledChannel, { token: string; renewAt: number }>();

function jwtFor(auth: Extract<AuthSpec, { type: 'jwt-hs256' }>, channel: CompiledChannel, nowMs: number): string {
  const cached = jwtCache.get(channel);
  if (cached && nowMs < cached.renewAt) return cached.token;
  const now = Math.floor(nowMs / 1000);
  // nbf a little in the past: the vendor's clock may run behind ours.
  const token = signJwtHs256({ iss: fill(auth.issuer, channel), exp: now + auth.ttlS, nbf: now - 5 }, fill(auth.secret, channel));
  jwtCache.set(channel, { token, renewAt: nowMs + (auth.ttlS * 1000) / 2 });
  return token;
}

/**
 * Signs an upstream request the way the channel's profile says. Signers are the named building
 * blocks of `profiles.*.auth.type`; each one only adds headers or query parameters.
 */
export function sign(auth: AuthSpec, channel: CompiledChannel, req: UpstreamRequest, nowMs = Date.now()): void {
  switch (auth.type) {
    case 'header':
      req.headers[auth.name.toLowerCase()] = fill(auth.value, channel);
      return;
    case 'query':
      req.query[auth.name] = fill(auth.value, channel);
      return;
    case 'jwt-hs256':
      req.headers[auth.header] = `${auth.prefix}${jwtFor(auth, channel, nowMs)}`;
      return;
    case 'hmac-v4':
      signHmacV4(req, { accessKey: fill(auth.accessKey, channel), secretKey: fill(auth.secretKey, channel), region: auth.region, service: auth.service, nowMs });
      return;
    case 'none':
      return;
  }
}
