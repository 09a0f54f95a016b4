import type { CompiledChannel, CompiledTaskProtocol, RetryPolicy } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { TaskRecord } from '../store/store.js';
import type { Pools } from '../upstream/pools.js';
import type { TaskUpdate } from './task-update.js';
import { lookAt, type QueryOutcome } from './vendor-query.js';

/** Slack over the computed bound, for the event loop and the store. */
const MARGIN_MS = 5_000;
/** The bound of a record whose channel is no longer configured. */
const UNKNOWN_CHANNEL_MS = 10 * 60_000;

/**
 * When a `submitting` record can no longer be a submission under way (docs/deploying.md, "Tasks cut off by a
 * crash"): no attempt starts after `routing.deadline_ms` (plus one backoff), and the record names
 * the channel of the latest attempt, whose call takes at most its connect, header and body
 * timeouts. A replica that is still submitting also keeps the task's lease, so no other looks.
 */
export function cutOffAt(task: Pick<TaskRecord, 'createdAt'>, channel: CompiledChannel | undefined, retry: RetryPolicy): number {
  const t = channel?.timeouts;
  const call = t ? t.connectMs + t.headersMs + t.bodyMs : UNKNOWN_CHANNEL_MS;
  return task.createdAt + retry.deadlineMs + retry.backoffMaxMs + call + MARGIN_MS;
}

/**
 * Looks for a task whose submission was cut off by the reference we sent (profile `tasks.adopt`),
 * lookup after lookup: the vendor's update with its id when one knows the task; null when every
 * lookup says it does not (the vendor never took it).
 */
export async function findCutOffTask(
  protocol: CompiledTaskProtocol,
  channel: CompiledChannel,
  pools: Pools,
  task: TaskRecord,
  now: Date,
): Promise<QueryOutcome<(TaskUpdate & { readonly id: string }) | null>> {
  for (const op of protocol.adopt) {
    const looked = await lookAt(op, channel, pools, task, now);
    if (!looked.ok) return looked;
    if (looked.value.lost) continue;
    const update = looked.value;
    if (update.id) return { ok: true, value: { ...update, id: update.id } };
    return {
      ok: false,
      error: new GatewayError('bad_response', 'an adoption lookup answered without the vendor task id'),
      retryAfterMs: null,
      vendorTrouble: false,
    };
  }
  return { ok: true, value: null };
}
