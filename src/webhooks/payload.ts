/**
 * What a delivery carries (docs/webhooks.md, "The payload"): `{ type, timestamp, data }`, after
 * Standard Webhooks, with `data` the task as the public query of its family shows it: the answer
 * mapping of the task-query route closest to the route that made the task (GET /v1/videos/{id}
 * for a task made by POST /v1/videos), over the public view of the record, whose result links
 * are the gateway's own, never a vendor's.
 */
import type { CompiledRoute, Snapshot, TaskQueryRoute } from '../config/snapshot.js';
import type { TaskRecord, WebhookEvent } from '../store/store.js';
import { publicTask } from '../tasks/public-task.js';

/** The largest body sent; a larger rendering is replaced by the task's id and status (the receiver asks for the rest). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/** Characters two paths share from their start. */
function sharedStart(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** The task-query route that shows a task: of its family, one id per query, the path closest to its submit route's. */
export function queryRouteFor(snapshot: Snapshot, task: Pick<TaskRecord, 'kind' | 'route'>): TaskQueryRoute | null {
  const submit = snapshot.routes.find((r: CompiledRoute) => r.id === task.route);
  const candidates = snapshot.routes.filter((r): r is TaskQueryRoute => r.kind === 'task-query' && r.task.kinds.includes(task.kind));
  let best: TaskQueryRoute | null = null;
  let bestScore = -1;
  for (const r of candidates) {
    // A query of one id in the path or query string answers one task; a body one may answer a batch.
    const score = (submit ? sharedStart(r.path, submit.path) : 0) * 2 + (r.task.id.from === 'body' ? 0 : 1);
    if (score > bestScore) [best, bestScore] = [r, score];
  }
  return best;
}

/**
 * The task as its query route answers it. `base` is GATEWAY_PUBLIC_URL; unset (''), the result
 * links are paths on the gateway (`/v1/videos/{id}/content`). A route that cannot render it (none,
 * or its mapping failing) gives the public view itself.
 */
export async function renderTask(snapshot: Snapshot, base: string, task: TaskRecord, now: Date): Promise<unknown> {
  const view = publicTask(snapshot, base, task);
  const route = queryRouteFor(snapshot, task);
  if (!route) return view;
  try {
    const out = await route.task.answer.evaluate({ task: view, request: undefined, now: now.toISOString() });
    return out === undefined ? view : out;
  } catch {
    return view;
  }
}

/** The body of a delivery: the event, its time, the task; bounded by MAX_PAYLOAD_BYTES. */
export function deliveryBody(event: WebhookEvent, eventAt: number, task: TaskRecord, data: unknown): string {
  const body = JSON.stringify({ type: event, timestamp: new Date(eventAt).toISOString(), data });
  if (Buffer.byteLength(body) <= MAX_PAYLOAD_BYTES) return body;
  return JSON.stringify({
    type: event,
    timestamp: new Date(eventAt).toISOString(),
    data: { id: task.id, status: task.status === 'submitting' ? 'queued' : task.status, truncated: true },
  });
}
