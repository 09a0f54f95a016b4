/**
 * The one catalogue of error codes the gateway can answer with. Every failure anywhere in the
 * engine is a GatewayError carrying one of these codes; only src/http/error-boundary.ts turns it
 * into HTTP. The error table, docs/generated/errors.md, is generated from this list (npm run docs) and checked by test/docs/errors.test.ts.
 */
export const catalogue = {
  invalid_request: {
    status: 400,
    shape: 'A',
    when: 'The body or the URL is malformed: bad JSON, a missing, extra or mistyped field, invalid base64, nesting too deep. `error.param` names the field.',
  },
  invalid_api_key: {
    status: 401,
    shape: 'A',
    when: 'No API key was sent, or the key is unknown or disabled.',
  },
  insufficient_user_quota: {
    status: 402,
    shape: 'A',
    when: "The token's remaining quota is smaller than the price of the request (402 Payment Required: the request itself is fine, it is unpaid).",
  },
  model_not_allowed: {
    status: 403,
    shape: 'A',
    when: "The model exists but the token's group or its list of allowed models does not include it.",
  },
  ip_not_allowed: {
    status: 403,
    shape: 'A',
    when: "The token has an IP allow-list (`allowed_ips`) and the request came from an address outside it (the client's address as `GATEWAY_TRUST_PROXY` finds it); the message names that address, never the list. Checked with the key, before its rate limits count the request.",
  },
  not_found: {
    status: 404,
    shape: 'A',
    when: "No route has this path, or no resource of this API key (an asset) has this id: another API key's is answered the same; or a download asked for a `variant` the completed task has none of (a `thumbnail` its vendor did not make); or a link that is unknown, has expired, or belonged to a deleted API key.",
  },
  model_not_found: {
    status: 404,
    shape: 'A',
    when: 'The route does not list this model, or no configured channel serves it; on `GET /v1/models/{model}`, also a model this API key may not use (answered like an unknown one).',
  },
  task_not_found: {
    status: 404,
    shape: 'A',
    when: "No task has this id, or it belongs to another API key (answered alike), or it is the caller's own task of another route's family (a video id on an audio route): the message then says so and names a route that serves it.",
  },
  method_not_allowed: {
    status: 405,
    shape: 'A',
    when: 'The path exists but not with this method; the `Allow` header lists the methods it has.',
  },
  request_timeout: {
    status: 408,
    shape: 'A',
    when: 'The client did not send its headers within 30 s (`GATEWAY_HEADERS_TIMEOUT_MS`) or its whole request, body included, within 300 s (`GATEWAY_REQUEST_TIMEOUT_MS`); the connection is closed after the answer.',
  },
  task_not_ready: {
    status: 409,
    shape: 'A',
    when: 'A download was asked for a task that is not completed, or that has no result of that index; or a delete was asked for a task still under way (only a completed or failed task can be deleted).',
  },
  token_in_use: {
    status: 409,
    shape: 'A',
    when: 'Operators only: `DELETE /admin/tokens/{token_id}` found the token still has unfinished tasks or requests in flight, whose refund or settlement needs it; disable it, and delete it once they have ended.',
  },
  token_name_taken: {
    status: 409,
    shape: 'A',
    when: 'Operators only: `POST /admin/tokens` or `POST /admin/tokens/{token_id}/name` asked for a name another token has; token names are unique.',
  },
  payload_too_large: {
    status: 413,
    shape: 'A',
    when: "The body is larger than the route's `body.max_bytes`, or than the whole memory budget for bodies (`GATEWAY_BODY_BUDGET_MB`), so that it could never be read.",
  },
  unsupported_media_type: {
    status: 415,
    shape: 'A',
    when: 'The `Content-Type` is not one the route accepts (`application/json` for JSON routes).',
  },
  config_invalid: {
    status: 422,
    shape: 'A',
    when: 'Operators only: `POST /admin/reload` found configuration files that do not load; the message lists the problems as `file:line:column: message`, and the previous configuration keeps serving.',
  },
  too_many_requests: {
    status: 429,
    shape: 'B',
    when: "The API key is at one of its rate limits (`rpm_limit`: `Retry-After` is the wait until the window frees a request; `max_parallel`: `Retry-After: 1`), or every channel that could serve the request is at its `max_concurrency` or answered 429, or the group is at its `max_concurrency`, and the line in front of that limit is full or the wait in it ran out (`queue`); retry after `Retry-After`: for channels, the shortest wait a vendor stated (its error mapping's `retry_after`, else its `Retry-After` header), else `routing.retry_after_s`.",
  },
  internal_error: {
    status: 500,
    shape: 'A',
    when: "A fault inside the gateway, including a request mapping that failed for a reason other than the client's values (it went over its budget of work, say; see below). Logged with a request id.",
  },
  bad_response: {
    status: 502,
    shape: 'A',
    when: 'The upstream failed: it could not be reached, reset the connection, answered malformed or oversized data, a 5xx, or refused the channel credentials.',
  },
  upstream_unavailable: {
    status: 503,
    shape: 'A',
    when: 'The upstream says the model is temporarily overloaded or unavailable, or every channel for the model is taken out by its circuit breaker (`Retry-After`: the wait the vendor stated, or when a probe may go); or a download whose file the result archive holds while the archive is unreachable, and the vendor no longer serves the file.',
  },
  server_busy: {
    status: 503,
    shape: 'A',
    when: 'The gateway holds as many request bodies as its memory budget allows (`GATEWAY_BODY_BUDGET_MB`); the body was not read and nothing was charged or sent; retry after `Retry-After`.',
  },
  store_unavailable: {
    status: 503,
    shape: 'A',
    when: "The gateway's own store (PostgreSQL) cannot be reached or did not answer in time, so the request could not be served or its outcome recorded; retry after `Retry-After`. A task submission cut off this way is failed and refunded, or followed and settled, like one cut off by a crash.",
  },
  upstream_timeout: {
    status: 504,
    shape: 'A',
    when: 'The upstream did not connect, send its headers or finish its body within the channel timeouts.',
  },
} as const satisfies Record<string, { status: number; shape: 'A' | 'B'; when: string }>;

/** A stable error code of the public interface. */
export type ErrorCode = keyof typeof catalogue;

/** Tells whether a string (for example one a profile's error mapping produced) is a catalogue code. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(catalogue, code);
}
