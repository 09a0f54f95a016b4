import type { TaskDeleteRoute } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Next } from '../pipeline/compose.js';
import type { RequestContext } from '../pipeline/context.js';
import { TERMINAL_STATUSES } from '../store/store.js';
import { answerFor } from './answer.js';
import { findOwnTask, refreshIfStale, taskIdOf } from './find-task.js';
import type { TaskDeps } from './deps.js';

/** The `deleteTask` stage: the answer of a task deletion (`answerDelete`). */
export async function deleteTask(ctx: RequestContext<TaskDeleteRoute>, next: Next<RequestContext<TaskDeleteRoute>>, deps: TaskDeps): Promise<void> {
  ctx.answer = await answerDelete(ctx, deps);
  return next(ctx);
}

/**
 * Deletes one of the caller's finished tasks (`task-delete`) with its record and results; the
 * answer is the route's `task.answer` over the task as it was. A task still under way is
 * `task_not_ready`: the gateway has no way to stop it at the vendor, and its poll, settlement or
 * refund still needs the record. Another token's task is unknown, as everywhere. Nothing is
 * charged or given back: the task's price was settled when it ended.
 */
async function answerDelete(ctx: RequestContext<TaskDeleteRoute>, deps: TaskDeps): Promise<unknown> {
  // A record that looks unfinished may have ended at the vendor since the last poll.
  const task = await refreshIfStale(ctx, deps, await findOwnTask(ctx, deps, taskIdOf(ctx)));
  if (!TERMINAL_STATUSES.has(task.status)) {
    throw new GatewayError('task_not_ready', `task ${task.id} is ${task.status}; only a completed or failed task can be deleted`, {
      param: ctx.route.task.id.name,
    });
  }
  // Only the caller's own, only finished: a second delete racing this one finds nothing.
  if (!(await deps.store.deleteTask(task.id, ctx.token.id))) {
    throw new GatewayError('task_not_found', `no task ${JSON.stringify(task.id)} was found for this API key`, { param: 'task_id' });
  }
  return answerFor(ctx, task);
}
