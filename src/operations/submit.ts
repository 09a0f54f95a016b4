import { GatewayError } from '../errors/gateway-error.js';
import { quotaShort } from '../quota/account.js';
import { quote } from '../quota/price.js';
import { rankChannels, type ChannelChoice } from '../routing/rank-channels.js';
import { withFallback } from '../routing/attempts.js';
import type { CompiledChannel } from '../config/snapshot.js';
import type { RequestContext } from '../pipeline/context.js';
import { mapAnswer } from '../pipeline/call-upstream.js';
import { modelOf } from '../pipeline/model-of.js';
import { requiredString } from '../pipeline/request-value.js';
import { onHolder } from '../pipeline/resources.js';
import { callOperation } from './sync.js';
import { routeServesModel } from '../config/lookups.js';
import type { TaskRecord } from '../store/store.js';
import { answerFor } from './answer.js';
import { findOwnTask } from './find-task.js';
import type { TaskDeps } from './deps.js';
import { patchFor, readTaskUpdate, refusalIn2xx } from '../tasks/task-update.js';
import { vendorView } from '../tasks/vendor-query.js';

/**
 * A task submission, on the channel that holds the resources it names (`holder`) when it names any.
 * The record is written (and the price debited) before the vendor is called;
 * the channels are then tried in turn (README, "Retries and fallback": a creation the vendor may
 * have received is never sent again); the first acceptance moves the record to queued or
 * in_progress on that channel, and only then does the client get the id. When no channel accepts,
 * the record is removed and refunded: the client never saw it.
 */
export async function runTaskSubmit(ctx: RequestContext, body: unknown, deps: TaskDeps, holder: string | null = null): Promise<unknown> {
  const source = ctx.route.task!.source ? await sourceTask(ctx, body, deps) : null;
  const model = ctx.route.model || !source ? modelOf(ctx.route, ctx.params, body) : source.model;
  ctx.facts.model = model;
  const candidates = onHolder(ctx, source ? [sourceChannel(ctx, source, model)] : rankChannels(ctx.snapshot, ctx.route, model, ctx.token, deps.random), holder);
  const kind = ctx.route.task!.kinds[0]!;
  const now = ctx.now.getTime();
  const id = deps.newId();
  const first = candidates[0]!;
  // Priced once, before any vendor call, from the model and the body: the channel plays no part.
  const { price, pricing } = await quote(ctx.snapshot.prices, model, body, ctx.log);
  const pending = await deps.store.createTask({
    id,
    tokenId: ctx.token.id,
    kind,
    route: ctx.route.id,
    model,
    upstreamModel: first.upstreamModel,
    channel: first.channel.name,
    price,
    pricing,
    createdAt: now,
    deadlineAt: now + first.channel.polling.deadlineMs,
    lease: deps.poller.newLease(),
  });
  if (!pending) throw quotaShort(price);
  // The lease is kept while the vendor is asked, however long that takes; then polling keeps it.
  const letGo = deps.poller.holdLease(id);

  let current = pending;
  let accepted: { record: TaskRecord | null; channel: CompiledChannel };
  try {
    accepted = await withFallback(ctx, candidates, deps, () => true, async (choice, attempt) => {
      const { channel, upstreamModel } = choice;
      if (channel.name !== current.channel) {
        // The record names the channel being asked, where a crash now would leave the task to be
        // looked for (README, "Tasks cut off by a crash").
        current = (await deps.store.updateTask(id, current.version, { channel: channel.name, upstreamModel, updatedAt: now })) ?? current;
      }
      const op = channel.profile.operations.get(ctx.route.operation)!;
      const { res, mctx } = await callOperation(ctx, body, model, choice, op, deps.pools, { id }, source ? sourceView(source) : undefined);
      const update = readTaskUpdate(await mapAnswer(op, res, mctx), kind);
      if (!update?.id) {
        throw refusalIn2xx(update) ?? new GatewayError('bad_response', 'the upstream accepted the task but its answer carries no task id', { cause: { mapping: op.response.body.where }, upstream: { phase: 'unknown' } });
      }
      attempt.accepted();
      // Acceptance: submitting → the vendor's first state (queued unless it says more), with its id and channel, in one write.
      // (A vendor that just accepted the task cannot have lost it: a `lost` word here is no status.)
      const patch = patchFor(current, { ...update, lost: false, status: update.status ?? 'queued' }, now)!;
      const record = await deps.store.updateTask(id, current.version, {
        ...patch,
        upstreamId: update.id,
        channel: channel.name,
        upstreamModel,
        deadlineAt: now + channel.polling.deadlineMs,
      });
      return { record, channel };
    });
  } catch (err) {
    await deps.store.abortTask(id, current.version);
    throw err;
  } finally {
    letGo();
  }
  if (!accepted.record) throw new GatewayError('internal_error', 'the task record changed while it was being submitted');
  deps.poller.track(accepted.record, accepted.channel);
  return answerFor(ctx, accepted.record);
}

/** The caller's own completed task a remix works on (route `task.source`). */
async function sourceTask(ctx: RequestContext, body: unknown, deps: TaskDeps): Promise<TaskRecord> {
  const where = ctx.route.task!.source!;
  const id = requiredString(ctx, where, body);
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

