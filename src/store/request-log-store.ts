/**
 * The request log (docs/admin-and-metrics.md, "The request log"): one record per public request,
 * written in batches off the request path (src/records/request-batcher.ts), kept for
 * GATEWAY_REQUEST_LOG_DAYS and read by operators newest first, in pages.
 */
import { newestFirstSql } from './newest-first.js';

/** One public request as it ended. */
export interface RequestRecord {
  /** The request's own reference (unique, whatever id the client sent): a batch sent twice is kept once. */
  readonly id: string;
  /** Unix milliseconds, when the request ended. */
  readonly at: number;
  /** The id the client saw in `x-request-id` (its own when it sent one). */
  readonly requestId: string;
  /** The token that authenticated; null when none did. */
  readonly tokenId: string | null;
  /** The routes.yaml route id. */
  readonly route: string;
  readonly model: string | null;
  /** The channel of the last vendor call (the one that served, when one did). */
  readonly channel: string | null;
  readonly status: number;
  /** The error catalogue's code of a failed request; null when it succeeded. */
  readonly error: string | null;
  readonly ms: number;
  /** The task it submitted or read (the last, for a query of several); null for none. */
  readonly taskId: string | null;
  /** Units the request charged (a synchronous request's settled price, a task's price at submission); null when none. */
  readonly units: number | null;
}

/**
 * Which records `findRequests` answers: each filter set narrows them (`from` ≤ at < `to`); a page
 * of at most `limit`, newest first by (`at`, `id`), strictly after `before` in that order.
 */
export interface RequestQuery {
  readonly tokenId?: string;
  readonly model?: string;
  readonly route?: string;
  readonly status?: number;
  readonly error?: string;
  readonly requestId?: string;
  readonly taskId?: string;
  readonly from?: number;
  readonly to?: number;
  /** Where the previous page ended; null: from the newest. */
  readonly before: { readonly at: number; readonly id: string } | null;
  readonly limit: number;
}

/** The request log in the store. */
export interface RequestLogStore {
  /** Records a batch, all or none; a record whose id is already there is left as it is (a batch sent again). */
  putRequests(records: readonly RequestRecord[]): Promise<void>;
  /** A page of records, newest first (see RequestQuery). */
  findRequests(query: RequestQuery): Promise<RequestRecord[]>;
  /** Deletes up to `limit` records older than `before` (Unix ms); returns how many. */
  deleteRequestsBefore(before: number, limit: number): Promise<number>;
}

/** Filters of a RequestQuery and their columns. */
const FILTERS = [
  ['tokenId', 'token_id'],
  ['model', 'model'],
  ['route', 'route'],
  ['status', 'status'],
  ['error', 'error'],
  ['requestId', 'request_id'],
  ['taskId', 'task_id'],
] as const;

/**
 * The statement of findRequests for both SQL drivers (`param(n)` writes the n-th placeholder, from
 * 1), and its arguments. The order (at DESC, id DESC) is read off `requests_by_at (at, id)` walked
 * backwards (or `requests_by_token (token_id, at, id)` for a token), the cursor a range of it.
 */
export function findRequestsSql(q: RequestQuery, param: (n: number) => string): { sql: string; args: unknown[] } {
  return newestFirstSql('requests', FILTERS, q, param);
}

/** A `requests` row of both drivers. */
export interface RequestRow {
  id: string;
  at: number;
  request_id: string;
  token_id: string | null;
  route: string;
  model: string | null;
  channel: string | null;
  status: number;
  error: string | null;
  ms: number;
  task_id: string | null;
  units: number | null;
}

/** A record as the store answers it (PostgreSQL's BIGINT may come as a string from a driver that does not parse it). */
export function toRequest(r: RequestRow): RequestRecord {
  return {
    id: r.id,
    at: Number(r.at),
    requestId: r.request_id,
    tokenId: r.token_id,
    route: r.route,
    model: r.model,
    channel: r.channel,
    status: Number(r.status),
    error: r.error,
    ms: Number(r.ms),
    taskId: r.task_id,
    units: r.units === null ? null : Number(r.units),
  };
}
