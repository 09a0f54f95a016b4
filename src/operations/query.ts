import type { TaskQueryRoute } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Next } from '../pipeline/compose.js';
import type { RequestContext } from '../pipeline/context.js';
import { valueAt } from '../pipeline/request-value.js';
import type { TaskRecord } from '../store/store.js';
import { answerFor } from './answer.js';
import { findOwnTask, isStale, refreshIfStale, taskIdOf, visible } from './find-task.js';
import { isTaskId } from '../tasks/task-id.js';
import type { TaskDeps } from './deps.js';

/** The `queryTasks` stage: the answer of a task query (`answerQuery`). */
export async function queryTasks(ctx: RequestContext<TaskQueryRoute>, next: Next<RequestContext<TaskQueryRoute>>, deps: TaskDeps): Promise<void> {
  ctx.answer = await answerQuery(ctx, ctx.body, deps);
  return next(ctx);
}

/**
 * A task query: one id from the path or query string, or from the body (a string there is one id,
 * an array a batch). The answer mapping also sees the query's body as `request`.
 */
async function answerQuery(ctx: RequestContext<TaskQueryRoute>, body: unknown, deps: TaskDeps): Promise<unknown> {
  const src = ctx.route.task.id;
  if (src.from !== 'body') {
    const task = await findOwnTask(ctx, deps, taskIdOf(ctx));
    return answerFor(ctx, await refreshIfStale(ctx, deps, task));
  }
  const ids = valueAt(ctx, src, body);
  if (typeof ids === 'string' && ids !== '') {
    const task = await findOwnTask(ctx, deps, ids);
    return answerFor(ctx, await refreshIfStale(ctx, deps, task), body);
  }
  const max = ctx.route.task.maxIds;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > max || !ids.every((x) => typeof x === 'string')) {
    throw new GatewayError('invalid_request', `${src.name} must be a task id or an array of 1 to ${max} task ids`, { param: src.name });
  }
  const wanted = [...new Set(ids as string[])];
  const found = await deps.store.getTasks(wanted.filter(isTaskId));
  const mine = new Map(found.filter((t) => visible(ctx, t)).map((t) => [t.id, t]));
  // Stale records are refreshed together: the poller batches them where the vendor allows.
  const stale = [...mine.values()].filter((t) => isStale(ctx, deps, t));
  if (stale.length > 0) {
    for (const [id, t] of await deps.poller.refreshMany(stale).catch(() => new Map<string, TaskRecord | null>())) if (t) mine.set(id, t);
  }
  // Unknown ids and other tokens' ids are left out alike, in the order asked.
  return answerFor(
    ctx,
    wanted.map((id) => mine.get(id)).filter((t): t is TaskRecord => t !== undefined),
    body,
  );
}
