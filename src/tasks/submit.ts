import { GatewayError } from '../errors/gateway-error.js';
import { REQUEST_PRICE } from '../pipeline/account.js';
import { chooseChannel } from '../pipeline/choose-channel.js';
import type { RequestContext } from '../pipeline/context.js';
import { mapFailure, mapSuccess } from '../pipeline/map-response.js';
import { modelOf } from '../pipeline/model-of.js';
import { callOperation } from '../pipeline/sync-operation.js';
import type { TaskRecord } from '../store/store.js';
import { answerFor } from './answer.js';
import type { TaskDeps } from './task-deps.js';
import { patchFor, readTaskUpdate } from './task-update.js';

/**
 * A task submission. The record is written (and the price debited) before the vendor is called;
 * the vendor's acceptance moves it to queued or in_progress; only then does the client get the id.
 * A vendor refusal or a transport failure removes the record and refunds: the client never saw it.
 */
export async function runTaskSubmit(ctx: RequestContext, body: unknown, deps: TaskDeps): Promise<unknown> {
  const model = modelOf(ctx.route, ctx.params, body);
  const { channel, upstreamModel } = chooseChannel(ctx.snapshot, ctx.route, model, ctx.token, deps.random);
  const op = channel.profile.operations.get(ctx.route.operation)!;
  const kind = ctx.route.task!.kinds[0]!;
  const now = ctx.now.getTime();
  const id = deps.newId();
  const pending = await deps.store.createTask({
    id,
    tokenId: ctx.token.id,
    kind,
    route: ctx.route.id,
    model,
    upstreamModel,
    channel: channel.name,
    price: REQUEST_PRICE,
    createdAt: now,
    deadlineAt: now + channel.polling.deadlineMs,
  });
  if (!pending) throw new GatewayError('insufficient_user_quota', 'the quota of this API key is used up');

  let accepted: TaskRecord | null;
  try {
    const { res, mctx } = await callOperation(ctx, body, model, { channel, upstreamModel }, op, deps.pools, { id });
    if (res.status < 200 || res.status >= 300) throw await mapFailure(op, res, mctx);
    const update = readTaskUpdate(await mapSuccess(op, res, mctx), kind);
    if (!update?.id) throw new GatewayError('bad_response', 'the upstream accepted the task but its answer carries no task id', { cause: { mapping: op.response.body.where } });
    // Acceptance: submitting → the vendor's first state (queued unless it says more), with its id, in one write.
    const patch = patchFor(pending, { ...update, status: update.status ?? 'queued' }, now)!;
    accepted = await deps.store.updateTask(id, pending.version, { ...patch, upstreamId: update.id });
  } catch (err) {
    await deps.store.abortTask(id, pending.version);
    if (err instanceof GatewayError) err.details.channel = channel.name;
    throw err;
  }
  if (!accepted) throw new GatewayError('internal_error', 'the task record changed while it was being submitted');
  deps.poller.track(accepted);
  return answerFor(ctx, accepted);
}
