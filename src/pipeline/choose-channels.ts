import type { ModelRoute } from '../config/snapshot.js';
import { rankChannels } from '../routing/rank-channels.js';
import type { Next } from './compose.js';
import type { RequestContext } from './context.js';
import { onHolder } from './resources.js';

/**
 * The `chooseChannels` stage: the channels to try, in order (routing/rank-channels.ts: eligible for
 * the model, the route's operation and the token's group, ranked by priority and weight); a remix
 * goes to the one channel that ran its source (`sourceTask`). When the request names resources,
 * only the channel that holds them (`checkResources`) may serve it.
 */
export function chooseChannels<C extends RequestContext<ModelRoute>>(ctx: C, next: Next<C>, deps: { readonly random?: () => number }): Promise<void> {
  const ranked = ctx.source ? [ctx.source.choice] : rankChannels(ctx.snapshot, ctx.route, ctx.model, ctx.token, deps.random);
  ctx.candidates = onHolder(ctx, ranked, ctx.holder);
  return next(ctx);
}
