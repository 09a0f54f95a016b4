import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { CompiledChannel } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import { discard, send } from '../upstream/dispatch.js';
import type { UpstreamRequest } from '../upstream/upstream-request.js';
import type { Pools } from '../upstream/pools.js';
import { addCallerHeaders, type CallerIds } from '../upstream/trace-headers.js';

/**
 * A file a vendor serves, passed to a client through the gateway (a task's result, a link's URL):
 * fetched with redirects followed here, streamed with only the headers that describe the bytes.
 */

/**
 * Headers of every file served through the gateway: the browser takes it for what its type says
 * and runs nothing in it (an SVG or HTML a vendor made, opened from a link, would otherwise run
 * with the gateway's origin).
 */
export const FILE_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
};

/** Vendor headers a download passes on; everything else (cookies, vendor ids, URLs) stays behind. */
const PASSED = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'] as const;
const MAX_REDIRECTS = 3;
/** Download answers that mean the vendor's URL no longer works. */
export const GONE: ReadonlySet<number> = new Set([403, 404, 410]);
const RANGE = /^bytes=[0-9]*-[0-9]*(,\s*[0-9]*-[0-9]*){0,7}$/;
/** An `If-Range` to pass on: an entity tag or a date, printable and short. */
const IF_RANGE = /^[\x20-\x7e]{1,200}$/;

/** What a client asked of a file's bytes: a range, and the version it must be of. */
export interface Ranged {
  /** `Range`, when it is one to pass on (a few byte ranges). */
  readonly range: string;
  /**
   * `If-Range`: the vendor serves the range only if the file is still the one the client has (its
   * ETag or date), else the whole file with 200, so a resume never splices two versions.
   */
  readonly ifRange: string | null;
}

/** The client's `Range` (and `If-Range`, which means nothing without it), when there is one to pass on; null otherwise. */
export function rangeOf(req: IncomingMessage): Ranged | null {
  const range = req.headers.range;
  if (typeof range !== 'string' || !RANGE.test(range.trim())) return null;
  const ifRange = req.headers['if-range'];
  return { range: range.trim(), ifRange: typeof ifRange === 'string' && IF_RANGE.test(ifRange.trim()) ? ifRange.trim() : null };
}

/** Sets the range headers of a vendor request. */
function askRange(headers: Record<string, string>, ranged: Ranged | null): Record<string, string> {
  if (ranged) {
    headers.range = ranged.range;
    if (ranged.ifRange !== null) headers['if-range'] = ranged.ifRange;
  }
  return headers;
}

/**
 * Sends the request for a file, following redirects here: the channel's credentials (`signed`)
 * follow only to the channel's own origin; the request id and trace follow anywhere.
 */
export async function fetchVendorFile(
  pools: Pools,
  channel: CompiledChannel,
  first: { req: UpstreamRequest; signed: boolean },
  ids: CallerIds,
  ranged: Ranged | null,
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  let { req: upstream, signed } = first;
  askRange(upstream.headers, ranged);
  for (let hop = 0; ; hop++) {
    const answer = await send(pools, channel, upstream, signal);
    const location = answer.headers.location;
    if (answer.statusCode < 300 || answer.statusCode > 399 || typeof location !== 'string' || hop >= MAX_REDIRECTS) return answer;
    discard(answer.body);
    const from = /^https?:\/\//i.test(upstream.path) ? upstream.path : `${channel.origin}${upstream.path}`;
    const next = new URL(location, from);
    const keep = signed && next.origin === new URL(from).origin;
    upstream = {
      method: 'GET',
      path: next.href,
      query: {},
      headers: keep ? upstream.headers : askRange({}, ranged),
      body: null,
    };
    if (!keep) addCallerHeaders(upstream, ids);
    signed = keep;
  }
}

/**
 * A download whose file the archive holds but could not serve (it is away: GATEWAY_ARCHIVE), and
 * whose vendor did not serve it either: the archive's outage, 503 `upstream_unavailable`, never the
 * vendor's `bad_response`. An answer the client can have (200, 206, 416) passes.
 */
/** The `Retry-After` of a download neither the archive (away) nor the vendor could serve, in seconds. */
const ARCHIVE_RETRY_AFTER_S = 5;

export function unlessServable(answer: Dispatcher.ResponseData): Dispatcher.ResponseData {
  const status = answer.statusCode;
  if (status === 200 || status === 206 || status === 416) return answer;
  discard(answer.body);
  const vendor = GONE.has(status) ? 'the vendor no longer serves the file' : `the vendor answered the download with HTTP ${status}`;
  // The archive is asked again every second while away: a retry within seconds may find it back.
  throw new GatewayError('upstream_unavailable', `the result archive that holds this file is unreachable, and ${vendor}; try again later`, {
    cause: { status, archive: 'unavailable' },
    retryAfter: ARCHIVE_RETRY_AFTER_S,
  });
}

/** An abort signal that fires when the client goes away before its answer is complete. */
export function abortOnClose(res: ServerResponse): AbortSignal {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

/**
 * Streams the vendor's answer to the client: 200, 206 and 416 pass with the headers that describe
 * the bytes; any other status is `bad_response` (the body thrown away), before a byte is written.
 */
export async function streamVendorFile(
  answer: Dispatcher.ResponseData,
  res: ServerResponse,
  channel: CompiledChannel,
  requestId: string,
  log: Logger,
  logged: Record<string, unknown>,
): Promise<void> {
  const status = answer.statusCode;
  if (status !== 200 && status !== 206 && status !== 416) {
    discard(answer.body);
    throw new GatewayError(
      'bad_response',
      GONE.has(status) ? 'the vendor no longer serves this file' : `the vendor answered the download with HTTP ${status}`,
      {
        cause: { status, channel: channel.name },
      },
    );
  }
  const headers: Record<string, string> = { 'x-request-id': requestId, ...FILE_HEADERS };
  for (const h of PASSED) {
    const v = answer.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  headers['content-type'] ??= 'application/octet-stream';
  res.writeHead(status, headers);
  // The vendor is read only as fast as the client takes the bytes (pipeline waits for `drain`),
  // so while a client does not read, the vendor's connection waits, and undici's body timeout
  // sleeps with it (it counts only while the body is read). A client that takes nothing for the
  // channel's body timeout is cut, as a vendor that sends nothing for as long is: a stalled client
  // never holds a vendor connection for ever. One that reads, however slowly, is served.
  let stalled = false;
  res.setTimeout(channel.timeouts.bodyMs, () => {
    stalled = true;
    res.destroy();
  });
  try {
    await pipeline(answer.body, res);
  } catch (err) {
    // Headers are out: the only honest signal left is a cut connection.
    const code = (err as { code?: string }).code;
    if (stalled)
      log.info({ req_id: requestId, ...logged, idle_ms: channel.timeouts.bodyMs }, 'download cut: the client took no byte for the channel body timeout');
    else if (code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'UND_ERR_ABORTED') log.info({ req_id: requestId, ...logged }, 'download ended by the client');
    else log.warn({ req_id: requestId, ...logged, err: (err as Error).message }, 'download cut off');
    res.destroy();
  }
}
