import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';
import { streamErrorEvent } from '../http/error-boundary.js';
import type { RequestContext } from '../pipeline/context.js';
import type { PublicEvent, StreamAnswer } from '../pipeline/open-stream.js';
import { SSE_CONTENT_TYPE, sseFrame, sseFrameBytes } from './sse-answer.js';

/**
 * Relays a vendor's stream to the client (docs/routes-yaml.md, "Streams"), event by event: the next
 * vendor event is read only once the client's socket has taken the last one, so a slow client
 * slows the vendor's read and nothing buffers the stream. The price settles before the first event
 * that delivers the result (`final`) is written; a stream that fails or is left before it is
 * refunded. A failure once the stream has begun cannot change the status: it is written as the
 * protocol's error event, the stream ends, and the error is thrown on to the server, which logs it
 * and records its code. The client going away aborts the vendor's request.
 */
export async function relayStream(ctx: RequestContext, answer: StreamAnswer, headers: Readonly<Record<string, string>>): Promise<void> {
  const { res } = ctx;
  const { stream } = answer;
  let gone = false;
  const onClose = () => {
    if (res.writableFinished) return;
    gone = true;
    stream.cut(new GatewayError('bad_response', 'the client closed the stream'));
  };
  res.on('close', onClose);
  // no-cache and X-Accel-Buffering: proxies in front of the gateway must pass events as they come.
  res.writeHead(200, { ...headers, 'content-type': SSE_CONTENT_TYPE, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  let settled = false;
  let sent = 0;
  try {
    let ev: PublicEvent | null = answer.takeFirst();
    while (ev !== null) {
      if (ev.final && !settled) {
        answer.settlement?.settle();
        settled = true;
      }
      const data = answer.rewrite ? await answer.rewrite(ev.data) : ev.data;
      await write(res, sseFrameBytes(data, ev.event), stream.idleMs);
      sent++;
      ev = await stream.next();
    }
    if (!settled) throw new GatewayError('bad_response', 'the upstream stream ended before its result', { upstream: { phase: 'unknown' } });
    res.end();
    ctx.log.debug({ events: sent, channel: stream.channelName }, 'stream relayed');
  } catch (thrown) {
    stream.cut();
    if (!settled) answer.settlement?.refund();
    if (gone || res.destroyed) {
      ctx.log.info({ events: sent, channel: stream.channelName }, 'the client left the stream; the vendor call was aborted');
      return;
    }
    const err = thrown instanceof GatewayError ? thrown : new GatewayError('internal_error', `internal error (request ${ctx.requestId})`, { cause: thrown });
    // Only a sync route streams; its `stream.error` writes the protocol's error event.
    const frame = await streamErrorEvent(err, ctx.route.kind === 'sync' ? (ctx.route.stream?.error ?? null) : null);
    res.end(sseFrame(frame.data, frame.event));
    // The server's error boundary logs it (with the channel) and records its code; the answer has ended.
    err.details.channel ??= stream.channelName;
    throw err;
  } finally {
    res.off('close', onClose);
  }
}

/**
 * Writes one frame; when the socket's buffer is full, waits until the client has taken it, at most
 * `idleMs` (a client that stops reading must not hold the vendor's connection open for ever).
 */
function write(res: ServerResponse, frame: string | Buffer, idleMs: number): Promise<void> {
  if (res.destroyed) return Promise.reject(new GatewayError('bad_response', 'the client closed the stream'));
  if (res.write(frame)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: GatewayError) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new GatewayError('bad_response', 'the client closed the stream'));
    const timer = setTimeout(() => {
      done(new GatewayError('request_timeout', `the client read nothing of the stream for ${idleMs} ms`));
      res.destroy();
    }, idleMs);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}
