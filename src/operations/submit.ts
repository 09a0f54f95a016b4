import { GatewayError } from '../errors/gateway-error.js';
import { spendRefusal } from '../quota/refusal.js';
import { quote } from '../quota/price.js';
import type { ChannelChoice } from '../routing/rank-channels.js';
import { withFallback } from '../routing/attempts.js';
import type { CompiledChannel, TaskIdSource, TaskSubmitRoute } from '../config/snapshot.js';
import type { RequestContext } from '../pipeline/context.js';
import { callOperation } from '../pipeline/call-operation.js';
import { mapAnswer } from '../pipeline/call-upstream.js';
import type { Next } from '../pipeline/compose.js';
import { requiredString } from '../pipeline/request-value.js';
import { routeServesModel } from '../config/lookups.js';
import type { Store, TaskPatch, TaskRecord } from '../store/store.js';
import { untilAvailable } from '../store/store-guard.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import { answerFor } from './answer.js';
import { findOwnTask } from './find-task.js';
import type { TaskDeps } from './deps.js';
import { patchFor, readTaskUpdate, refusalIn2xx } from '../tasks/task-update.js';
import { vendorView } from '../tasks/vendor-query.js';
import { withAsked, type Asked } from '../tasks/asked.js';
import { CALLBACK_HEADER, checkedCallback, namedCallback } from '../webhooks/callback.js';

type SubmitContext = RequestContext<TaskSubmitRoute>;

/**
 * The `sourceTask` stage of a remix (route `task.source`): the caller's own completed task it works
 * on, and the channel that ran it, the one that knows the source's id. A remix that names no model
 * takes the source's.
 */
export async function sourceTask(ctx: SubmitContext, next: Next<SubmitContext>, deps: TaskDeps): Promise<void> {
  const { route } = ctx;
  const where = route.task.source;
  if (where === null) return next(ctx);
  const task = await completedSource(ctx, where, deps);
  if (route.model === null) ctx.model = task.model;
  ctx.facts.model = ctx.model;
  ctx.source = { task, choice: sourceChannel(ctx, task, ctx.model, where.name) };
  return next(ctx);
}

/**
 * The `submitTask` stage: a task submission on the chosen channels. The record is written (and the
 * price debited) before the vendor is called; the channels are then tried in turn (docs/routing.md,
 * "Retries and fallback": a creation the vendor may have received is never sent again); the first
 * acceptance moves the record to queued or in_progress on that channel, and only then does the
 * client get the id. When no channel accepts, the record is removed and refunded: the client never
 * saw it.
 */
export async function submitTask(ctx: SubmitContext, next: Next<SubmitContext>, deps: TaskDeps): Promise<void> {
  ctx.answer = await submit(ctx, deps);
  return next(ctx);
}

async function submit(ctx: SubmitContext, deps: TaskDeps): Promise<unknown> {
  const { model, body, candidates } = ctx;
  const source = ctx.source?.task ?? null;
  const { kind } = ctx.route.task;
  const now = ctx.now.getTime();
  const id = deps.newId();
  const [first] = candidates;
  // What the public task shows of the request (the video object's prompt and remixed_from_video_id).
  const prompt = (body as { prompt?: unknown } | null)?.prompt;
  const asked: Asked = { prompt: typeof prompt === 'string' ? prompt : null, remixOf: source?.id ?? null };
  // Ranking gives at least one channel or refuses the request.
  if (!first) throw new GatewayError('internal_error', 'no channel was chosen for the task');
  // Priced once, before any vendor call, from the model and the body: the channel plays no part.
  const { price, pricing } = await quote(ctx.snapshot.prices, model, body, ctx.log);
  // Written before the task, so that whatever ends it finds its callback (docs/webhooks.md).
  const callback = deps.webhooks
    ? await checkedCallback(deps.store, ctx.token.id, namedCallback(body, ctx.req.headers[CALLBACK_HEADER]), deps.webhooks.settings.allowPrivate)
    : null;
  if (callback) await deps.store.putTaskCallback(id, callback.endpointId, callback.url, now);
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
  if (!pending) throw await spendRefusal(deps.store, ctx.token, price, now);
  // The lease is kept while the vendor is asked, however long that takes; then polling keeps it.
  const letGo = deps.poller.holdLease(id);

  let current = pending;
  let accepted: { record: TaskRecord | null; channel: CompiledChannel };
  /** The vendor took the task (it exists there now): from here on the record is never aborted. */
  let taken = false;
  try {
    accepted = await withFallback(
      ctx,
      candidates,
      deps,
      () => true,
      async (choice, attempt) => {
        const { channel, upstreamModel } = choice;
        if (channel.name !== current.channel) {
          // The record names the channel being asked, where a crash now would leave the task to be
          // looked for (docs/deploying.md, "Tasks cut off by a crash").
          current = (await deps.store.updateTask(id, current.version, { channel: channel.name, upstreamModel, updatedAt: now })) ?? current;
        }
        const op = choice.operation;
        const { res, mctx } = await callOperation(ctx, choice, deps.pools, { id }, source ? sourceView(source) : undefined);
        const update = readTaskUpdate(await mapAnswer(op, res, mctx), kind);
        if (!update?.id) {
          throw (
            refusalIn2xx(update) ??
            new GatewayError('bad_response', 'the upstream accepted the task but its answer carries no task id', {
              cause: { mapping: op.response.body.where },
              upstream: { phase: 'unknown' },
            })
          );
        }
        attempt.accepted();
        taken = true;
        // Acceptance: submitting → the vendor's first state (queued unless it says more), with its id and channel, in one write.
        // (A vendor that just accepted the task cannot have lost it: a `lost` word here is no status.)
        const patch = patchFor(current, { ...update, lost: false, status: update.status ?? 'queued' }, now);
        const record = await writeAcceptance(deps.store, current, {
          ...patch,
          context: withAsked(patch?.context === undefined ? current.context : patch.context, asked),
          upstreamId: update.id,
          channel: channel.name,
          upstreamModel,
          deadlineAt: now + channel.polling.deadlineMs,
        });
        return { record, channel };
      },
    );
  } catch (err) {
    if (taken) {
      // The vendor has the task but the store could not be told: the record stays `submitting`, to
      // be adopted or failed and refunded once, as a submission cut off by a crash is.
      ctx.log.warn(
        { task: id, channel: current.channel, err: (err as Error).message },
        'a task the vendor accepted could not be recorded; it is left to be settled as a submission cut off by a crash',
      );
      throw err;
    }
    // Should the store be away, the abort fails too and the record is left the same way.
    await deps.store.abortTask(id, current.version);
    throw err;
  } finally {
    letGo();
  }
  if (!accepted.record) throw new GatewayError('internal_error', 'the task record changed while it was being submitted');
  deps.poller.track(accepted.record, accepted.channel);
  ctx.facts.units = accepted.record.price;
  ctx.facts.task = id;
  return answerFor(ctx, accepted.record);
}

/** The caller's own completed task a remix works on (route `task.source`). */
async function completedSource(ctx: SubmitContext, where: TaskIdSource, deps: TaskDeps): Promise<TaskRecord> {
  const id = requiredString(ctx, where, ctx.body);
  const task = await findOwnTask(ctx, deps, id);
  if (task.status !== 'completed')
    throw new GatewayError('task_not_ready', `task ${task.id} is ${task.status}; only a completed task can be the source`, { param: where.name });
  return task;
}

/** A remix runs where its source ran: that channel knows the source's id. `where`: the source id's parameter. */
function sourceChannel(ctx: SubmitContext, source: TaskRecord, model: string, where: string): ChannelChoice {
  if (!routeServesModel(ctx.route, model)) {
    throw new GatewayError('invalid_request', `task ${source.id} is a ${model} video, which this route cannot work on`, { param: where });
  }
  const channel = ctx.snapshot.channelsByName.get(source.channel);
  const operation = channel?.profile.operations.get(ctx.route.operation);
  if (!channel || !operation) {
    throw new GatewayError('upstream_unavailable', `the channel that made task ${source.id} can no longer serve this request`);
  }
  if (ctx.token.models && !ctx.token.models.includes(model))
    throw new GatewayError('model_not_allowed', `this API key may not use model ${model}`, { param: 'model' });
  return { channel, upstreamModel: model === source.model ? source.upstreamModel : model, operation };
}

/** The source task as mappings see it. */
function sourceView(t: TaskRecord) {
  return { ...vendorView(t), seconds: t.seconds, size: t.size, results: t.results, status: t.status };
}

/** How long a submission waits for the store to record a task the vendor already accepted, before leaving it to be settled later. */
export const ACCEPTANCE_WAIT_MS = 10_000;

/**
 * Writes a vendor's acceptance of a task (compare-and-set on the `submitting` record). The vendor
 * has the task now, so a store that fails here is waited for, up to ACCEPTANCE_WAIT_MS, rather than
 * the client told no while the vendor works (and charges) for nothing: a connection reset or a
 * failover then costs the client a moment, not a task. A write whose answer was lost may have
 * landed: when writing again finds the record changed, it is read back to see whether it was ours.
 */
async function writeAcceptance(store: Store, record: TaskRecord, patch: TaskPatch): Promise<TaskRecord | null> {
  const until = Date.now() + ACCEPTANCE_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      const next = await store.updateTask(record.id, record.version, patch);
      if (next || attempt === 1) return next;
      // The compare-and-set missed after a failed attempt: that attempt may have landed after all.
      const seen = await store.getTask(record.id);
      return seen?.upstreamId === patch.upstreamId ? seen : null;
    } catch (err) {
      if (!isStoreUnavailable(err) || Date.now() >= until) throw err;
    }
    await untilAvailable(store.availability, until - Date.now());
    // A store that just came back (or merely timed out one statement) is not asked again in the same breath.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
