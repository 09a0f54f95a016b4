import type { Logger } from 'pino';
import type { Snapshot } from '../config/snapshot.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RequestFacts } from '../pipeline/context.js';
import type { RequestIds } from './request-id.js';

/** What the server knows of a request once it is answered. */
export interface FinishedRequest {
  readonly ids: RequestIds;
  /** The client's address: the peer, or what a believed proxy says it is (trust-proxy.ts). */
  readonly client: string;
  readonly method: string;
  /** Route id (`admin` for the operator routes, `none` when no route matched): bounded, a label. */
  readonly route: string;
  /** The routes.yaml path template, or the operator path asked; null when no route matched. */
  readonly path: string | null;
  readonly facts: RequestFacts;
  readonly status: number;
  /** The error catalogue's code when the answer is an error the boundary wrote; null otherwise. */
  readonly error: string | null;
  readonly ms: number;
}

/** Paths scraped or probed every few seconds: their lines go to debug, so info is not flooded by them. */
const QUIET_PATHS = new Set(['/metrics', '/healthz', '/readyz']);
/** A model name longer than this is cut in the log line (the client chose it). */
const MAX_LOGGED_MODEL = 200;

/**
 * The `model` label of a request: a model some channel names exactly, the pattern (`name-*`) that
 * serves it, `other` for a name nothing serves, `none` when the request named none. Clients choose
 * model names; a label set must stay bounded by the configuration.
 */
export function modelLabel(snapshot: Snapshot, model: string | null): string {
  if (model === null) return 'none';
  if (snapshot.channelsByModel.has(model)) return model;
  const pattern = snapshot.channelsByPrefix.find((p) => model.startsWith(p.prefix));
  return pattern ? `${pattern.prefix}*` : 'other';
}

/**
 * What a finished request leaves behind: its count and duration in the metrics, and one access log
 * line (docs/admin-and-metrics.md, "Request ids, traces and the access log") with its ids, route, model, channel,
 * token id (never a key), status and time.
 */
export function recordRequest(log: Logger, metrics: Metrics, snapshot: Snapshot, r: FinishedRequest): void {
  const status = String(r.status);
  metrics.requests.count({ route: r.route, status });
  metrics.requestSeconds.record({ route: r.route, model: modelLabel(snapshot, r.facts.model), status }, r.ms / 1000);
  const line = {
    req_id: r.ids.requestId,
    ref: r.ids.ref,
    trace_id: r.ids.trace.traceId,
    span_id: r.ids.trace.spanId,
    client: r.client,
    method: r.method,
    route: r.route,
    path: r.path,
    model: r.facts.model === null ? null : r.facts.model.slice(0, MAX_LOGGED_MODEL),
    channel: r.facts.channel,
    token: r.facts.token,
    status: r.status,
    ms: Math.round(r.ms),
  };
  const out = accessLogger(log);
  if (r.path !== null && QUIET_PATHS.has(r.path)) out.debug(line, 'request');
  else out.info(line, 'request');
}

const accessLoggers = new WeakMap<Logger, Logger>();

/**
 * The process logger without its redaction paths, for the access line only: the line is built
 * above from ids, labels and numbers, never a headers object or a key, and walking the redaction's
 * wildcard paths over it was 2 % of the gateway's CPU (bench/overhead, issue #14).
 */
function accessLogger(log: Logger): Logger {
  let out = accessLoggers.get(log);
  if (!out) {
    out = log.child({}, { redact: { paths: [] } });
    accessLoggers.set(log, out);
  }
  return out;
}
