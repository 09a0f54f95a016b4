import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { CompiledRoute, Snapshot } from '../config/snapshot.js';
import type { ChannelChoice } from '../routing/rank-channels.js';
import type { TaskRecord, TokenRecord } from '../store/store.js';
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
  /** Units the request charged once it succeeded (the request log): a settled hold, a task's price at submission. */
  units: number | null;
  /** The task the request submitted or read (the last, for a query of several). */
  task: string | null;
}

/**
 * What one public request carries through its stages (src/operations/stages.ts): one object per
 * request, built by the server (src/http/arrival.ts) with what it knows when the route is matched;
 * the stages then fill in what they learn, each field by the stage named, in the list's order, so a
 * stage reads only what an earlier stage wrote. `R` is the route's variant: each stage list is typed
 * by its kind, so its stages read the fields that kind has.
 */
export interface RequestContext<R extends CompiledRoute = CompiledRoute> {
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
  readonly route: R;
  readonly params: Readonly<Record<string, string>>;
  /** Query parameters of the public URL, without the API key. */
  readonly query: Readonly<Record<string, string>>;
  readonly log: Logger;
  /**
   * Time of the request, for `now` in mappings, records and holds (fixed in golden runs): stamped
   * by `receive` once the request has arrived whole (before it: when the route was matched).
   */
  now: Date;
  /** The client's address as GATEWAY_TRUST_PROXY finds it (src/http/trust-proxy.ts), for a token's IP allow-list. */
  readonly clientAddress: string;
  /** The gateway's own base URL as this client reaches it, for download links in task answers. */
  readonly publicBase: string;
  /** The client's request (its headers, a download's Range) and the answer the last stage writes. */
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The raw query string, the key's parameters included: only authentication reads it. */
  readonly search: URLSearchParams | null;
  /**
   * Reads the rest of the request, its body when the route takes one (within the route's limits
   * and the process's memory budget), and stamps `now`: the server does it (src/http/arrival.ts).
   */
  receive(): Promise<unknown>;

  /** `authenticate`: the caller's token (before it: UNAUTHENTICATED, which may do nothing). */
  token: TokenRecord;
  /** `receiveBody`: the parsed body; undefined for a route without one. */
  body: unknown;
  /** `readModel` (or, for a remix that names none, `sourceTask`): the public model asked for. */
  model: string;
  /** `checkFamily`: a Warning header's text when the family takes the mode but does not recommend it. */
  warning: string | null;
  /** `ownResources`: the channel that holds the resources the request names; null when it names none. */
  holder: string | null;
  /** `sourceTask`: a remix's source task and the one channel that can work on it. */
  source: { readonly task: TaskRecord; readonly choice: ChannelChoice } | null;
  /** `chooseChannels`: whether the answer is a stream of events (routes.yaml `stream`: the route always streams, or the client asked). */
  streamed: boolean;
  /** `rankChannels`: the channels to try, in order. */
  candidates: readonly ChannelChoice[];
  /** `callWithFallback`: the channel whose call served the request. */
  served: string;
  /** The operation's answer, which `respond` writes. */
  answer: unknown;
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
