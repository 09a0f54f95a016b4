import { isErrorCode } from '../errors/catalogue.js';
import { finalCharge } from '../quota/settle.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Store, TaskError, TaskPatch, TaskRecord, TaskResult, TaskStatus } from '../store/store.js';
import { TERMINAL_STATUSES } from '../store/store.js';
import { askedIn, mappingContext, withAsked } from './asked.js';

/**
 * What a profile's submit or query mapping says about a task (docs/channels-yaml.md, "Task updates"), checked
 * and normalised. A status outside the four public ones is kept as the vendor's word only: the
 * task stays pending until a known status or the deadline.
 */
export interface TaskUpdate {
  /** The vendor's task id (submit answers and batch entries). */
  readonly id: string | null;
  readonly status: Exclude<TaskStatus, 'submitting'> | null;
  /**
   * The mapping said `status: "lost"`: the vendor's own word that it does not know the task. It is
   * evidence, not a state (status is then null): only the poller turns it into a failure, once it
   * has kept coming for the channel's `polling.lost_after_ms` (docs/client-api.md, "The poller").
   */
  readonly lost: boolean;
  readonly vendorStatus: string | null;
  readonly progress: number | null;
  readonly results: readonly TaskResult[] | null;
  readonly error: TaskError | null;
  /** Kept for later query mappings; undefined leaves the stored context as it is. */
  readonly context: unknown;
  readonly seconds: string | null;
  readonly size: string | null;
}

const PUBLIC: ReadonlySet<string> = new Set(['queued', 'in_progress', 'completed', 'failed']);
const MAX_RESULTS = 32;

const str = (v: unknown, max = 2000): string | null =>
  typeof v === 'string' && v !== '' ? v.slice(0, max) : typeof v === 'number' && Number.isFinite(v) ? String(v) : null;

function results(v: unknown, defaultType: string): TaskResult[] | null {
  if (v === undefined || v === null) return null;
  const list = Array.isArray(v) ? v : [v];
  const out: TaskResult[] = [];
  for (const item of list.slice(0, MAX_RESULTS)) {
    const r = typeof item === 'string' ? { url: item } : (item as { url?: unknown; type?: unknown; meta?: unknown } | null);
    const url = str(r?.url, 8192);
    const meta = r?.meta !== null && typeof r?.meta === 'object' && !Array.isArray(r.meta) ? (r.meta as Record<string, unknown>) : undefined;
    // A file must be something the content route can fetch; a result without one is kept only as data.
    // Absolute, or a path on the channel itself (`/v1/videos/ID/content`).
    const fetchable = url !== null && (/^https?:\/\//i.test(url) || url.startsWith('/'));
    if (!fetchable && !meta) continue;
    out.push({ url: fetchable ? url : null, type: str(r?.type, 40) ?? defaultType, ...(meta ? { meta } : {}) });
  }
  return out;
}

/** Reads a mapping's output as a task update; null when it is not an object at all. */
export function readTaskUpdate(out: unknown, defaultType: string): TaskUpdate | null {
  if (out === null || typeof out !== 'object' || Array.isArray(out)) return null;
  const o = out as Record<string, unknown>;
  const word = str(o.status, 100);
  const lost = word === 'lost';
  const status = word !== null && PUBLIC.has(word) ? (word as TaskUpdate['status']) : null;
  const progress = typeof o.progress === 'number' && Number.isFinite(o.progress) ? Math.max(0, Math.min(100, Math.round(o.progress))) : null;
  let error: TaskError | null = null;
  if (o.error !== undefined && o.error !== null) {
    const e = o.error as { code?: unknown; message?: unknown } | string;
    error =
      typeof e === 'string'
        ? { code: 'generation_failed', message: e.slice(0, 1000) }
        : { code: str(e.code, 100) ?? 'generation_failed', message: str(e.message, 1000) ?? 'the task failed at the vendor' };
  }
  return {
    id: str(o.id, 500),
    status,
    lost,
    // "lost" is the profile's verdict word, not the vendor's.
    vendorStatus: str(o.vendor_status, 100) ?? (status === null && !lost ? word : null),
    progress,
    results: results(o.results, defaultType),
    error,
    context: o.context === undefined ? undefined : o.context,
    seconds: str(o.seconds, 20),
    size: str(o.size, 40),
  };
}

/**
 * The store patch that moves a record as the update says, or null when nothing changes. Terminal
 * records never change, nor does anything on a `lost` update; a failure refunds (once: the store pays only on the first refund); a
 * completion settles: the final charge follows the seconds the vendor reports, never more than the
 * hold (once, on the same compare-and-set); progress never goes backwards, nor does in_progress go
 * back to queued.
 */
export function patchFor(task: TaskRecord, u: TaskUpdate, now: number): TaskPatch | null {
  // A lost verdict is evidence for the poller's window, never a change by itself.
  if (TERMINAL_STATUSES.has(task.status) || u.lost) return null;
  const patch: { -readonly [K in keyof TaskPatch]: TaskPatch[K] } = {};
  if (u.vendorStatus !== null && u.vendorStatus !== task.vendorStatus) patch.vendorStatus = u.vendorStatus;
  // The mapping's context replaces its own; what the client asked stays beside it (asked.ts).
  if (u.context !== undefined && JSON.stringify(u.context) !== JSON.stringify(mappingContext(task.context)))
    patch.context = withAsked(u.context, askedIn(task.context));
  if (u.seconds !== null && task.seconds === null) patch.seconds = u.seconds;
  if (u.size !== null && task.size === null) patch.size = u.size;

  if (u.status === 'failed') {
    Object.assign(patch, {
      status: 'failed',
      error: u.error ?? { code: 'generation_failed', message: 'the task failed at the vendor' },
      completedAt: now,
      refund: true,
    });
  } else if (u.status === 'completed') {
    // The vendor's last word on the length is what it made; the record's may be the request's.
    const settle = finalCharge(task, u.seconds ?? task.seconds);
    Object.assign(patch, { status: 'completed', progress: 100, results: u.results ?? [], completedAt: now, settle });
  } else {
    const status = u.status === 'queued' && task.status === 'in_progress' ? 'in_progress' : u.status;
    if (status !== null && status !== task.status) patch.status = status;
    if (u.progress !== null && u.progress > task.progress) patch.progress = Math.min(u.progress, 99);
  }
  if (Object.keys(patch).length === 0) return null;
  patch.updatedAt = now;
  return patch;
}

/**
 * Writes an update to the store by compare-and-set. When another writer got there first, the
 * fresh record is read and the update applied again to it (so a terminal state set meanwhile
 * wins, and a refund is never paid twice). Returns the record as it now stands.
 */
export async function applyUpdate(store: Pick<Store, 'getTask' | 'updateTask'>, task: TaskRecord, update: TaskUpdate, now: number): Promise<TaskRecord> {
  let current = task;
  for (let attempt = 0; attempt < 5; attempt++) {
    const patch = patchFor(current, update, now);
    if (!patch) return current;
    const next = await store.updateTask(current.id, current.version, patch);
    if (next) return next;
    const fresh = await store.getTask(current.id);
    if (!fresh) return current;
    current = fresh;
  }
  return current;
}

/**
 * A vendor that refuses inside a 2xx (an envelope code): the response mapping gives no id and an
 * error whose code is a catalogue code, which is then the answer (invalid_request for a bad
 * parameter, too_many_requests for a rate limit). Any other error code stays bad_response.
 */
export function refusalIn2xx(update: TaskUpdate | null): GatewayError | null {
  const e = update?.error;
  // An explicit answer: the vendor said no, so another channel may be asked (docs/routing.md, "Retries and fallback").
  return e && isErrorCode(e.code) ? new GatewayError(e.code, e.message, { upstream: { phase: 'answered', status: 200 } }) : null;
}
