import type { ChannelChoice } from '../routing/rank-channels.js';
import type { Pools } from '../upstream/pools.js';
import type { UpstreamResponse } from '../upstream/upstream-request.js';
import { callUpstream, type CallInput } from './call-upstream.js';
import type { RequestContext } from './context.js';
import { clientInputError } from './map-request.js';
import type { ResponseContext } from './map-response.js';

/**
 * One call of the chosen channel's operation for a public request (callUpstream: map, sign,
 * dispatch): the vendor's answer with the context its response and error mappings see. The sync
 * and submit operations call it for each channel they try; a request it cannot build from the
 * client's values is the client's `invalid_request`. `task` is the id a task submission gives the
 * vendor; `source` a remix's earlier task, as mappings see it.
 */
export async function callOperation(
  ctx: RequestContext,
  choice: ChannelChoice,
  pools: Pools,
  task?: { id: string },
  source?: unknown,
): Promise<{ res: UpstreamResponse; mctx: ResponseContext }> {
  const { body, model } = ctx;
  const input = operationInput(ctx, body, model, choice.upstreamModel, task, source);
  const res = await callUpstream(choice.operation, choice.channel, input, ctx.now, pools, { requestError: clientInputError, ids: ctx });
  return { res, mctx: responseContext(ctx, choice, source) };
}

/**
 * What a public request's response and error mappings see besides the answer. `request`: what the
 * client asked (a vendor that always answers bytes, say, is answered as a URL or base64 as the
 * client's response_format says).
 */
export function responseContext(ctx: Pick<RequestContext, 'body' | 'model' | 'now'>, choice: ChannelChoice, source?: unknown): ResponseContext {
  // Built whole, not spread from a second object (issue 41: each is an allocation a request).
  return source
    ? { model: choice.upstreamModel, public_model: ctx.model, now: ctx.now.toISOString(), request: ctx.body, source }
    : { model: choice.upstreamModel, public_model: ctx.model, now: ctx.now.toISOString(), request: ctx.body };
}

/** What an operation's request mapping sees of a public request (docs/channels-yaml.md, "Mapping inputs"), the channel and time aside. */
export function operationInput(
  ctx: Pick<RequestContext, 'params' | 'query'>,
  body: unknown,
  model: string,
  upstreamModel: string,
  task?: { id: string },
  source?: unknown,
): CallInput {
  if (!task && !source) return { body, params: ctx.params, query: ctx.query, model: upstreamModel, public_model: model };
  return { body, params: ctx.params, query: ctx.query, model: upstreamModel, public_model: model, ...(task ? { task } : {}), ...(source ? { source } : {}) };
}
