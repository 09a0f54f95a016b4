import type { ErrorCode } from './catalogue.js';

/** Optional details of a GatewayError. */
export interface GatewayErrorDetails {
  /** The public field at fault, rendered as `error.param` (dotted path, may be empty). */
  param?: string;
  /** Seconds after which a retry makes sense; rendered as `Retry-After`. */
  retryAfter?: number;
  /** Extra response headers (for example `Allow` on 405). */
  headers?: Record<string, string>;
  /** What really happened, for the log only; never sent to the client. */
  cause?: unknown;
  /** The channel that was called, for the log only. */
  channel?: string;
  /**
   * How far a vendor call got before it failed, for the retry rule (docs/routing.md, "Retries and
   * fallback"): `unsent` the request certainly never reached the vendor (connection refused, DNS,
   * connect timeout); `unknown` it may have been received (reset or timeout after sending, or a 2xx
   * that could not be read); `answered` the vendor gave a complete error answer of `status`.
   * Absent: the failure is not the vendor's (a mapping of ours, the store). `blame: 'mapping'`: the
   * vendor answered 2xx and our response mapping could not translate it; the call may have done
   * its work (`unknown`), but the vendor is not to blame for it (its breaker does not count it).
   */
  upstream?: { readonly phase: 'unsent' | 'unknown' | 'answered'; readonly status?: number; readonly blame?: 'mapping' };
}

/** The only error type the engine throws on purpose; its code comes from the catalogue. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly details: GatewayErrorDetails;

  constructor(code: ErrorCode, message: string, details: GatewayErrorDetails = {}) {
    super(message);
    this.name = 'GatewayError';
    this.code = code;
    this.details = details;
  }
}
