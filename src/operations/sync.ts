import type { CompiledOperation } from '../config/snapshot.js';
import type { UpstreamResponse } from '../upstream/upstream-request.js';
import type { Pools } from '../upstream/pools.js';
import { holdPrice } from '../quota/account.js';
import { holdLifetimeMs } from '../quota/hold-expiry.js';
import { quote } from '../quota/price.js';
import { rankChannels, type ChannelChoice } from '../routing/rank-channels.js';
import { withFallback } from '../routing/attempts.js';
import type { RequestContext } from '../pipeline/context.js';
import { clientInputError } from '../pipeline/map-request.js';
import { awaitTask } from './awaited.js';
import type { ResponseContext } from '../pipeline/map-response.js';
import { callUpstream, mapAnswer, type CallInput } from '../pipeline/call-upstream.js';
import { modelOf } from '../pipeline/model-of.js';
import { onHolder, recordCreated } from '../pipeline/resources.js';
import { handOutLinks } from '../links/hand-out.js';
import type { SyncDeps } from './deps.js';

/**
 * One call of a profile operation for a public request (callUpstream: map, sign, dispatch): the
 * vendor's answer with the context its response and error mappings see. `task` is the id a task
 * submission gives the vendor.
 */
export async function callOperation(
  ctx: RequestContext,
  body: unknown,
  model: string,
  { channel, upstreamModel }: ChannelChoice,
  op: CompiledOperation,
  pools: Pools,
  task?: { id: string },
  /** A remix: the earlier task it works on. */
  source?: unknown,
): Promise<{ res: UpstreamResponse; mctx: ResponseContext }> {
  const input = operationInput(ctx, body, model, upstreamModel, task, source);
  const res = await callUpstream(op, channel, input, ctx.now, pools, { requestError: clientInputError, ids: ctx });
  const now = ctx.now.toISOString();
  // `request`: what the client asked (a vendor that always answers bytes, say, is answered as a URL or base64 as the client's response_format says).
  return { res, mctx: { model: upstreamModel, public_model: model, now, request: body, ...(source ? { source } : {}) } };
}

/** What an operation's request mapping sees of a public request (README, "Mapping inputs"), the channel and time aside. */
export function operationInput(
  ctx: Pick<RequestContext, 'params' | 'query'>,
  body: unknown,
  model: string,
  upstreamModel: string,
  task?: { id: string },
  source?: unknown,
): CallInput {
  return { body, params: ctx.params, query: ctx.query, model: upstreamModel, public_model: model, ...(task ? { task } : {}), ...(source ? { source } : {}) };
}

/**
 * A synchronous operation: rank the channels (only the one that holds the resources the request
 * names, `holder`, when it names any), debit, then call them in turn (README, "Retries and
 * fallback") until one answers; map the answer or the error back, and record a resource the call
 * created. A failed request is refunded.
 */
export async function runSyncOperation(ctx: RequestContext, body: unknown, deps: SyncDeps, holder: string | null = null): Promise<unknown> {
  const model = modelOf(ctx.route, ctx.params, body);
  const candidates = onHolder(ctx, rankChannels(ctx.snapshot, ctx.route, model, ctx.token, deps.random), holder);
  const opOf = (c: ChannelChoice) => c.channel.profile.operations.get(ctx.route.operation)!;
  // Priced once, before any vendor call, from the model and the body: the channel plays no part.
  const { price } = await quote(ctx.snapshot.prices, model, body, ctx.log);
  const expiresAt = ctx.now.getTime() + holdLifetimeMs(ctx.snapshot.retry, candidates, opOf);
  // The hold's reference is the request's own (ctx.ref), never the client's request id: two
  // requests sent with the same id must not share a hold.
  const hold = await holdPrice(deps.store, ctx.token, price, { ref: ctx.ref, model, expiresAt }, ctx.log);
  try {
    // An operation that awaits a vendor task creates that task: it is never sent twice.
    let served = candidates[0]!.channel.name;
    const answer = await withFallback(
      ctx,
      candidates,
      deps,
      (c) => opOf(c).await !== null,
      async (choice, attempt) => {
        served = choice.channel.name;
        const op = opOf(choice);
        const { res, mctx } = await callOperation(ctx, body, model, choice, op, deps.pools);
        const mapped = await mapAnswer(op, res, mctx);
        if (!op.await) return mapped;
        const input = { request: body, model: choice.upstreamModel, public_model: model };
        return awaitTask(ctx, choice.channel, { ...op, await: op.await }, mapped, deps.pools, input, {
          intervalMs: deps.awaitIntervalMs,
          lostAfterMs: deps.lostAfterMs,
          clock: deps.clock,
          accepted: () => attempt.accepted(),
        });
      },
    );
    await recordCreated(ctx, answer, served, deps.store);
    // Before the settlement: a link that could not be recorded fails the request, and its price goes back.
    const linked = await handOutLinks(ctx, answer, served, deps);
    // Before the answer leaves: once the client has it, a crash must not give its price back.
    await hold.settle();
    return linked;
  } catch (err) {
    await hold.refund();
    throw err;
  }
}
