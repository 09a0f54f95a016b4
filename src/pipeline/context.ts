import type { Logger } from 'pino';
import type { CompiledRoute, Snapshot } from '../config/snapshot.js';
import type { TokenRecord } from '../store/store.js';
import type { TraceContext } from '../upstream/trace-headers.js';

/**
 * What a request learns on its way, for its access log line and its metrics (written by
 * src/http/access-log.ts when it ends): filled in by the stages as they find out.
 */
export interface RequestFacts {
  /** The public model asked for, or of the task read; null until known. */
  model: string | null;
  /** The channel of the last vendor call (the one that served, when one did), or of the task read. */
  channel: string | null;
  /** The id of the token that authenticated (never its key). */
  token: string | null;
}

/** What one public request carries through the stages; built by src/http/server.ts. */
export interface RequestContext {
  /** The id the client sees in `x-request-id`: its own when it sent a safe one (src/http/request-id.ts). */
  readonly requestId: string;
  /** Unique to this request, whatever id the client sent: the reference of its quota hold and ledger rows. */
  readonly ref: string;
  /** The trace the request belongs to and our span in it; sent to vendors with the request id. */
  readonly trace: TraceContext;
  /** What the stages learn for the access log and metrics. */
  readonly facts: RequestFacts;
  /** The snapshot captured when the request started; the request finishes on it. */
  readonly snapshot: Snapshot;
  readonly route: CompiledRoute;
  readonly params: Readonly<Record<string, string>>;
  /** Query parameters of the public URL, without the API key. */
  readonly query: Readonly<Record<string, string>>;
  readonly token: TokenRecord;
  readonly log: Logger;
  /** Time of the request, for `now` in mappings (fixed in golden runs). */
  readonly now: Date;
  /** The gateway's own base URL as this client reaches it, for download links in task answers. */
  readonly publicBase: string;
}

/** A request for a link, matched by the server; no key is asked for, the link is the credential. */
export interface LinkRequest {
  readonly requestId: string;
  readonly trace: TraceContext;
  readonly snapshot: Snapshot;
  readonly params: Readonly<Record<string, string>>;
  readonly log: Logger;
  readonly now: Date;
}
