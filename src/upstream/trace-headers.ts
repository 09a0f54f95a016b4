import type { UpstreamRequest } from './upstream-request.js';

/**
 * A W3C trace context (https://www.w3.org/TR/trace-context/) as one request carries it: the
 * trace it belongs to, the gateway's own span in it, the trace flags, and the `tracestate` of the
 * caller's trace, passed on as it came.
 */
export interface TraceContext {
  /** 32 lower-case hex digits, never all zero. */
  readonly traceId: string;
  /** Our span: 16 lower-case hex digits, new for every request; the parent of every vendor call it makes. */
  readonly spanId: string;
  /** 2 lower-case hex digits (`01`: sampled), the caller's when its trace is continued. */
  readonly flags: string;
  /** The caller's `tracestate`, when it sent a valid traceparent and a bounded tracestate; else null. */
  readonly state: string | null;
}

/** What a vendor call says about the public request it serves (docs/admin-and-metrics.md, "Request ids, traces and the access log"). */
export interface CallerIds {
  /** The request id the client sees in `x-request-id`. */
  readonly requestId: string;
  readonly trace: TraceContext;
}

/** The `traceparent` of our span: version 00, the trace, our span id, the flags. */
export function traceparentOf(trace: TraceContext): string {
  // Made once per trace context: a request writes it on its answer and on each vendor call (issue 41).
  let parent = parents.get(trace);
  if (parent === undefined) {
    parent = `00-${trace.traceId}-${trace.spanId}-${trace.flags}`;
    parents.set(trace, parent);
  }
  return parent;
}

const parents = new WeakMap<TraceContext, string>();

/**
 * Adds `x-request-id`, `traceparent` (and `tracestate`) to a vendor request. Called before the
 * request is signed, so a scheme that signs headers signs what is sent; a header of the same name
 * the profile's mapping set (a vendor that wants its own) is kept.
 */
export function addCallerHeaders(req: UpstreamRequest, ids: CallerIds | undefined): void {
  if (!ids) return;
  // Looked up among the mapping's headers as they were (not among those added here), with no set or array made (issue 41).
  const hasId = hasHeader(req.headers, 'x-request-id');
  const hasParent = hasHeader(req.headers, 'traceparent');
  const hasState = ids.trace.state !== null && hasHeader(req.headers, 'tracestate');
  if (!hasId) req.headers['x-request-id'] = ids.requestId;
  if (!hasParent) req.headers.traceparent = traceparentOf(ids.trace);
  if (ids.trace.state !== null && !hasState) req.headers.tracestate = ids.trace.state;
}

/** Whether `headers` has `name` (lower case), whatever the case it was written in. */
function hasHeader(headers: Record<string, string>, name: string): boolean {
  // toLowerCase makes a string even of one already in lower case: only for a key that can match.
  for (const k in headers) if (k.length === name.length && (k === name || k.toLowerCase() === name)) return true;
  return false;
}
