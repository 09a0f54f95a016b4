import { encodeJson } from '../json/to-bytes.js';
import type { Next } from '../pipeline/compose.js';
import type { RequestContext } from '../pipeline/context.js';
import { sendSse } from './sse-answer.js';

/**
 * The `respond` stage: first in its list because it acts last. Once the stages after it have made
 * the answer (and settled its price), it writes it: as JSON, or as an event stream for a route with
 * `stream: sse`. A failure on the way never reaches it: the server's error boundary answers that.
 */
export async function respond<C extends RequestContext>(ctx: C, next: Next<C>): Promise<void> {
  await next(ctx);
  const { route, res, answer, warning } = ctx;
  const headers = { 'x-request-id': ctx.requestId, ...(warning ? { warning } : {}) };
  if (route.kind === 'sync' && route.stream === 'sse') return sendSse(res, answer, headers);
  // An answer carrying an inline image goes out as the one Buffer it is written into, not a text the socket copies again.
  const out = encodeJson(answer);
  res.writeHead(200, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': typeof out === 'string' ? Buffer.byteLength(out) : out.length,
  });
  res.end(out);
}
