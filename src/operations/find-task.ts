import type { Snapshot, TaskContentRoute, TaskDeleteRoute, TaskQueryRoute, TaskRoute } from '../config/snapshot.js';
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
  if (!visible(ctx, task)) throw notOnThisRoute(ctx, task, id);
  ctx.facts.model = task.model;
  ctx.facts.channel = task.channel;
  ctx.facts.task = task.id;
  return task;
}

/**
 * The 404 of an id this route does not show. The caller's own task of another family (a music task
 * asked for on a video route) is named as such, with a route that serves it: the id is right, the
 * route is not. Anything else, no such task or another key's, answers alike, so ids cannot be probed.
 */
function notOnThisRoute(ctx: RequestContext<TaskRoute>, task: TaskRecord | null, id: string): GatewayError {
  const shown = JSON.stringify(id.slice(0, 100));
  const families = ctx.route.task.kinds.join(' or ');
  if (task !== null && task.tokenId === ctx.token.id && task.status !== 'submitting') {
    const elsewhere = routeServing(ctx.snapshot, ctx.route.kind, task.kind);
    return new GatewayError(
      'task_not_found',
      `task ${shown} is ${/^[aeiou]/.test(task.kind) ? 'an' : 'a'} ${task.kind} task, not one of this route's (it serves ${families} tasks)${elsewhere ? `; ${elsewhere} serves it` : ''}`,
      { param: 'task_id' },
    );
  }
  return new GatewayError('task_not_found', `no ${families} task ${shown} was found for this API key`, { param: 'task_id' });
}

/** A route that serves tasks of `family`: one of the same kind (a download for a download), else a query; as `METHOD /path`. */
function routeServing(snapshot: Snapshot, kind: TaskRoute['kind'], family: string): string | null {
  const serving = (k: string) => snapshot.routes.find((r) => r.kind === k && 'task' in r && r.task.kinds.includes(family));
  const route = (kind === 'task-submit' ? undefined : serving(kind)) ?? serving('task-query');
  if (!route) return null;
  const query = new URLSearchParams(route.matchQuery).toString();
  return `${route.method} ${route.path}${query ? `?${query}` : ''}`;
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
