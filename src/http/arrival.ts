import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { KeyedRoute, Snapshot } from '../config/snapshot.js';
import { UNAUTHENTICATED } from '../pipeline/authenticate.js';
import type { RequestContext, RequestFacts } from '../pipeline/context.js';
import type { ChannelChoice } from '../routing/rank-channels.js';
import type { TaskRecord, TokenRecord } from '../store/store.js';
import type { BodyBudget } from './body-budget.js';
import { sendContinue } from './expect-continue.js';
import { readJsonBody } from './read-json.js';
import type { RequestIds } from './request-id.js';
import { clientAddress, requestOrigin, type TrustProxy } from './trust-proxy.js';

/** What the server lends the context of every request: the memory budget for bodies, the clock, its public URL. */
export interface Door {
  readonly bodies: BodyBudget;
  readonly clock: () => Date;
  /** The gateway's public base URL; undefined: from the request's Host. */
  readonly publicUrl: string | undefined;
  /** The proxies believed for X-Forwarded-Proto and X-Forwarded-Host when there is no public URL. */
  readonly trust: TrustProxy;
}

/** What the server learns of a request on its way, shared with its error answer and access line. */
export interface Seen {
  readonly ids: RequestIds;
  readonly facts: RequestFacts;
  /** `100 Continue` was sent. */
  continued: boolean;
}

const NO_CHANNELS: readonly ChannelChoice[] = Object.freeze([]);

/**
 * The context of one public request as the server builds it once its route is matched: what the
 * server knows, the body read on the stages' demand (`receive`), and empty slots the stages fill
 * (pipeline/context.ts). A class, so a request builds one object and no closure.
 */
export class Arrival<R extends KeyedRoute> implements RequestContext<R> {
  readonly requestId: string;
  readonly ref: string;
  readonly trace: RequestIds['trace'];
  readonly facts: RequestFacts;
  now: Date;
  token: TokenRecord = UNAUTHENTICATED;
  body: unknown = undefined;
  model = '';
  warning: string | null = null;
  holder: string | null = null;
  source: { readonly task: TaskRecord; readonly choice: ChannelChoice } | null = null;
  streamed = false;
  candidates: readonly ChannelChoice[] = NO_CHANNELS;
  served = '';
  answer: unknown = undefined;
  readonly #seen: Seen;
  readonly #door: Door;

  constructor(
    readonly route: R,
    readonly params: Readonly<Record<string, string>>,
    readonly query: Readonly<Record<string, string>>,
    readonly search: URLSearchParams | null,
    readonly snapshot: Snapshot,
    readonly log: Logger,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    seen: Seen,
    door: Door,
  ) {
    this.requestId = seen.ids.requestId;
    this.ref = seen.ids.ref;
    this.trace = seen.ids.trace;
    this.facts = seen.facts;
    this.now = door.clock();
    this.#seen = seen;
    this.#door = door;
  }

  /**
   * Where this client reached us: the configured public URL, else the request's own origin (a
   * believed proxy's X-Forwarded-Proto and -Host: trust-proxy.ts). Only answers that carry links
   * ask: other requests never pay for it.
   */
  get publicBase(): string {
    const { publicUrl, trust } = this.#door;
    if (publicUrl) return publicUrl.replace(/\/+$/, '');
    return requestOrigin(this.req, trust);
  }

  /** The client's address (trust-proxy.ts): only a token with an IP allow-list asks. */
  get clientAddress(): string {
    return clientAddress(this.req, this.#door.trust);
  }

  /**
   * Reads the body of a route that takes one, then stamps the request's time. Room for the body is
   * taken before a byte of it is read (and before a client waiting on `Expect: 100-continue` is
   * told to send it), so a burst of large bodies is refused at the door.
   */
  receive(): Promise<unknown> {
    const limits = this.route.body;
    if (!limits) {
      this.now = this.#door.clock();
      return Promise.resolve(undefined);
    }
    try {
      const admission = this.#door.bodies.admit(this.req, this.res, limits.maxBytes);
      sendContinue(this.req, this.res, this.#seen);
      // Stamped in the read's own step, not an async frame or a then of its own (issue 41).
      return readJsonBody(this.req, limits, admission, (body) => {
        this.now = this.#door.clock();
        return body;
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
