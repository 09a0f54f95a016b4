import type { Snapshot, TaskContentRoute } from '../config/snapshot.js';
import type { TaskRecord, TaskStatus } from '../store/store.js';
import { askedIn } from './asked.js';

/**
 * A task as answer mappings see it (docs/routes-yaml.md, "Answer mappings"): public fields only. The vendor's
 * id and result URLs are never here; each result has the gateway's own download URL instead.
 */
export interface PublicTask {
  readonly id: string;
  readonly kind: string;
  /** Id of the route that created it, for answers that differ by submit route. */
  readonly route: string;
  readonly model: string;
  /** `queued | in_progress | completed | failed`. */
  readonly status: Exclude<TaskStatus, 'submitting'>;
  readonly progress: number;
  /** Unix seconds. */
  readonly created_at: number;
  readonly updated_at: number;
  readonly completed_at: number | null;
  readonly seconds: string | null;
  readonly size: string | null;
  /** The prompt submitted, when the request had one (a string). */
  readonly prompt: string | null;
  /** The id of the task this one remixes, or null. */
  readonly remixed_from_video_id: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  /** Downloadable results, each with a gateway URL; empty until completed. */
  readonly results: readonly { readonly index: number; readonly type: string; readonly url: string | null; readonly meta: unknown }[];
  /** URL of the first result, or null. */
  readonly content_url: string | null;
  /** The vendor's word for the state at the last look (an unrecognised one keeps the task pending). */
  readonly vendor_status: string | null;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

/** The task-content route that serves a task family, if any. */
function contentRouteFor(snapshot: Snapshot, kind: string): TaskContentRoute | undefined {
  for (const r of snapshot.routes) if (r.kind === 'task-content' && r.task.kinds.includes(kind)) return r;
  return undefined;
}

/** The gateway URL of result `index` of a task, or null when no content route serves its family. */
export function contentUrl(snapshot: Snapshot, base: string, task: TaskRecord, index: number): string | null {
  const route = contentRouteFor(snapshot, task.kind);
  if (!route) return null;
  const { id } = route.task;
  const query = new URLSearchParams();
  let path = route.path;
  if (id.from === 'path') path = path.replace(`{${id.name}}`, encodeURIComponent(task.id));
  else query.set(id.name, task.id);
  if (index > 0) query.set('index', String(index));
  const qs = query.toString();
  return `${base}${path}${qs ? `?${qs}` : ''}`;
}

/** The public view of a task record. `base` is the gateway's own URL as the client reached it. */
export function publicTask(snapshot: Snapshot, base: string, task: TaskRecord): PublicTask {
  const done = task.status === 'completed';
  const asked = askedIn(task.context);
  const results = done
    ? task.results.map((r, index) => ({ index, type: r.type, url: r.url === null ? null : contentUrl(snapshot, base, task, index), meta: r.meta ?? null }))
    : [];
  return {
    id: task.id,
    kind: task.kind,
    route: task.route,
    model: task.model,
    // A task is shown only once the vendor accepted it; `submitting` never leaves the gateway.
    status: task.status === 'submitting' ? 'queued' : task.status,
    progress: task.progress,
    created_at: seconds(task.createdAt),
    updated_at: seconds(task.updatedAt),
    completed_at: task.completedAt === null ? null : seconds(task.completedAt),
    seconds: task.seconds,
    size: task.size,
    prompt: asked.prompt,
    remixed_from_video_id: asked.remixOf,
    error: task.error,
    results,
    content_url: results.find((r) => r.url !== null)?.url ?? null,
    vendor_status: task.vendorStatus,
  };
}
