import { setTimeout as delay } from 'node:timers/promises';
import type { CompiledChannel, CompiledOperation } from '../config/snapshot.js';
import { isErrorCode } from '../errors/catalogue.js';
import { GatewayError } from '../errors/gateway-error.js';
import { readTaskUpdate, refusalIn2xx, type TaskUpdate } from '../tasks/task-update.js';
import { queryTask, type VendorTask } from '../tasks/vendor-query.js';
import type { Pools } from '../upstream/pools.js';
import type { RequestContext } from '../pipeline/context.js';

/** How an await runs besides its operation; every field has a default. */
export interface AwaitOptions {
  /** Overrides the operation's interval (golden runs: 0). */
  readonly intervalMs?: number;
  /** Overrides the channel's `polling.lost_after_ms` (golden runs: 0). */
  readonly lostAfterMs?: number;
  /** The process clock; vendor calls are signed with its time (golden runs fix it). */
  readonly clock?: () => Date;
  /** Told once the vendor has accepted the task: from then on a failure must not be sent elsewhere. */
  readonly accepted?: () => void;
}

/**
 * A synchronous route over an asynchronous vendor (operation `await`): the submit answer is a task
 * update; the vendor is asked again every `interval_ms` through the profile's task query until the
 * task ends or `timeout_ms` passes, and the finished task is mapped to the public body. Nothing is
 * stored: the client waits on the connection, and a client that goes away stops the looking.
 * The vendor's "no such task" (a `lost` update) is no news, as in the poller, until it has kept
 * coming for the channel's `polling.lost_after_ms` (longer than most awaits: then the timeout ends it).
 */
export async function awaitTask(
  ctx: RequestContext,
  channel: CompiledChannel,
  op: CompiledOperation & { readonly await: NonNullable<CompiledOperation['await']> },
  submitted: unknown,
  pools: Pools,
  input: { readonly request: unknown; readonly model: string; readonly public_model: string },
  opts: AwaitOptions = {},
): Promise<unknown> {
  const intervalMs = opts.intervalMs ?? op.await.intervalMs;
  const lostAfterMs = opts.lostAfterMs ?? channel.polling.lostAfterMs;
  const clock = opts.clock ?? (() => new Date());
  const first = readTaskUpdate(submitted, op.await.resultType);
  if (!first?.id)
    throw (
      refusalIn2xx(first) ??
      new GatewayError('bad_response', 'the upstream accepted the request but its answer carries no task id', { upstream: { phase: 'unknown' } })
    );
  opts.accepted?.();
  const protocol = channel.profile.tasks;
  if (!protocol) throw new GatewayError('internal_error', `profile ${channel.profile.name} awaits a task but has no tasks: block`);
  // The task as the query mappings see it: never stored, the client waits on the connection.
  let task: VendorTask = {
    id: `sync-${ctx.ref}`,
    upstreamId: first.id,
    context: first.context ?? null,
    upstreamModel: input.model,
    model: input.public_model,
    createdAt: ctx.now.getTime(),
    kind: op.await.resultType,
  };
  let update: TaskUpdate = first;
  let lostSince: number | null = null;
  const until = Date.now() + op.await.timeoutMs;
  // Bounded in looks too, so a shortened interval (golden runs) cannot spin for the whole timeout.
  let looks = Math.ceil(op.await.timeoutMs / op.await.intervalMs);
  while (update.status !== 'completed' && update.status !== 'failed') {
    if (Date.now() + intervalMs > until || looks-- <= 0)
      throw new GatewayError('upstream_timeout', `the upstream did not finish within ${op.await.timeoutMs} ms`);
    await delay(intervalMs);
    // Each look is part of the client's request: it carries its request id and trace.
    const outcome = await queryTask(protocol, channel, pools, task, clock(), ctx);
    if (!outcome.ok) {
      // Transient trouble is retried until the timeout; the last error is what the client sees then.
      if (Date.now() + intervalMs > until || looks <= 0) throw outcome.error;
      continue;
    }
    if (outcome.value.lost) {
      const now = clock().getTime();
      lostSince ??= now;
      if (now - lostSince < lostAfterMs) continue;
      const message = outcome.value.error?.message ?? 'the vendor no longer knows this task';
      throw new GatewayError('bad_response', message);
    }
    lostSince = null;
    update = outcome.value;
    if (update.context !== undefined) task = { ...task, context: update.context };
  }
  if (update.status === 'failed') {
    // A profile may fail the task with a catalogue code (invalid_request for refused input); any other code is the vendor's trouble.
    const code = update.error?.code;
    throw new GatewayError(isErrorCode(code) ? code : 'bad_response', update.error?.message ?? 'the upstream failed the request');
  }
  const view = {
    status: update.status,
    vendor_status: update.vendorStatus,
    results: update.results ?? [],
    seconds: update.seconds,
    size: update.size,
    context: task.context,
  };
  try {
    return await op.await.answer.evaluate({
      task: view,
      request: input.request,
      model: input.model,
      public_model: input.public_model,
      now: ctx.now.toISOString(),
    });
  } catch (err) {
    throw new GatewayError('internal_error', 'the finished task could not be translated for the client', { cause: err });
  }
}
