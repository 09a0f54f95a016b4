import type { CompiledChannel, CompiledOperation, CompiledTaskProtocol } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import { callUpstream, type CallInput } from '../pipeline/call-upstream.js';
import { mapSuccess, retryAfter } from '../pipeline/map-response.js';
import type { TaskRecord } from '../store/store.js';
import type { Pools } from '../upstream/pools.js';
import type { UpstreamResponse } from '../upstream/upstream-request.js';
import type { CallerIds } from '../upstream/trace-headers.js';
import { readTaskUpdate, type TaskUpdate } from './task-update.js';
import { mappingContext } from './asked.js';

/** What one look at the vendor gave: news about the task(s), or a failure to try again later. */
export type QueryOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly error: GatewayError;
      readonly retryAfterMs: number | null;
      /** The vendor is in trouble (429, 5xx, timeouts, refused connections): back off the whole channel. */
      readonly vendorTrouble: boolean;
    };

/** What a vendor query reads of a task: a stored record, or the task a synchronous call awaits. */
export type VendorTask = Pick<TaskRecord, 'id' | 'upstreamId' | 'context' | 'upstreamModel' | 'model' | 'createdAt' | 'kind'>;

/** A task as query, batch and content mappings see it (docs/channels-yaml.md, "Mapping inputs"). */
export function vendorView(task: VendorTask) {
  return {
    id: task.id,
    upstream_id: task.upstreamId,
    // The mappings' own context, without what the client asked (asked.ts).
    context: mappingContext(task.context),
    model: task.upstreamModel,
    public_model: task.model,
    created_at: Math.floor(task.createdAt / 1000),
  };
}

function retryAfterMs(res: UpstreamResponse, now: Date): number | null {
  const s = retryAfter(res, now.getTime());
  return s === undefined ? null : s * 1000;
}

/** One query call (callUpstream), its failures sorted: a request we could not build, or the vendor's trouble. */
async function call(
  op: CompiledOperation,
  channel: CompiledChannel,
  pools: Pools,
  input: CallInput,
  now: Date,
  ids?: CallerIds,
): Promise<{ ok: true; res: UpstreamResponse } | Extract<QueryOutcome<never>, { ok: false }>> {
  try {
    return { ok: true, res: await callUpstream(op, channel, input, now, pools, { ids }) };
  } catch (err) {
    // dispatch marks every failure of the call itself (`upstream`); anything else failed to build it.
    const sent = err instanceof GatewayError && err.details.upstream !== undefined;
    const error = err instanceof GatewayError ? err : new GatewayError('internal_error', 'the task query could not be built', { cause: err });
    return { ok: false, error, retryAfterMs: null, vendorTrouble: sent };
  }
}

/**
 * A non-2xx answer to a query: 429, 408 and 5xx are the vendor's trouble, to retry with backoff.
 * Anything else goes through the operation's error mapping, which may declare the task failed
 * (`status: failed`) or, where `lostCounts`, recognise the vendor's own "no such task" answer
 * (`status: lost`, which only the poller's window turns into a failure); any other answer is no
 * verdict at all (a proxy's 404, say) and is retried too, bounded by the deadline.
 */
async function failureOf(
  op: CompiledOperation,
  res: UpstreamResponse,
  input: Record<string, unknown>,
  now: Date,
  kind: string,
  lostCounts: boolean,
): Promise<QueryOutcome<TaskUpdate>> {
  const retry = retryAfterMs(res, now);
  const transient = new GatewayError(res.status === 429 ? 'too_many_requests' : 'bad_response', `the vendor answered a task query with HTTP ${res.status}`, {
    cause: { status: res.status, body: res.body.subarray(0, 1024).toString('utf8') },
  });
  const trouble = res.status === 429 || res.status === 408 || res.status >= 500;
  if (trouble || !op.error) return { ok: false, error: transient, retryAfterMs: retry, vendorTrouble: trouble };
  let body: unknown = null;
  try {
    body = JSON.parse(res.body.toString('utf8'));
  } catch {
    // left null: the mapping decides from the status
  }
  try {
    const update = readTaskUpdate(await op.error.evaluate({ status: res.status, headers: res.headers, body, ...input, now: now.toISOString() }), kind);
    if (update?.status === 'failed' || (lostCounts && update?.lost)) return { ok: true, value: update };
  } catch {
    // a failing error mapping is the same as no verdict
  }
  return { ok: false, error: transient, retryAfterMs: retry, vendorTrouble: false };
}

/**
 * The second step of a two-step result (profile `tasks.result`): the vendor said the task is done
 * but names its files elsewhere (a file id to resolve into a download URL). The result operation
 * sees the task and the query's update, and its answer (results, seconds, size, or a failure)
 * overrides the update's. Without a result operation, or for a task not completed, the update stands.
 * `ids`: the public request the lookup is made for, if any (docs/admin-and-metrics.md, "Request ids, traces and the access log").
 */
export async function resolveResults(
  protocol: CompiledTaskProtocol,
  channel: CompiledChannel,
  pools: Pools,
  task: VendorTask,
  update: TaskUpdate,
  now: Date,
  ids?: CallerIds,
): Promise<QueryOutcome<TaskUpdate>> {
  const op = protocol.result;
  if (!op || update.status !== 'completed') return { ok: true, value: update };
  const context = update.context === undefined ? mappingContext(task.context) : update.context;
  const input = {
    task: { ...vendorView(task), context },
    update: { status: update.status, vendor_status: update.vendorStatus, context, seconds: update.seconds, size: update.size },
    model: task.upstreamModel,
    public_model: task.model,
  };
  const sent = await call(op, channel, pools, input, now, ids);
  if (!sent.ok) return sent;
  const { res } = sent;
  if (res.status < 200 || res.status >= 300) {
    // "Lost" speaks of a task, not of the file a finished task names: only a failure counts here.
    const failed = await failureOf(op, res, input, now, task.kind, false);
    return failed.ok ? { ok: true, value: { ...update, ...failed.value, id: update.id } } : failed;
  }
  try {
    const second = readTaskUpdate(await mapSuccess(op, res, { ...input, now: now.toISOString() }), task.kind);
    if (!second)
      return {
        ok: false,
        error: new GatewayError('bad_response', 'the result lookup answer could not be translated'),
        retryAfterMs: null,
        vendorTrouble: false,
      };
    const failed = second.status === 'failed';
    return {
      ok: true,
      value: {
        ...update,
        status: failed ? 'failed' : update.status,
        error: second.error ?? update.error,
        results: failed ? null : (second.results ?? update.results),
        seconds: second.seconds ?? update.seconds,
        size: second.size ?? update.size,
        context: second.context === undefined ? update.context : second.context,
      },
    };
  } catch (err) {
    return { ok: false, error: err as GatewayError, retryAfterMs: null, vendorTrouble: false };
  }
}

/** Asks the vendor about one task through the profile's query operation (and its result lookup); `ids` when a public request waits on it. */
export async function queryTask(
  protocol: CompiledTaskProtocol,
  channel: CompiledChannel,
  pools: Pools,
  task: VendorTask,
  now: Date,
  ids?: CallerIds,
): Promise<QueryOutcome<TaskUpdate>> {
  const looked = await lookAt(protocol.query, channel, pools, task, now, ids);
  return looked.ok ? resolveResults(protocol, channel, pools, task, looked.value, now, ids) : looked;
}

/** One look through `op` (a query or an adoption lookup): its update, or the failure sorted. */
export async function lookAt(
  op: CompiledOperation,
  channel: CompiledChannel,
  pools: Pools,
  task: VendorTask,
  now: Date,
  ids?: CallerIds,
): Promise<QueryOutcome<TaskUpdate>> {
  const input = { task: vendorView(task), model: task.upstreamModel, public_model: task.model };
  const sent = await call(op, channel, pools, input, now, ids);
  if (!sent.ok) return sent;
  const { res } = sent;
  if (res.status < 200 || res.status >= 300) return failureOf(op, res, input, now, task.kind, true);
  try {
    const update = readTaskUpdate(await mapSuccess(op, res, { ...input, now: now.toISOString() }), task.kind);
    if (update) return { ok: true, value: update };
    return { ok: false, error: new GatewayError('bad_response', 'the task query answer could not be translated'), retryAfterMs: null, vendorTrouble: false };
  } catch (err) {
    return { ok: false, error: err as GatewayError, retryAfterMs: null, vendorTrouble: false };
  }
}

/** A profile's batch query operation and the most ids one call may name. */
export type BatchQuery = NonNullable<CompiledTaskProtocol['batchQuery']>;

/**
 * Asks the vendor about several tasks of one channel in one call. The answer maps to task updates
 * keyed by the vendor's id; a task missing from the answer simply has no news this time.
 */
export async function queryBatch(
  protocol: CompiledTaskProtocol,
  op: BatchQuery,
  channel: CompiledChannel,
  pools: Pools,
  tasks: readonly TaskRecord[],
  now: Date,
): Promise<QueryOutcome<Map<string, TaskUpdate>>> {
  const input = { tasks: tasks.map(vendorView) };
  const sent = await call(op, channel, pools, input, now);
  if (!sent.ok) return sent;
  const { res } = sent;
  if (res.status < 200 || res.status >= 300) {
    const trouble = res.status === 429 || res.status === 408 || res.status >= 500;
    return {
      ok: false,
      error: new GatewayError('bad_response', `the vendor answered a batch task query with HTTP ${res.status}`),
      retryAfterMs: retryAfterMs(res, now),
      vendorTrouble: trouble,
    };
  }
  try {
    const out = await mapSuccess(op, res, { ...input, now: now.toISOString() });
    const list = Array.isArray(out) ? out : [out];
    const byId = new Map<string, TaskUpdate>();
    const kind = tasks[0]?.kind ?? 'file';
    for (const item of list) {
      const u = readTaskUpdate(item, kind);
      if (u?.id) byId.set(u.id, u);
    }
    if (protocol.result) {
      // A finished task whose files need a second call: one lookup each; a failed lookup is no news.
      for (const task of tasks) {
        const { upstreamId } = task;
        const u = upstreamId !== null ? byId.get(upstreamId) : undefined;
        if (upstreamId === null || u?.status !== 'completed') continue;
        const resolved = await resolveResults(protocol, channel, pools, task, u, now);
        if (resolved.ok) byId.set(upstreamId, resolved.value);
        else byId.delete(upstreamId);
      }
    }
    return { ok: true, value: byId };
  } catch (err) {
    return { ok: false, error: err as GatewayError, retryAfterMs: null, vendorTrouble: false };
  }
}
