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
