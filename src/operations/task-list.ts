import type { TaskListRoute } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Next } from '../pipeline/compose.js';
import type { RequestContext } from '../pipeline/context.js';
import type { TaskPage } from '../store/store.js';
import { isTaskId } from '../tasks/task-id.js';
import { evaluateAnswer, taskView } from './answer.js';
import type { TaskDeps } from './deps.js';

/** OpenAI's page sizes (GET /v1/videos): 20 unless `limit` says, at most 100. */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

/** The page a request asks for, from OpenAI's cursor parameters `after`, `limit` and `order`. */
function pageOf(ctx: RequestContext): TaskPage {
  const { after, limit, order } = ctx.query;
  if (limit !== undefined && (!/^[0-9]{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT)) {
    throw new GatewayError('invalid_request', `limit must be a whole number from 1 to ${MAX_LIMIT}`, { param: 'limit' });
  }
  if (order !== undefined && order !== 'asc' && order !== 'desc') throw new GatewayError('invalid_request', 'order must be asc or desc', { param: 'order' });
  return { after: after === undefined || after === '' ? null : after, limit: limit === undefined ? DEFAULT_LIMIT : Number(limit), order: order ?? 'desc' };
}

/** The `listTasks` stage: a page of the caller's tasks (`answerList`). */
export async function listTasks(ctx: RequestContext<TaskListRoute>, next: Next<RequestContext<TaskListRoute>>, deps: TaskDeps): Promise<void> {
  ctx.answer = await answerList(ctx, deps);
  return next(ctx);
}

/**
 * A page of the caller's own tasks of the route's families (`task-list`), newest first unless
 * `order=asc`, as the records are stored (a list asks no vendor; GET of one task refreshes it).
 * Each item is the route's `task.answer`, the page its `list` over `{data, first_id, last_id,
 * has_more}`. An `after` that is not one of the caller's listed tasks is refused like an unknown
 * one, whoever's it is.
 */
async function answerList(ctx: RequestContext<TaskListRoute>, deps: TaskDeps): Promise<unknown> {
  const page = pageOf(ctx);
  // One more than asked tells whether there is a next page.
  const { after } = page;
  const found = after !== null && !isTaskId(after) ? null : await deps.store.listTasks(ctx.token.id, ctx.route.task.kinds, { ...page, limit: page.limit + 1 });
  if (found === null) {
    // Only a cursor not listed here finds nothing.
    throw new GatewayError('invalid_request', `after: no task ${JSON.stringify((after ?? '').slice(0, 100))} of this API key is listed here`, {
      param: 'after',
    });
  }
  const tasks = found.slice(0, page.limit);
  const now = ctx.now.toISOString();
  const data = [];
  for (const t of tasks) data.push(await evaluateAnswer(ctx.route.task.answer, { task: taskView(ctx, t), now }));
  return evaluateAnswer(ctx.route.list, {
    data,
    first_id: tasks[0]?.id ?? null,
    last_id: tasks.at(-1)?.id ?? null,
    has_more: found.length > page.limit,
  });
}
