/**
 * The format of a golden case (test/golden/<profile>/<case>.yaml), described in docs/testing.md under
 * "Golden tests". Everything the runner compares is in here; nothing else is implied.
 */
export interface GoldenCase extends GoldenStep {
  readonly description: string;
  /**
   * A task's life in several exchanges, run in order against one gateway (submit, then queries,
   * then a download). Task ids are deterministic: the n-th task of a case is `task_golden<n>000…`
   * (24 characters after `task_`), so later steps name it literally. With `steps`, the top-level
   * request fields are absent.
   */
  readonly steps?: readonly GoldenStep[];
}

/** One public request, what the vendor is answered, and what must be seen on both sides. */
export interface GoldenStep {
  /** The public request. The runner adds `Authorization: Bearer <golden key>` unless `auth: false`. */
  readonly request: {
    readonly method: string;
    readonly path: string;
    readonly headers?: Record<string, string>;
    readonly body?: unknown;
    /** Sent as is instead of `body` (malformed JSON cases). */
    readonly raw_body?: string;
    readonly auth?: boolean;
  };
  /** What the fake vendor answers, if the gateway calls it. */
  readonly upstream_response?: UpstreamAnswer;
  /** The vendor request the mapping must produce; null: the gateway must not call the vendor. */
  readonly upstream: RecordedRequest | null;
  /**
   * Further vendor calls of the same public request, in order (a synchronous route over an
   * asynchronous vendor submits, then queries): each what the vendor answers and must receive.
   */
  readonly then?: readonly { readonly upstream_response: UpstreamAnswer; readonly upstream: RecordedRequest | null }[];
  /**
   * The public answer; headers listed here are compared, others ignored. A body that is not JSON is
   * its text; an event stream (`text/event-stream`) is the list of its frames: each frame's data
   * parsed as JSON, or `{event, data}` for a frame that names its event.
   */
  readonly response: { readonly status: number; readonly headers?: Record<string, string>; readonly body: unknown };
}

/**
 * What the fake vendor answers: at most one of `body` (sent as JSON), `raw_body` (sent as text) and
 * `body_base64` (sent as those bytes: a PNG, a JPEG), with the case's headers. `content-type` is
 * `application/json` unless the headers say otherwise; a `body_base64` answer has none of its own.
 */
export interface UpstreamAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
  readonly raw_body?: string;
  readonly body_base64?: string;
  /**
   * A streamed answer (`text/event-stream` unless the headers say otherwise): its events in order,
   * each written on its own, `{event?, data}` as one SSE event (`data` sent as JSON) or `{raw}`, text
   * sent as it is (a malformed event, NDJSON lines).
   */
  readonly events?: readonly ({ readonly event?: string; readonly data: unknown } | { readonly raw: string })[];
  /** How a streamed answer ends: `end` (default) or `cut`, the connection destroyed after the last event. */
  readonly stream_end?: 'end' | 'cut';
}

/** A request as the fake vendor received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: Record<string, string>;
  readonly body: unknown;
}
