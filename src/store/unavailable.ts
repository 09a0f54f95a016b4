import { GatewayError } from '../errors/gateway-error.js';

/**
 * The bounds on waiting for the store (docs/deploying.md, "When something fails"; GATEWAY_DB_CONNECT_TIMEOUT_MS,
 * GATEWAY_DB_STATEMENT_TIMEOUT_MS, GATEWAY_DB_IDLE_TX_TIMEOUT_MS). Only the shared store, over a
 * network, uses them; the embedded one cannot go away.
 */
export interface StoreTimeouts {
  /** Opening a connection, or waiting for a free one of the pool; also the probe's whole ping. */
  readonly connectMs: number;
  /** The server cancels a statement running longer; the gateway stops waiting a second after. */
  readonly statementMs: number;
  /** The server ends a session left idle inside a transaction (a process stopped mid-way holds no row locks for longer). */
  readonly idleInTransactionMs: number;
}

export const DEFAULT_STORE_TIMEOUTS: StoreTimeouts = { connectMs: 5_000, statementMs: 10_000, idleInTransactionMs: 10_000 };

/** How long a client is told to wait before trying again while the store is away (`Retry-After`). */
export const STORE_RETRY_AFTER_S = 2;

/**
 * The error of any store call that the store could not serve: no connection, a connection that
 * broke, no answer in time. The client gets 503 `store_unavailable`; `cause` says what happened, for the log.
 */
export function storeUnavailable(cause: unknown): GatewayError {
  return new GatewayError('store_unavailable', 'the gateway cannot reach its store right now; retry shortly', {
    retryAfter: STORE_RETRY_AFTER_S,
    cause,
  });
}

/** Whether an error is the store being unreachable (not a fault of the statement or of the gateway). */
export function isStoreUnavailable(err: unknown): err is GatewayError {
  return err instanceof GatewayError && err.code === 'store_unavailable';
}

/** Why the store failed, in words for a log line or a probe's answer (never a password: drivers do not put one in their errors). */
export function reasonOf(err: unknown): string {
  const cause = err instanceof GatewayError ? err.details.cause : err;
  if (cause instanceof Error) return cause.message || cause.name;
  return String(cause);
}
