import type { SyncRoute } from '../config/snapshot.js';
import { holdPrice } from '../quota/account.js';
import { holdLifetimeMs } from '../quota/hold-expiry.js';
import { quote } from '../quota/price.js';
import { withFallback } from '../routing/attempts.js';
import { callOperation } from '../pipeline/call-operation.js';
import { mapAnswer } from '../pipeline/call-upstream.js';
import { openStream, StreamAnswer } from '../pipeline/open-stream.js';
import type { Next } from '../pipeline/compose.js';
import type { RequestContext } from '../pipeline/context.js';
import { awaitTask } from './awaited.js';
import type { SyncDeps } from './deps.js';

/**
 * The stages of a synchronous operation after its channels are chosen (docs/routing.md, "Retries and
 * fallback"): hold the price, call the channels in turn until one answers; the answer's resources
 * and files are then recorded (`recordCreated`, `linkFiles`) before the hold settles. A vendor that
 * streams answers once its first event is in; the rest is relayed by `respond` (relay-stream.ts).
 */

/**
 * The `holdQuota` stage: debits the price before any vendor call, then runs the stages after it;
 * their success settles the hold, their failure refunds it. Priced once, from the model and the
 * body: the channel plays no part.
 */
export async function holdQuota(ctx: RequestContext<SyncRoute>, next: Next<RequestContext<SyncRoute>>, deps: SyncDeps): Promise<void> {
  const { model } = ctx;
  const { price } = await quote(ctx.snapshot.prices, model, ctx.body, ctx.log);
  const expiresAt = ctx.now.getTime() + holdLifetimeMs(ctx.snapshot.retry, ctx.candidates, (c) => c.operation);
  // The hold's reference is the request's own (ctx.ref), never the client's request id: two
  // requests sent with the same id must not share a hold.
  const hold = await holdPrice(deps.store, deps.holdEndings, ctx.token, price, { ref: ctx.ref, model, expiresAt }, ctx.now.getTime());
  try {
    await next(ctx);
    // A stream is still to be relayed: its relay settles the hold before the event that delivers
    // the result, or refunds it (relay-stream.ts).
    if (ctx.answer instanceof StreamAnswer) {
      ctx.answer.settlement = {
        settle: () => {
          hold.settle();
          ctx.facts.units = price;
        },
        refund: () => hold.refund(),
      };
      return;
    }
    // Before the answer leaves, written after it (hold-endings.ts): a crash in between leaves the
    // hold to its expiry, settled then if the request log has the answer.
    hold.settle();
    ctx.facts.units = price;
  } catch (err) {
    // A stream opened by a stage that then failed is closed with the request.
    if (ctx.answer instanceof StreamAnswer) ctx.answer.stream.cut();
    hold.refund();
    throw err;
  }
}

/**
 * The `callWithFallback` stage: the chosen channels in turn until one answers (an operation that
 * awaits a vendor task creates that task: it is never sent twice); the answer or the error mapped
 * back. The answer and the channel that served it go on the context.
 */
export async function callWithFallback(ctx: RequestContext<SyncRoute>, next: Next<RequestContext<SyncRoute>>, deps: SyncDeps): Promise<void> {
  ctx.answer = await withFallback(
    ctx,
    ctx.candidates,
    deps,
    (c) => c.operation.await !== null,
    async (choice, attempt) => {
      ctx.served = choice.channel.name;
      const op = choice.operation;
      // A vendor that streams: the call succeeds once its first event is in (open-stream.ts).
      if (op.response.type === 'stream') {
        const { stream, first } = await openStream(ctx, choice, deps.pools);
        return new StreamAnswer(stream, first);
      }
      const { res, mctx } = await callOperation(ctx, choice, deps.pools);
      const mapped = await mapAnswer(op, res, mctx);
      if (!op.await) return mapped;
      const input = { request: ctx.body, model: choice.upstreamModel, public_model: ctx.model };
      return awaitTask(ctx, choice.channel, { ...op, await: op.await }, mapped, deps.pools, input, {
        intervalMs: deps.awaitIntervalMs,
        lostAfterMs: deps.lostAfterMs,
        clock: deps.clock,
        accepted: () => attempt.accepted(),
      });
    },
  );
  return next(ctx);
}
