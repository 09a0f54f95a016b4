import type { CompiledOperation } from '../config/snapshot.js';
import { isErrorCode } from '../errors/catalogue.js';
import { GatewayError } from '../errors/gateway-error.js';
import { parseJsonBytes } from '../json/from-bytes.js';
import type { UpstreamResponse } from '../upstream/upstream-request.js';
import { statedWait } from './stated-wait.js';

/**
 * What the response and error mappings see besides the vendor's answer (docs/channels-yaml.md, "Mapping inputs"):
 * a public request's call gives `model`, `public_model`, `request` and a remix's `source`; a look
 * at tasks gives the `task` (or `tasks`) and a result lookup's `update`; every call gives `now`.
 */
export interface ResponseContext {
  /** The time of the request or of the look, ISO 8601: a stated wait counts from it. */
  readonly now: string;
  /** The model name the vendor knows (after the channel's renaming). */
  readonly model?: string;
  /** The model name the client asked for. */
  readonly public_model?: string;
  /** The public request's body. */
  readonly request?: unknown;
  /** A remix: the earlier task it works on. */
  readonly source?: unknown;
  /** A look at one task, or at several in one call. */
  readonly task?: unknown;
  readonly tasks?: readonly unknown[];
  /** A result lookup: the query's update it completes. */
  readonly update?: unknown;
}

/** A vendor's JSON answer, parsed from its bytes: a long base64 field (an image) becomes one string, with no whole-answer text beside it. */
function parseJson(buf: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseJsonBytes(buf) };
  } catch {
    return { ok: false };
  }
}

/**
 * What the response mapping sees as `body`: the parsed JSON answer, or for an operation whose
 * answer is bytes (`response.type: bytes`: an image, audio) its media type, size and base64.
 */
function answerBody(op: CompiledOperation, res: UpstreamResponse): { ok: true; value: unknown } | { ok: false } {
  if (op.response.type === 'json') return parseJson(res.body);
  return { ok: true, value: { content_type: contentTypeOf(res) ?? 'application/octet-stream', size: res.body.length, base64: res.body.toString('base64') } };
}

function contentTypeOf(res: UpstreamResponse): string | undefined {
  const type = res.headers['content-type'];
  return Array.isArray(type) ? type[0] : type;
}

/** Translates a 2xx vendor answer into the public body through the operation's response mapping. */
export async function mapSuccess(op: CompiledOperation, res: UpstreamResponse, ctx: ResponseContext): Promise<unknown> {
  const parsed = answerBody(op, res);
  // A 2xx we cannot read may still be an acceptance: `unknown`, never sent again as a creation.
  if (!parsed.ok) {
    const type = contentTypeOf(res);
    // JSON that does not parse is the vendor's fault; an image where the profile expects JSON is the profile's.
    if (type !== undefined && !/json/i.test(type)) {
      throw new GatewayError('bad_response', 'the upstream answer could not be translated', {
        cause: { mapping: `${op.response.body.where}: the vendor answered ${type.slice(0, 100)}, not JSON; declare response.type: bytes` },
        upstream: { phase: 'unknown', blame: 'mapping' },
      });
    }
    throw new GatewayError('bad_response', 'the upstream answered malformed JSON', { upstream: { phase: 'unknown' } });
  }
  // One our mapping cannot translate is the same, but the vendor did its part (attempts.ts: its breaker does not count it).
  const upstream = { phase: 'unknown' as const, blame: 'mapping' as const };
  let out: unknown;
  try {
    // Awaited only when left to jsonata: an await is a few hundred bytes (issue 41).
    out = op.response.body.evaluateNow({ status: res.status, headers: res.headers, body: parsed.value, ...ctx });
    if (out instanceof Promise) out = await out;
  } catch (err) {
    throw new GatewayError('bad_response', 'the upstream answer could not be translated', { cause: err, upstream });
  }
  if (out === undefined || out === null || typeof out !== 'object') {
    throw new GatewayError('bad_response', 'the upstream answer could not be translated', { cause: { mapping: op.response.body.where, out }, upstream });
  }
  return out;
}

function fallbackCode(status: number) {
  if (status === 429) return 'too_many_requests' as const;
  if (status === 503) return 'upstream_unavailable' as const;
  if (status === 504) return 'upstream_timeout' as const;
  return 'bad_response' as const;
}

/** The vendor's `Retry-After` in seconds (1 h at most), when it sent a usable one; a date counts from `nowMs`. */
export function retryAfter(res: UpstreamResponse, nowMs: number): number | undefined {
  return statedWait(res.headers['retry-after'], nowMs);
}

/** What an error mapping may give (docs/channels-yaml.md: `operations.<op>.error`). */
interface MappedError {
  code?: unknown;
  message?: unknown;
  param?: unknown;
  retry_after?: unknown;
}

/**
 * Translates a non-2xx vendor answer into a catalogue error through the operation's error
 * mapping. A mapping that fails, or gives no valid code, falls back to a code chosen by status
 * with a generic message: the vendor's body never reaches the client unmapped. The wait the
 * mapping states (`retry_after`, read from the vendor's body or headers) wins over the vendor's
 * `Retry-After` header, which stands when the mapping states none it can use.
 */
export async function mapFailure(op: CompiledOperation, res: UpstreamResponse, ctx: ResponseContext): Promise<GatewayError> {
  const parsed = parseJson(res.body);
  // Mappings see `now` as the request's clock; a stated moment counts from it (golden runs fix it).
  const nowMs = Date.parse(ctx.now);
  const details = {
    retryAfter: retryAfter(res, nowMs),
    cause: { status: res.status, body: res.body.subarray(0, 2048).toString('utf8') },
    upstream: { phase: 'answered' as const, status: res.status },
  };
  if (op.error) {
    try {
      const out = (await op.error.evaluate({ status: res.status, headers: res.headers, body: parsed.ok ? parsed.value : null, ...ctx })) as
        | MappedError
        | undefined;
      if (out && isErrorCode(out.code)) {
        const message = typeof out.message === 'string' && out.message !== '' ? out.message.slice(0, 1000) : `the upstream failed with HTTP ${res.status}`;
        const retryAfter = statedWait(out.retry_after, nowMs) ?? details.retryAfter;
        return new GatewayError(out.code, message, { ...details, retryAfter, param: typeof out.param === 'string' ? out.param : undefined });
      }
    } catch {
      // fall through to the status fallback; the cause is logged with the error
    }
  }
  return new GatewayError(fallbackCode(res.status), `the upstream failed with HTTP ${res.status}`, details);
}
