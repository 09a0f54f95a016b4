import { GatewayError } from '../errors/gateway-error.js';
import { REQUEST_PRICE } from '../pipeline/account.js';
import { chooseChannel, type ChannelChoice } from '../pipeline/choose-channel.js';
import type { RequestContext } from '../pipeline/context.js';
import { mapFailure, mapSuccess } from '../pipeline/map-response.js';
import { modelOf } from '../pipeline/model-of.js';
import { callOperation } from '../pipeline/sync-operation.js';
import { routeServesModel } from '../config/compile-routes.js';
import type { TaskRecord } from '../store/store.js';
import { answerFor } from './answer.js';
import { findOwnTask } from './find-task.js';
import type { TaskDeps } from './task-deps.js';
import { patchFor, readTaskUpdate, refusalIn2xx } from './task-update.js';
import { vendorView } from './vendor-query.js';

/**
 * A task submission. The record is written (and the price debited) before the vendor is called;
 * the vendor's acceptance moves it to queued or in_progress; only then does the client get the id.
 * A vendor refusal or a transport failure removes the record and refunds: the client never saw it.
 */
export async function runTaskSubmit(ctx: RequestContext, body: unknown, deps: TaskDeps): Promise<unknown> {
  const source = ctx.route.task!.source ? await sourceTask(ctx, body, deps) : null;
  const model = ctx.route.model || !source ? modelOf(ctx.route, ctx.params, body) : source.model;
  const { channel, upstreamModel } = source ? sourceChannel(ctx, source, model) : chooseChannel(ctx.snapshot, ctx.route, model, ctx.token, deps.random);
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
    const { res, mctx } = await callOperation(ctx, body, model, { channel, upstreamModel }, op, deps.pools, { id }, source ? sourceView(source) : undefined);
    if (res.status < 200 || res.status >= 300) throw await mapFailure(op, res, mctx);
    const update = readTaskUpdate(await mapSuccess(op, res, mctx), kind);
    if (!update?.id) throw refusalIn2xx(update) ?? new GatewayError('bad_response', 'the upstream accepted the task but its answer carries no task id', { cause: { mapping: op.response.body.where } });
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

/** The caller's own completed task a remix works on (route `task.source`). */
async function sourceTask(ctx: RequestContext, body: unknown, deps: TaskDeps): Promise<TaskRecord> {
  const where = ctx.route.task!.source!;
  let id: unknown;
  if (where.from === 'body') {
    id = body;
    for (const seg of where.pointer) id = id !== null && typeof id === 'object' ? (id as Record<string, unknown>)[seg] : undefined;
  } else id = where.from === 'path' ? ctx.params[where.name] : ctx.query[where.name];
  if (typeof id !== 'string' || id === '') throw new GatewayError('invalid_request', `${where.name} is required`, { param: where.name });
  const task = await findOwnTask(ctx, deps, id);
  if (task.status !== 'completed') throw new GatewayError('task_not_ready', `task ${task.id} is ${task.status}; only a completed task can be the source`, { param: where.name });
  return task;
}

/** A remix runs where its source ran: that channel knows the source's id. */
function sourceChannel(ctx: RequestContext, source: TaskRecord, model: string): ChannelChoice {
  const where = ctx.route.task!.source!.name;
  if (!routeServesModel(ctx.route, model)) {
    throw new GatewayError('invalid_request', `task ${source.id} is a ${model} video, which this route cannot work on`, { param: where });
  }
  const channel = ctx.snapshot.channelsByName.get(source.channel);
  if (!channel || !channel.profile.operations.has(ctx.route.operation)) {
    throw new GatewayError('upstream_unavailable', `the channel that made task ${source.id} can no longer serve this request`);
  }
  if (ctx.token.models && !ctx.token.models.includes(model)) throw new GatewayError('model_not_allowed', `this API key may not use model ${model}`, { param: 'model' });
  return { channel, upstreamModel: model === source.model ? source.upstreamModel : model };
}

/** The source task as mappings see it. */
function sourceView(t: TaskRecord) {
  return { ...vendorView(t), seconds: t.seconds, size: t.size, results: t.results, status: t.status };
}

