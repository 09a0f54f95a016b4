import { encodeJson } from '../json/to-bytes.js';
import type { Next } from '../pipeline/compose.js';
import type { RequestContext } from '../pipeline/context.js';
import { StreamAnswer } from '../pipeline/open-stream.js';
import { relayStream } from './relay-stream.js';
import { sendSse } from './sse-answer.js';

/**
 * The `respond` stage: first in its list because it acts last. Once the stages after it have made
 * the answer (and settled its price), it writes it: as JSON, or as an event stream when the route
 * streams (a vendor's stream relayed event by event, or a whole answer as one frame). A failure on
 * the way never reaches it: the server's error boundary answers that.
 */
export function respond<C extends RequestContext>(ctx: C, next: Next<C>): Promise<void> {
  // A then, not an async frame around the whole request: an await is a few hundred bytes (issue 41).
  return next(ctx).then(() => write(ctx));
}

/** Writes the answer the stages made. */
function write(ctx: RequestContext): Promise<void> | undefined {
  const { res, answer, warning } = ctx;
  const headers = () => ({ 'x-request-id': ctx.requestId, ...(warning ? { warning } : {}) });
  if (answer instanceof StreamAnswer) return relayStream(ctx, answer, headers());
  // A streamed request whose vendor answered whole: one frame.
  if (ctx.streamed) {
    sendSse(res, answer, headers());
    return undefined;
  }
  // An answer carrying an inline image goes out as the one Buffer it is written into, not a text the socket copies again.
  const out = encodeJson(answer);
  // x-request-id is on the answer already (the server sets it first thing).
  if (warning) res.setHeader('warning', warning);
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', typeof out === 'string' ? Buffer.byteLength(out) : out.length);
  res.writeHead(200);
  res.end(out);
  return undefined;
}
