import { createServer, type IncomingMessage, type Server, type ServerOptions as HttpOptions, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Logger } from 'pino';
import type { KeyedRoute, Snapshot } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Metrics } from '../metrics/metrics.js';
import type { LinkRequest, RequestContext } from '../pipeline/context.js';
import { traceparentOf } from '../upstream/trace-headers.js';
import { type FinishedRequest, recordRequest } from './access-log.js';
import { Arrival, type Door, type Seen as ArrivalSeen } from './arrival.js';
import type { BodyBudget } from './body-budget.js';
import { allowActual, answerPreflight, type CorsPolicy, isPreflight } from './cors.js';
import { drainUnread } from './drain-unread.js';
import { sendClientError, sendConnectRefused, sendError } from './error-boundary.js';
import { expectsContinue, sendContinue } from './expect-continue.js';
import { matchRoute, routesOnPath } from './match-route.js';
import { answerPlainHttpOnTls } from './plain-http-on-tls.js';
import { requestIds } from './request-id.js';
import { isRootRequest, sendRootAnswer } from './root-answer.js';
import type { TlsPair } from './tls.js';
import { clientAddress, TRUST_NOBODY, type TrustProxy } from './trust-proxy.js';

/** What the server hands a request to once its route is matched. */
export interface ServerHandlers {
  /** The operator routes: `owns` says which paths are theirs (they never reach routes.yaml matching). */
  readonly admin: {
    owns(pathname: string): boolean;
    handle(req: IncomingMessage, res: ServerResponse, pathname: string, search: URLSearchParams | null, snapshot: Snapshot, requestId: string): Promise<void>;
  };
  /** A public route's stages (operations/stages.ts), from authentication to the answer. */
  serve(ctx: RequestContext<KeyedRoute>): Promise<void>;
  /** The `link-content` route (operations/link-content.ts): no key, the link is the credential. */
  link(req: IncomingMessage, res: ServerResponse, link: LinkRequest): Promise<void>;
}

/** What the server is built from. */
export interface ServerOptions {
  /** The current snapshot; read once when each request starts. */
  readonly snapshot: () => Snapshot;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly bodies: BodyBudget;
  readonly clock: () => Date;
  /** The gateway's public base URL for download links; default: from the request's Host (and X-Forwarded-* of a believed proxy). */
  readonly publicUrl?: string;
  /** GATEWAY_TRUST_PROXY: the proxies believed for the client's address and origin; default nobody. */
  readonly trustProxy?: TrustProxy;
  /** GATEWAY_CORS_ORIGINS: which browser origins may call the public routes; default none (no CORS header). */
  readonly cors?: CorsPolicy | null;
  /** GATEWAY_TLS_CERT / GATEWAY_TLS_KEY: serve HTTPS with this pair (tls.ts reloads it); default HTTP. */
  readonly tls?: TlsPair;
  /** A client's headers must arrive within this; default 30 s. */
  readonly headersTimeoutMs?: number;
  /** A client's whole request (headers and body) must arrive within this; default 300 s. */
  readonly requestTimeoutMs?: number;
  readonly handlers: ServerHandlers;
  /** Hears of every request once it is answered, after its access line (the request log: src/records/). */
  readonly onFinished?: (r: FinishedRequest) => void;
}

const DONE: Promise<void> = Promise.resolve();

/** After the answer: what is left of the request's body is read and dropped (drain-unread.ts). One function for every answer, not a closure each. */
function drainOnFinish(this: ServerResponse): void {
  drainUnread(this.req);
}

/** How often Node looks for clients past their time (its default, 30 s, made a 300 s limit 330 s). */
const TIMEOUT_CHECK_MS = 1_000;

function splitUrl(raw: string): { pathname: string; search: URLSearchParams | null } {
  const q = raw.indexOf('?');
  if (q === -1) return { pathname: raw, search: null };
  return { pathname: raw.slice(0, q), search: new URLSearchParams(raw.slice(q + 1)) };
}

/** The public URL's query for mappings: without the parameters that may carry the client's key. */
function publicQuery(search: URLSearchParams | null, keyParams: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!search) return out;
  // The key must never reach a mapping, a log or a vendor.
  for (const [k, v] of search) if (!keyParams.includes(k)) out[k] = v;
  return out;
}

/** What the request handler learnt on the way, for the metrics, the access log and the error answer. */
interface Seen extends ArrivalSeen {
  /** Route id, never the raw path: a path is the client's to choose, a label set is not. */
  route: string;
  /** The route's path template, or the operator path; for the access log. */
  path: string | null;
  /** The error catalogue's code of the answer, when the error boundary wrote it. */
  error: string | null;
}

/**
 * The HTTP server: splits the URL, hands operator paths to the admin routes, matches the public
 * route and hands the request's context to its stages (authentication, the body read within the
 * memory budget, …: operations/stages.ts); every failure on the way becomes an answer in one place
 * (error-boundary.ts).
 */
export function createHttpServer(opts: ServerOptions): Server {
  const { log, metrics } = opts;
  const trust = opts.trustProxy ?? TRUST_NOBODY;
  const cors = opts.cors ?? null;
  const door: Door = { bodies: opts.bodies, clock: opts.clock, publicUrl: opts.publicUrl, trust };

  /** Hands the request on; may throw at once (no route, a stage that refused before any wait), which `onRequest` answers as a rejection. */
  function handle(req: IncomingMessage, res: ServerResponse, requestId: string, seen: Seen): Promise<void> {
    const snapshot = opts.snapshot();
    const { pathname, search } = splitUrl(req.url ?? '/');
    if (opts.handlers.admin.owns(pathname)) {
      seen.route = 'admin';
      seen.path = pathname.slice(0, 200);
      sendContinue(req, res, seen);
      return opts.handlers.admin.handle(req, res, pathname, search, snapshot, requestId);
    }
    if (cors !== null && isPreflight(req)) {
      const routes = routesOnPath(snapshot, pathname);
      // A path with no route is answered 404 below, as any other method would be.
      if (routes.length > 0) {
        seen.route = 'preflight';
        seen.path = routes[0]?.path ?? null;
        answerPreflight(cors, req, res, routes);
        return DONE;
      }
    }
    if (isRootRequest(req, pathname) && routesOnPath(snapshot, pathname).length === 0) {
      // No routes.yaml route: counted and left out of the request log as any unmatched path is.
      seen.path = '/';
      sendRootAnswer(req, res);
      return DONE;
    }
    let matched: ReturnType<typeof matchRoute>;
    try {
      matched = matchRoute(snapshot, req.method ?? 'GET', pathname, search);
    } catch (err) {
      // A 404 or 405 is readable by the page too, so its script can say what went wrong.
      if (cors !== null) allowActual(cors, req, res, null);
      throw err;
    }
    const { route, params } = matched;
    if (cors !== null) allowActual(cors, req, res, route);
    seen.route = route.id;
    seen.path = route.path;
    if (route.kind === 'link-content') return opts.handlers.link(req, res, { requestId, trace: seen.ids.trace, snapshot, params, log, now: opts.clock() });
    const query = publicQuery(search, snapshot.keyQueryParams);
    return opts.handlers.serve(new Arrival(route, params, query, search, snapshot, log, req, res, seen, door));
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const ids = requestIds(req.headers);
    const { requestId } = ids;
    const started = performance.now();
    const seen: Seen = {
      ids,
      route: 'none',
      path: null,
      facts: { model: null, channel: null, token: null, units: null, task: null },
      error: null,
      continued: false,
    };
    // On every answer, whoever writes it (an operation, the admin routes, the error boundary).
    res.setHeader('x-request-id', requestId);
    res.setHeader('traceparent', traceparentOf(ids.trace));
    res.once('finish', drainOnFinish);
    const finish = () => {
      const { route, path, facts, error } = seen;
      const finished: FinishedRequest = {
        ids,
        client: clientAddress(req, trust),
        method: req.method ?? '',
        route,
        path,
        facts,
        status: res.statusCode,
        error,
        ms: performance.now() - started,
      };
      recordRequest(log, metrics, opts.snapshot(), finished);
      opts.onFinished?.(finished);
    };
    const fail = (err: unknown) => {
      try {
        // Refused before it was told to send its body: the client will not send it, and the
        // connection must not wait for it.
        if (expectsContinue(req) && !seen.continued && !res.headersSent) res.setHeader('connection', 'close');
        // Refused with its body still arriving: the connection stays open while the rest is read
        // and dropped (drain-unread.ts), even for a client that asked to close it; Node would
        // otherwise close it at once and the client, still uploading, would lose the answer to a reset.
        else if (!req.complete && !res.headersSent) res.setHeader('connection', 'keep-alive');
        seen.error = err instanceof GatewayError ? err.code : 'internal_error';
        sendError(res, err, log, requestId);
      } finally {
        finish();
      }
    };
    // One then for both outcomes, not a catch and a finally: each link of a promise chain is a
    // promise and its closures (issue 41). A stage that refuses before any wait throws here.
    let handled: Promise<void>;
    try {
      handled = handle(req, res, requestId, seen);
    } catch (err) {
      handled = Promise.reject(err);
    }
    handled.then(finish, fail);
  };
  const options: HttpOptions = { maxHeaderSize: 16 * 1024, connectionsCheckingInterval: TIMEOUT_CHECK_MS };
  // The same handler either way: HTTPS changes the transport, nothing a request sees but its scheme.
  let server: Server;
  if (opts.tls) {
    const https = createHttpsServer({ ...options, cert: opts.tls.cert, key: opts.tls.key }, onRequest);
    answerPlainHttpOnTls(https, opts.headersTimeoutMs ?? 30_000);
    server = https;
  } else server = createServer(options, onRequest);
  // Ours to answer: `100 Continue` goes out only once the body is admitted (see handle), so a
  // refused client never sends it. Node would otherwise say Continue to everyone at once.
  server.on('checkContinue', onRequest);
  server.on('clientError', sendClientError);
  server.on('connect', (_req: IncomingMessage, socket) => sendConnectRefused(socket));
  // `Expect: 100-continue` is answered by the handler (checkContinue above); any other expectation
  // gets our shape, not a bare 417.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const err = new GatewayError('invalid_request', `the Expect header ${JSON.stringify(String(req.headers.expect).slice(0, 100))} is not supported`, {
      headers: { connection: 'close' },
    });
    const ids = requestIds(req.headers);
    res.setHeader('traceparent', traceparentOf(ids.trace));
    sendError(res, err, log, ids.requestId);
  });
  // A client that stalls while sending headers or body gets 408 and is cut off instead of holding a
  // socket (error-boundary.ts answers it, also when its handler is still waiting for the body).
  server.headersTimeout = opts.headersTimeoutMs ?? 30_000;
  server.requestTimeout = opts.requestTimeoutMs ?? 300_000;
  server.keepAliveTimeout = 65_000;
  return server;
}
