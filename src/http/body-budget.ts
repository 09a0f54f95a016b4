import type { IncomingMessage, ServerResponse } from 'node:http';
import { getHeapStatistics } from 'node:v8';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * A request body costs several times its size while it is handled: the bytes read, the parsed
 * value, the vendor body built from it, and what the garbage collector has yet to free (measured
 * in bench/memory: 6 to 7 x for a 20 MB generateContent call when it also went through a decoded
 * text and a serialised one; about 3.5 x since it is parsed from its bytes and serialised into
 * them, issue #14). The default budget was set for the former, about half of the heap: heap limit / 12.
 */
const HEAP_SHARE = 12;

/** Seconds a refused client is asked to wait: bodies in flight are usually answered within that. */
const RETRY_AFTER_S = 2;

/** The default budget: a share of this process's heap limit (which --max-old-space-size sets). */
export function defaultBodyBudget(): number {
  return Math.floor(getHeapStatistics().heap_size_limit / HEAP_SHARE);
}

/**
 * The bytes of request bodies the process holds at once (docs/operating.md, "Memory admission"). A request
 * reserves its body's size before a byte of it is read and gives it back when its answer is done,
 * so a burst of large bodies is refused at the door instead of exhausting the heap and resetting
 * every request in flight.
 */
export class BodyBudget {
  #held = 0;
  #peak = 0;

  constructor(readonly limit: number) {}

  /** Bytes reserved now. */
  get held(): number {
    return this.#held;
  }

  /** Most bytes ever reserved at once. */
  get peak(): number {
    return this.#peak;
  }

  /**
   * Reserves room for one request's body before a byte of it is read, given back when `res`
   * closes: its declared Content-Length, refused at once when that does not fit. A chunked body
   * (no declared length) is reserved as it arrives, through `Admission.cover`.
   */
  admit(req: IncomingMessage, res: ServerResponse, maxBytes: number): Admission {
    const declared = contentLength(req);
    // Larger than the route takes: readBody refuses it with 413 without reading it, nothing to hold.
    if (declared !== null && declared > maxBytes) return NOTHING;
    if (declared !== null && declared > this.limit) {
      // No amount of waiting makes it fit: a retry would be refused for ever.
      throw new GatewayError(
        'payload_too_large',
        `the request body is larger than the ${this.limit} bytes this gateway reads at once (GATEWAY_BODY_BUDGET_MB)`,
      );
    }
    // The answer is done (or the client gone): whatever is still read is not held for long.
    let closed = res.destroyed;
    let reserved = 0;
    const reserve = (bytes: number): boolean => {
      if (closed || bytes <= reserved) return true;
      if (this.#held + bytes - reserved > this.limit) return false;
      this.#held += bytes - reserved;
      reserved = bytes;
      this.#peak = Math.max(this.#peak, this.#held);
      return true;
    };
    if (declared !== null && !reserve(declared)) throw busy();
    res.once('close', () => {
      closed = true;
      this.#held -= reserved;
      reserved = 0;
    });
    return { cover: (total) => (reserve(total) ? null : busy()) };
  }
}

/** One request's reservation. */
export interface Admission {
  /** Extends the reservation to the `total` bytes read so far (a chunked body); the error to answer when it cannot. */
  cover(total: number): GatewayError | null;
}

const NOTHING: Admission = { cover: () => null };

function busy(): GatewayError {
  return new GatewayError('server_busy', 'the gateway is reading as many request bodies as its memory allows; retry shortly', { retryAfter: RETRY_AFTER_S });
}

function contentLength(req: IncomingMessage): number | null {
  const raw = req.headers['content-length'];
  if (raw === undefined) return null;
  const n = Number(raw);
  // Node's parser has already refused a malformed Content-Length; this only guards the type.
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}
