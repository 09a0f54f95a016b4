import type { ModelRoute, RouteStream } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import { rankChannels } from '../routing/rank-channels.js';
import type { Next } from './compose.js';
import type { RequestContext } from './context.js';
import { onHolder } from './resources.js';

/**
 * The `chooseChannels` stage: the channels to try, in order (routing/rank-channels.ts: eligible for
 * the model, the route's operation and the token's group, ranked by priority and weight); a remix
 * goes to the one channel that ran its source (`sourceTask`). When the request names resources,
 * only the channel that holds them (`checkResources`) may serve it.
 *
 * A request answered as a stream (the route always streams, or the client asked: routes.yaml
 * `stream`) goes to the channels whose profile defines the stream's operation for the model. Asked
 * of a model none of them streams, it is the client's `invalid_request` naming the field: a stream
 * asked for is never answered as JSON.
 */
export function chooseChannels<C extends RequestContext<ModelRoute>>(ctx: C, next: Next<C>, deps: { readonly random?: () => number }): Promise<void> {
  const stream = ctx.route.kind === 'sync' ? ctx.route.stream : null;
  ctx.streamed = stream !== null && (stream.askedBy === null || asked(ctx.body, stream.askedBy));
  if (ctx.source) ctx.candidates = onHolder(ctx, [ctx.source.choice], ctx.holder);
  else {
    const operation = ctx.streamed && stream ? (stream.operation ?? ctx.route.operation) : ctx.route.operation;
    ctx.candidates = onHolder(ctx, rankStreaming(ctx, operation, stream, deps.random), ctx.holder);
  }
  return next(ctx);
}

/** The channels for `operation`; a stream no channel of the model offers is refused, naming the field that asked for it. */
function rankStreaming(ctx: RequestContext<ModelRoute>, operation: string, stream: RouteStream | null, random?: () => number) {
  try {
    return rankChannels(ctx.snapshot, ctx.route, ctx.model, ctx.token, random, operation);
  } catch (err) {
    if (operation === ctx.route.operation || !stream?.askedBy) throw err;
    // Served without a stream: then the stream is what the model lacks, not the model.
    rankChannels(ctx.snapshot, ctx.route, ctx.model, ctx.token, random);
    const field = stream.askedBy.join('.');
    throw new GatewayError('invalid_request', `model ${ctx.model} does not stream on this route; send it without ${field}: true`, { param: field });
  }
}

/** Whether the body asks for a stream at `pointer`: JSON `true`, or a multipart field's text "true". */
function asked(body: unknown, pointer: readonly string[]): boolean {
  let v: unknown = body;
  for (const key of pointer) {
    if (v === null || typeof v !== 'object') return false;
    v = (v as Record<string, unknown>)[key];
  }
  return v === true || v === 'true';
}
