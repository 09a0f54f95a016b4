import { GatewayError } from '../errors/gateway-error.js';
import type { Store } from '../store/store.js';
import { dispatch } from '../upstream/dispatch.js';
import type { Pools } from '../upstream/pools.js';
import { sign } from '../upstream/signers.js';
import { debit } from './account.js';
import { chooseChannel } from './choose-channel.js';
import type { RequestContext } from './context.js';
import { mapRequest } from './map-request.js';
import { mapFailure, mapSuccess } from './map-response.js';
import { modelOf } from './model-of.js';

/** What the sync engine needs from the process. */
export interface SyncDeps {
  readonly store: Store;
  readonly pools: Pools;
  readonly random?: () => number;
}

/**
 * A synchronous operation: choose a channel, debit, map the request, sign, send, and map the
 * answer or the error back. A failed request is refunded.
 */
export async function runSyncOperation(ctx: RequestContext, body: unknown, deps: SyncDeps): Promise<unknown> {
  const model = modelOf(ctx.route, ctx.params, body);
  const { channel, upstreamModel } = chooseChannel(ctx.snapshot, ctx.route, model, ctx.token, deps.random);
  const op = channel.profile.operations.get(ctx.route.operation)!;
  const refund = await debit(deps.store, ctx.token);
  try {
    const now = ctx.now.toISOString();
    const req = await mapRequest(op, channel, {
      body,
      params: ctx.params,
      query: ctx.query,
      model: upstreamModel,
      public_model: model,
      channel: { name: channel.name, settings: channel.settings },
      now,
    });
    sign(channel.profile.auth, channel, req);
    const res = await dispatch(deps.pools, channel, req, op.response.maxBytes);
    const mctx = { model: upstreamModel, public_model: model, now };
    if (res.status >= 200 && res.status < 300) return await mapSuccess(op, res, mctx);
    throw await mapFailure(op, res, mctx);
  } catch (err) {
    await refund();
    if (err instanceof GatewayError) err.details.channel = channel.name;
    throw err;
  }
}
