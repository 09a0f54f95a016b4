import { Secret } from '../config/secret.js';
import type { CompiledChannel } from '../config/snapshot.js';
import { signFor } from '../pipeline/call-upstream.js';
import { requestTarget } from '../upstream/dispatch.js';
import type { UpstreamRequest } from '../upstream/upstream-request.js';

/** What the playground shows in place of anything a secret went into. */
export const MASK = '***';
/** A second stand-in: what changes between the two signatures depends on the secrets. */
const OTHER = '#~#';

/** One vendor request as the playground shows it (`POST /admin/playground`, `upstream`). */
export interface ShownRequest {
  readonly method: string;
  /** Origin, path and query, as dispatch sends them. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The body as JSON when it is JSON; else its size and media type; null for none. */
  readonly body: unknown;
  /** Whether the channel's auth scheme signed it (false for another origin, which never gets credentials). */
  readonly signed: boolean;
}

/**
 * A mapped request signed the way its channel signs, with every secret masked. The signing code is
 * the pipeline's own (`signFor`), run twice on copies of the request with two different stand-ins
 * for every secret: the real secrets are never read. A header or query parameter the signature set
 * is shown as the first signing made it when the two agree but for the stand-in (a template such as
 * `Bearer ***`, or a value no secret goes into, such as a date or a body hash); one that depends on
 * the secrets in any other way (a signature, a token) is `***` whole.
 */
export function maskedRequest(channel: CompiledChannel, unsigned: UpstreamRequest, now: Date): ShownRequest {
  const a = signedWith(channel, unsigned, now, MASK);
  const b = signedWith(channel, unsigned, now, OTHER);
  const headers = masked(unsigned.headers, a.req.headers, b.req.headers);
  const query = masked(unsigned.query, a.req.query, b.req.query);
  const { origin, path } = requestTarget(channel, { path: a.req.path, query });
  return { method: a.req.method, url: origin + path, headers, body: shownBody(a.req), signed: a.signed };
}

/** A copy of `unsigned` signed for a copy of the channel whose every secret is `standIn`; the copy also keeps signers' per-channel caches (keyed by the channel object) out of it. */
function signedWith(channel: CompiledChannel, unsigned: UpstreamRequest, now: Date, standIn: string): { req: UpstreamRequest; signed: boolean } {
  const req: UpstreamRequest = { ...unsigned, query: { ...unsigned.query }, headers: { ...unsigned.headers } };
  const secrets = Object.fromEntries(Object.keys(channel.secrets).map((name) => [name, new Secret(standIn)]));
  return { req, signed: signFor({ ...channel, secrets }, req, now) };
}

/** The values of `a` (`b` the same signed with the other stand-in), masked where signing put something secret-derived. */
function masked(before: Readonly<Record<string, string>>, a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(a)) {
    if (before[k] === v) out[k] = v;
    else out[k] = v.split(MASK).join('') === (b[k] ?? '').split(OTHER).join('') ? v : MASK;
  }
  return out;
}

/** JSON bodies as JSON; anything else (multipart, bytes) as its size and media type. */
function shownBody(req: UpstreamRequest): unknown {
  if (req.body === null) return null;
  const type = Object.entries(req.headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? 'application/json';
  const media = (type.split(';')[0] ?? '').trim().toLowerCase();
  if (media === 'application/json' || media.endsWith('+json')) {
    try {
      return JSON.parse(typeof req.body === 'string' ? req.body : req.body.toString('utf8'));
    } catch {
      // Not JSON after all: shown by size, like any other body.
    }
  }
  return { bytes: typeof req.body === 'string' ? Buffer.byteLength(req.body) : req.body.length, media_type: media };
}
