import { GatewayError } from '../errors/gateway-error.js';
import { taskArchive } from './task-archive.js';
import type { TaskQuery, TaskStatus } from '../store/store.js';
import { pathParam, textParam, wholeParam } from './admin-input.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';
import { readCursor, writeCursor } from './page-cursor.js';
import { tokenNames } from './token-names.js';
import { adminTaskDetail, adminTaskView, timeline } from './task-timeline.js';

/** Tasks one page gives when `limit` is not set, and the most it may ask for. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;
const STATUSES: readonly TaskStatus[] = ['submitting', 'queued', 'in_progress', 'completed', 'failed'];
/** Longest model, channel or token id a filter may name; nothing stored is longer. */
const MAX_NAME = 200;

/**
 * `GET /admin/tasks?status=&model=&channel=&token=&limit=&before=`: tasks of every token, newest
 * first, each filter narrowing; `next` is the `before` of the next page, null on the last.
 */
export async function listAllTasks({ query, deps }: AdminContext): Promise<AdminAnswer> {
  const status = text(query, 'status');
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) {
    throw new GatewayError('invalid_request', `status must be one of ${STATUSES.join(', ')}`, { param: 'status' });
  }
  const limit = wholeParam(query.get('limit'), 'limit', 1, MAX_LIMIT) ?? DEFAULT_LIMIT;
  const q: TaskQuery = {
    status: status as TaskStatus | undefined,
    model: text(query, 'model'),
    channel: text(query, 'channel'),
    tokenId: text(query, 'token'),
    before: taskCursor(query.get('before')),
    // One more than the page: whether there is a next page is known, not guessed from a full one.
    limit: limit + 1,
  };
  const rows = await deps.store.findTasks(q);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const names = await tokenNames(
    deps.store,
    page.map((t) => t.tokenId),
  );
  return {
    json: {
      tasks: page.map((t) => adminTaskView(t, names.get(t.tokenId) ?? null)),
      next: rows.length > limit && last ? writeCursor(last.createdAt, last.id) : null,
    },
  };
}

/** `GET /admin/tasks/{task_id}`: one task, and what happened to it, oldest first. */
export async function getTaskTimeline({ params, deps }: AdminContext): Promise<AdminAnswer> {
  const id = pathParam(params, 'task_id');
  const history = await deps.store.taskHistory(id);
  if (!history) throw new GatewayError('not_found', `no task with id ${id.slice(0, 100)}`);
  const token = await deps.store.getToken(history.task.tokenId);
  return { json: { task: adminTaskDetail(history.task, token?.name ?? null), timeline: timeline(history), archive: await taskArchive(deps.store, id) } };
}

/** A filter's value; undefined when absent or empty. */
function text(query: URLSearchParams, name: string): string | undefined {
  return textParam(query.get(name), name, MAX_NAME) ?? undefined;
}

/** The task a `before` cursor names, as the task query takes it. */
function taskCursor(raw: string | null): TaskQuery['before'] {
  const at = readCursor(raw, MAX_NAME);
  return at && { createdAt: at.at, id: at.id };
}
