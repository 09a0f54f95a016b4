import type { RequestRecord } from '../store/store.js';
import type { RequestBatcher } from './request-batcher.js';

/**
 * What the server knows of a request once it is answered (src/http/access-log.ts's FinishedRequest,
 * the part the log keeps), written out here: the server hands it over, this room never imports it.
 */
export interface FinishedRequest {
  readonly ids: { readonly requestId: string; readonly ref: string };
  readonly route: string;
  readonly status: number;
  readonly error: string | null;
  readonly ms: number;
  readonly facts: {
    readonly model: string | null;
    readonly channel: string | null;
    readonly token: string | null;
    readonly units: number | null;
    readonly task: string | null;
  };
}

/** Route ids of what is not a public route's request: the operator routes, a CORS preflight, a path no route matched. */
const NOT_PUBLIC = new Set(['admin', 'preflight', 'none']);
/** Longest model name kept (the client chose it; the access line cuts it the same way). */
const MAX_MODEL = 200;

/** A finished public request's record; null for any other (not logged). */
export function requestRecord(r: FinishedRequest, at: number): RequestRecord | null {
  if (NOT_PUBLIC.has(r.route)) return null;
  const { facts } = r;
  return {
    id: r.ids.ref,
    at,
    requestId: r.ids.requestId,
    tokenId: facts.token,
    route: r.route,
    model: facts.model === null ? null : facts.model.slice(0, MAX_MODEL),
    channel: facts.channel,
    status: r.status,
    error: r.error,
    ms: Math.round(r.ms),
    taskId: facts.task,
    // Charged only by a request that succeeded: a failed one's hold was refunded.
    units: r.status < 400 ? facts.units : null,
  };
}

/** What the server calls as each request ends: its record handed to the batcher, stamped by `clock`. */
export function logRequests(batcher: RequestBatcher, clock: () => Date): (r: FinishedRequest) => void {
  return (r) => {
    const record = requestRecord(r, clock().getTime());
    if (record) batcher.add(record);
  };
}
