import type { Dispatcher } from 'undici';
import type { CompiledChannel } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Pools } from './pools.js';
import type { UpstreamRequest, UpstreamResponse } from './upstream-request.js';

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Failures that happen before a request is written: the vendor certainly never saw it. */
const UNSENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Translates a transport failure into the catalogue: timeouts are 504, anything else 502. The
 * error says whether the request can have reached the vendor (`details.upstream`), which decides
 * whether a task creation may be sent again elsewhere.
 */
export function transportError(err: unknown, channel: CompiledChannel): GatewayError {
  const e = err as { code?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const upstream = { phase: UNSENT_CODES.has(code) ? ('unsent' as const) : ('unknown' as const) };
  if (TIMEOUT_CODES.has(code)) {
    const which = code === 'UND_ERR_CONNECT_TIMEOUT' ? 'connect' : code === 'UND_ERR_HEADERS_TIMEOUT' ? 'send its answer headers' : 'finish its answer';
    return new GatewayError('upstream_timeout', `the upstream did not ${which} in time`, { cause: err, upstream });
  }
  const reset = code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
  return new GatewayError('bad_response', reset ? 'the upstream closed the connection' : 'the upstream could not be reached', {
    cause: { code, channel: channel.name, message: (err as Error).message },
    upstream,
  });
}

/**
 * Throws away an answer body not to be read. The listener comes first: destroying an undici body
 * makes it emit "Request aborted", which unheard would be an uncaught exception.
 */
export function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Where a request goes: the channel's origin (or an absolute URL's) and the path with the query, as sent. */
export function requestTarget(channel: Pick<CompiledChannel, 'origin'>, req: Pick<UpstreamRequest, 'path' | 'query'>): { origin: string; path: string } {
  const query = new URLSearchParams(req.query);
  if (/^https?:\/\//i.test(req.path)) {
    const url = new URL(req.path);
    for (const [k, v] of query) url.searchParams.set(k, v);
    return { origin: url.origin, path: url.pathname + url.search };
  }
  return { origin: channel.origin, path: query.size > 0 ? `${req.path}?${query.toString()}` : req.path };
}

/**
 * Sends a signed request through the pool of its origin (the channel's, or the origin of an
 * absolute URL) and returns the answer with its body unread, for streaming.
 */
export async function send(pools: Pools, channel: CompiledChannel, req: UpstreamRequest, signal?: AbortSignal): Promise<Dispatcher.ResponseData> {
  const { origin, path } = requestTarget(channel, req);
  const headers = { ...req.headers };
  if (req.body !== null && !('content-type' in headers)) headers['content-type'] = 'application/json';
  try {
    return await pools.get(channel, origin).request({
      method: req.method as 'POST',
      path,
      headers,
      body: req.body,
      headersTimeout: channel.timeouts.headersMs,
      bodyTimeout: channel.timeouts.bodyMs,
      signal,
    });
  } catch (err) {
    throw transportError(err, channel);
  }
}

/**
 * Reads an answer `send` returned whole, within the channel's body timeout (set on the request) and
 * the operation's size limit `maxBytes`. Read by its events rather than `for await`: the stream's
 * async iterator cost some 3 KB of heap per answer (an async generator, its end-of-stream watcher
 * and a promise per chunk; issue 41), these listeners a few hundred bytes.
 */
export function readAnswer(res: Dispatcher.ResponseData, channel: CompiledChannel, maxBytes: number): Promise<UpstreamResponse> {
  const declared = Number(res.headers['content-length'] ?? NaN);
  const tooLarge = () => new GatewayError('bad_response', `the upstream answer is larger than ${maxBytes} bytes`, { upstream: { phase: 'unknown' } });
  if (declared > maxBytes) {
    discard(res.body);
    return Promise.reject(tooLarge());
  }
  const body = res.body;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err: unknown, value?: UpstreamResponse) => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      if (value) resolve(value);
      else reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        settle(tooLarge());
        discard(body);
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      const [only] = chunks;
      settle(null, { status: res.statusCode, headers: res.headers, body: only && chunks.length === 1 ? only : Buffer.concat(chunks, size) });
    };
    const onError = (err: unknown) => settle(transportError(err, channel));
    // Closed with neither an end nor an error (destroyed): what `for await` reports as a premature close.
    const onClose = () => settle(transportError(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }), channel));
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    body.on('close', onClose);
  });
}
