import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { catalogue } from '../errors/catalogue.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Mapping } from '../mapping/mapping.js';

/** The body of an error answer: shape A or shape B of docs/spec/interface.md section 7. */
export function errorBody(err: GatewayError): unknown {
  if (catalogue[err.code].shape === 'B') return { code: err.code, message: err.message, data: null };
  return { error: { message: err.message, type: 'svc_api_error', param: err.details.param ?? '', code: err.code } };
}

/**
 * The one place where a failure becomes HTTP. Anything that is not a GatewayError is a fault of
 * ours: it is logged with its stack and answered as `internal_error` without internals.
 */
export function sendError(res: ServerResponse, thrown: unknown, log: Logger, requestId: string): void {
  const err = thrown instanceof GatewayError ? thrown : new GatewayError('internal_error', `internal error (request ${requestId})`, { cause: thrown });
  const status = catalogue[err.code].status;
  const fields = { req_id: requestId, code: err.code, channel: err.details.channel, cause: err.details.cause };
  if (!(thrown instanceof GatewayError)) log.error({ ...fields, err: thrown }, err.message);
  // The store being away is logged once when it goes and once when it is back, not per request refused meanwhile.
  else if (status >= 500 && err.code !== 'store_unavailable') log.warn(fields, err.message);
  else log.info(fields, err.message);
  if (res.headersSent) {
    // A stream that failed after its first event has already written the protocol's error event and
    // ended (streamErrorEvent); anything else is too late for a clean answer: cut the connection so
    // the client sees a failure, not a short body.
    if (!res.writableEnded) res.destroy();
    return;
  }
  const body = JSON.stringify(errorBody(err));
  const headers: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    ...err.details.headers,
  };
  if (err.details.retryAfter !== undefined && waitMeansSomething(status)) headers['retry-after'] = Math.max(1, Math.ceil(err.details.retryAfter));
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * The error event a stream ends with when it fails after its first event (docs/routes-yaml.md,
 * "Streams"): the route's `stream.error` mapping over `{code, message, param, status, error}` (the
 * usual error body as `error`), which gives `{event?, data}` in the client's protocol; without one,
 * or when it fails, `event: error` with the usual body. The status can no longer be sent: it is
 * only in the event.
 */
export async function streamErrorEvent(err: GatewayError, mapping: Mapping | null): Promise<{ event: string | null; data: unknown }> {
  const body = errorBody(err);
  const fallback = { event: 'error', data: body };
  if (!mapping) return fallback;
  try {
    const out = (await mapping.evaluate({
      code: err.code,
      message: err.message,
      param: err.details.param ?? '',
      status: catalogue[err.code].status,
      error: body,
    })) as { event?: unknown; data?: unknown } | undefined;
    if (!out || typeof out !== 'object' || out.data === undefined) return fallback;
    return { event: typeof out.event === 'string' && out.event !== '' ? out.event : null, data: out.data };
  } catch {
    return fallback;
  }
}

/**
 * Whether an answer of this status carries `Retry-After`: the two statuses HTTP gives it a meaning
 * for, 429 (shape B, RFC 6585) and 503 (shape A, RFC 9110), as the OpenAPI document says. A wait
 * stated with a 4xx that blames the request would only invite the same refusal again; a 502 or 504
 * says the call failed, not when the vendor will be back.
 */
function waitMeansSomething(status: number): boolean {
  return status === 429 || status === 503;
}

function rawAnswer(err: GatewayError): string {
  const status = catalogue[err.code].status;
  const body = JSON.stringify(errorBody(err));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

/**
 * Answers a request Node's HTTP parser refused before any handler ran (malformed request line,
 * headers too large, a client too slow): the same shapes, written on the raw socket, then closed.
 * When an earlier request of the same connection is still being answered, that answer goes first:
 * HTTP answers in request order, and the earlier request may already be charged and upstream.
 */
export function sendClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const gw =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new GatewayError('request_timeout', 'the request was not received in time')
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? new GatewayError('invalid_request', 'the request headers are too large')
        : new GatewayError('invalid_request', 'the HTTP request is malformed');
  // Node keeps the response in flight on the socket here; it is not part of the typed API.
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (pending && !pending.req.complete) {
    // A body that did not arrive in time: its handler is still waiting for it, so the answer goes
    // out through that request's own response (it has written nothing yet), then the socket closes.
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && !pending.headersSent && socket.writable) {
      pending.once('finish', () => socket.destroy());
      const body = JSON.stringify(errorBody(gw));
      pending.writeHead(catalogue[gw.code].status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      });
      pending.end(body);
      return;
    }
    // The error cut the in-flight request itself (the peer closed mid-body): nobody is left to answer.
    socket.destroy();
    return;
  }
  if (pending && !pending.writableFinished) {
    pending.once('finish', () => endWith(socket, rawAnswer(gw)));
    pending.once('close', () => socket.destroy());
    return;
  }
  endWith(socket, rawAnswer(gw));
}

/** Writes a last answer and closes the socket fully: the server allows half-open sockets, and a peer that never closes its side must not hold one open. */
function endWith(socket: Duplex, answer: string): void {
  socket.end(answer, () => socket.destroy());
}

/**
 * Answers plain HTTP sent to the HTTPS port (plain-http-on-tls.ts) on its raw socket: a 400 in
 * clear, since the client cannot read anything else, saying to call the same address with https.
 */
export function sendPlainHttpOnTls(socket: Duplex, host: string | null): void {
  const where = host === null ? 'https:// instead of http://' : `https://${host}/ instead of http://${host}/`;
  endWith(socket, rawAnswer(new GatewayError('invalid_request', `this port speaks HTTPS only: call ${where}`)));
}

/** Answers a CONNECT request (no route ever tunnels) on its raw socket. */
export function sendConnectRefused(socket: Duplex): void {
  endWith(socket, rawAnswer(new GatewayError('method_not_allowed', 'CONNECT is not supported')));
}
