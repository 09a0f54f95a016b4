import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';
import type { CompiledChannel } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Pools } from './pools.js';
import type { UpstreamRequest, UpstreamResponse } from './upstream-request.js';

/** undici's own header parser (what its request API gives as `headers`), loaded as pools.ts loads the pool: without the package index. */
const parseHeaders = (createRequire(import.meta.url)('undici/lib/core/util.js') as { parseHeaders(raw: Buffer[]): Record<string, string | string[]> })
  .parseHeaders;

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
  // Most calls have no query: no URLSearchParams made for them.
  if (isEmpty(req.query) && !/^https?:\/\//i.test(req.path)) return { origin: channel.origin, path: req.path };
  const query = new URLSearchParams(req.query);
  if (/^https?:\/\//i.test(req.path)) {
    const url = new URL(req.path);
    for (const [k, v] of query) url.searchParams.set(k, v);
    return { origin: url.origin, path: url.pathname + url.search };
  }
  return { origin: channel.origin, path: query.size > 0 ? `${req.path}?${query.toString()}` : req.path };
}

/** Whether an object has no enumerable key (without the array Object.keys makes). */
function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/**
 * Sends a signed request through the pool of its origin (the channel's, or the origin of an
 * absolute URL) and returns the answer with its body unread, for streaming.
 */
export function send(pools: Pools, channel: CompiledChannel, req: UpstreamRequest, signal?: AbortSignal): Promise<Dispatcher.ResponseData> {
  let target: { origin: string; path: string };
  try {
    target = requestTarget(channel, req);
  } catch (err) {
    return Promise.reject(err);
  }
  const { origin, path } = target;
  try {
    const headers = sentHeaders(req);
    // A then, not an async frame: an await is a few hundred bytes of heap (issue 41).
    return pools
      .get(channel, origin)
      .request({
        method: req.method as 'POST',
        path,
        headers,
        body: req.body,
        headersTimeout: channel.timeouts.headersMs,
        bodyTimeout: channel.timeouts.bodyMs,
        signal,
      })
      .catch((err: unknown) => {
        throw transportError(err, channel);
      });
  } catch (err) {
    return Promise.reject(transportError(err, channel));
  }
}

/** The headers a request is sent with: its own, as the mapping said them (map-request.ts), a JSON body's type added when none is said. */
function sentHeaders(req: UpstreamRequest): Record<string, string> {
  return req.body !== null && !('content-type' in req.headers) ? { ...req.headers, 'content-type': 'application/json' } : req.headers;
}

const answerTooLarge = (maxBytes: number) =>
  new GatewayError('bad_response', `the upstream answer is larger than ${maxBytes} bytes`, { upstream: { phase: 'unknown' } });

/**
 * `send` and `readAnswer` in one: the request sent and its answer read whole, with the same
 * outcomes (a transport failure as transportError, an answer over `maxBytes` refused and cut). Sent
 * through undici's dispatch with a handler of its own (`WholeAnswer`) rather than its request API,
 * which wraps every answer in a Readable stream and an async resource only for it to be read to
 * its end here: about 3 KB of heap a call (issue 41).
 */
export function sendForAnswer(pools: Pools, channel: CompiledChannel, req: UpstreamRequest, maxBytes: number): Promise<UpstreamResponse> {
  let target: { origin: string; path: string };
  try {
    target = requestTarget(channel, req);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise((resolve, reject) => {
    const answer = new WholeAnswer(channel, maxBytes, resolve, reject);
    try {
      pools.get(channel, target.origin).dispatch(
        {
          method: req.method as 'POST',
          path: target.path,
          headers: sentHeaders(req),
          body: req.body,
          headersTimeout: channel.timeouts.headersMs,
          bodyTimeout: channel.timeouts.bodyMs,
        },
        answer,
      );
    } catch (err) {
      answer.onError(err);
    }
  });
}

/** An undici dispatch handler (its callback interface) that collects one answer whole, within a size limit. */
class WholeAnswer implements Dispatcher.DispatchHandler {
  #abort: ((err?: Error) => void) | null = null;
  #status = 0;
  #headers: Record<string, string | string[]> = {};
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #settled = false;

  constructor(
    readonly channel: CompiledChannel,
    readonly maxBytes: number,
    readonly resolve: (answer: UpstreamResponse) => void,
    readonly reject: (err: unknown) => void,
  ) {}

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // An informational answer (1xx): the real one follows.
    if (statusCode < 200) return true;
    this.#status = statusCode;
    this.#headers = parseHeaders(rawHeaders);
    if (Number(this.#headers['content-length'] ?? NaN) > this.maxBytes) return this.#refuse();
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled) return false;
    this.#size += chunk.length;
    if (this.#size > this.maxBytes) return this.#refuse();
    this.#chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.#settled) return;
    this.#settled = true;
    const chunks = this.#chunks;
    const [only] = chunks;
    this.resolve({ status: this.#status, headers: this.#headers, body: only && chunks.length === 1 ? only : Buffer.concat(chunks, this.#size) });
  }

  onError(err: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.reject(transportError(err, this.channel));
  }

  /** Too large: refused, and the rest of the answer cut off (its connection closed), as `discard` does. */
  #refuse(): false {
    this.#settled = true;
    this.reject(answerTooLarge(this.maxBytes));
    this.#abort?.(new Error('answer too large'));
    return false;
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
