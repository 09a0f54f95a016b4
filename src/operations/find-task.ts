import type { TaskContentRoute, TaskDeleteRoute, TaskQueryRoute, TaskRoute } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../pipeline/context.js';
import { requiredString } from '../pipeline/request-value.js';
import type { TaskRecord } from '../store/store.js';
import { TERMINAL_STATUSES } from '../store/store.js';
import { isTaskId } from '../tasks/task-id.js';
import type { TaskDeps } from './deps.js';

/** Whether the calling token may see a task on this route: its own, of a family the route serves, accepted. */
export function visible(ctx: RequestContext<TaskRoute>, task: TaskRecord | null): task is TaskRecord {
  return task !== null && task.tokenId === ctx.token.id && ctx.route.task.kinds.includes(task.kind) && task.status !== 'submitting';
}

/** The single task id of a query or content route (path or query parameter). */
export function taskIdOf(ctx: RequestContext<TaskQueryRoute | TaskContentRoute | TaskDeleteRoute>): string {
  return requiredString(ctx, ctx.route.task.id, undefined);
}

/**
 * The caller's task of that id. Another token's task answers exactly like a missing one, so ids
 * cannot be probed.
 */
export async function findOwnTask(ctx: RequestContext<TaskRoute>, deps: TaskDeps, id: string): Promise<TaskRecord> {
  const task = isTaskId(id) ? await deps.store.getTask(id) : null;
  if (!visible(ctx, task))
    throw new GatewayError('task_not_found', `no task ${JSON.stringify(id.slice(0, 100))} was found for this API key`, { param: 'task_id' });
  ctx.facts.model = task.model;
  ctx.facts.channel = task.channel;
  ctx.facts.task = task.id;
  return task;
}

/** Whether an unfinished record is older than its channel's `stale_ms` (since this process last asked the vendor). */
export function isStale(ctx: RequestContext, deps: TaskDeps, task: TaskRecord): boolean {
  if (TERMINAL_STATUSES.has(task.status)) return false;
  const channel = deps.poller.channelFor(task, ctx.snapshot);
  if (!channel) return false;
  if (deps.refreshAlways) return true;
  const last = deps.poller.lookedAt(task.id) ?? task.updatedAt;
  return ctx.now.getTime() - last >= channel.polling.staleMs;
}

/** Asks the vendor again when the record is stale; otherwise, or if that fails, the record as stored. */
export async function refreshIfStale(ctx: RequestContext, deps: TaskDeps, task: TaskRecord): Promise<TaskRecord> {
  if (!isStale(ctx, deps, task)) return task;
  const fresh = await deps.poller.refresh(task).catch(() => null);
  return fresh ?? task;
}
