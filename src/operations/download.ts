import type { CompiledChannel, CompiledTaskProtocol, TaskContentRoute } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Next } from '../pipeline/compose.js';
import type { RequestContext } from '../pipeline/context.js';
import { pathProblem } from '../mapping/jsonata-functions.js';
import { signFor, upstreamRequest } from '../pipeline/call-upstream.js';
import type { TaskRecord, TaskResult } from '../store/store.js';
import { discard } from '../upstream/dispatch.js';
import type { UpstreamRequest } from '../upstream/upstream-request.js';
import { addCallerHeaders, type CallerIds } from '../upstream/trace-headers.js';
import { findOwnTask, taskIdOf } from './find-task.js';
import type { TaskDeps } from './deps.js';
import type { TaskUpdate } from '../tasks/task-update.js';
import { resolveResults, vendorView } from '../tasks/vendor-query.js';
import { askedIn, withAsked } from '../tasks/asked.js';
import { abortOnClose, fetchVendorFile, GONE, type Ranged, rangeOf, streamVendorFile, unlessServable } from './vendor-file.js';

/** Whether a result is what `?variant=` asks for: its type (`video`), or the variant its profile marked it as (`thumbnail`). */
function isVariant(result: TaskResult, variant: string): boolean {
  return result.type === variant || result.meta?.variant === variant;
}

/**
 * Picks the result a download asks for: `?index=N` (default 0) or `?variant=V` (the first result
 * of that type or marked that variant). A completed task without such a variant never gets one
 * (OpenAI's `thumbnail` where the vendor made none): that is `not_found`, not "not ready".
 */
function pickResult(ctx: RequestContext, task: TaskRecord): { result: TaskResult & { url: string }; index: number } {
  const { index: rawIndex, variant } = ctx.query;
  if (rawIndex !== undefined && !/^[0-9]{1,3}$/.test(rawIndex)) throw new GatewayError('invalid_request', 'index must be a whole number', { param: 'index' });
  let index = rawIndex === undefined ? 0 : Number(rawIndex);
  if (variant !== undefined && rawIndex === undefined) {
    index = task.results.findIndex((r) => r.url !== null && isVariant(r, variant));
    if (index === -1)
      throw new GatewayError('not_found', `task ${task.id} has no ${JSON.stringify(variant.slice(0, 40))} result: its vendor made none`, { param: 'variant' });
  }
  const result = task.results[index];
  if (!result)
    throw new GatewayError('task_not_ready', `task ${task.id} has ${task.results.length} result(s); there is no result ${index}`, { param: 'index' });
  if (result.url === null)
    throw new GatewayError('task_not_ready', `result ${index} of task ${task.id} is data, not a file; read it from the task query`, { param: 'index' });
  return { result: result as TaskResult & { url: string }, index };
}

/**
 * The vendor request for a result: the profile's content mapping, or else the result URL itself (a
 * path is taken on the channel). The channel's credentials go to the channel's own origin only,
 * never to another host a vendor answer named.
 */
export async function requestFor(
  ctx: CallerIds & { readonly now: Date },
  channel: CompiledChannel,
  task: TaskRecord,
  result: TaskResult & { url: string },
  index: number,
): Promise<{ req: UpstreamRequest; signed: boolean }> {
  const content = channel.profile.tasks?.content;
  if (content) return upstreamRequest(content, channel, { task: vendorView(task), result, index }, ctx.now, ctx);
  const req: UpstreamRequest = {
    method: 'GET',
    path: result.url.startsWith('/') ? channel.basePath + vendorPath(result.url) : result.url,
    query: {},
    headers: {},
    body: null,
  };
  addCallerHeaders(req, ctx);
  return { req, signed: signFor(channel, req, ctx.now) };
}

/** A result path the vendor named, refused when it is not well formed: it is sent with the channel's credentials. */
function vendorPath(path: string): string {
  const why = pathProblem(path);
  if (why !== null) throw new GatewayError('bad_response', `the vendor named a result path that is not well formed (${why})`);
  return path;
}

/** Sends the request for one result (vendor-file.ts follows redirects). */
async function fetchResult(
  ctx: RequestContext,
  deps: TaskDeps,
  channel: CompiledChannel,
  task: TaskRecord,
  result: TaskResult & { url: string },
  index: number,
  range: Ranged | null,
  signal: AbortSignal,
) {
  return fetchVendorFile(deps.pools, channel, await requestFor(ctx, channel, task, result, index), ctx, range, signal);
}

/** Asks the vendor for the task's files again (profile `tasks.result`) and stores them; null when that fails. */
export async function refreshResults(
  ctx: CallerIds & { readonly now: Date },
  deps: Pick<TaskDeps, 'pools' | 'store'>,
  channel: CompiledChannel,
  protocol: CompiledTaskProtocol,
  task: TaskRecord,
): Promise<TaskRecord | null> {
  const update: TaskUpdate = {
    id: task.upstreamId,
    status: 'completed',
    lost: false,
    vendorStatus: task.vendorStatus,
    progress: 100,
    results: task.results,
    error: null,
    context: vendorView(task).context,
    seconds: task.seconds,
    size: task.size,
  };
  const outcome = await resolveResults(protocol, channel, deps.pools, task, update, ctx.now, ctx);
  if (!outcome.ok || outcome.value.status !== 'completed' || !outcome.value.results) return null;
  return deps.store.updateTask(task.id, task.version, {
    results: outcome.value.results,
    ...(outcome.value.context !== undefined ? { context: withAsked(outcome.value.context, askedIn(task.context)) } : {}),
  });
}

/**
 * The `downloadResult` stage: streams a task's result from the vendor to the client (the one answer
 * a stage writes itself): nothing is buffered whole, `Range` goes through, redirects are followed
 * here (credentials never follow to another origin), and neither the vendor's URL nor its key
 * reaches the client.
 */
export async function downloadResult(ctx: RequestContext<TaskContentRoute>, next: Next<RequestContext<TaskContentRoute>>, deps: TaskDeps): Promise<void> {
  const { req, res } = ctx;
  const task = await findOwnTask(ctx, deps, taskIdOf(ctx));
  if (task.status !== 'completed') {
    throw new GatewayError('task_not_ready', `task ${task.id} is ${task.status}; its result can be downloaded once it is completed`);
  }
  const { result, index } = pickResult(ctx, task);
  // Archived (docs/archive.md): served from the archive, and the vendor is not asked; an archive
  // that is away leaves it to the vendor, whose refusal is then the archive's outage.
  const archived = deps.archive ? await deps.archive.serveTask(req, res, task, index, ctx) : 'not_archived';
  if (archived === 'served') return next(ctx);
  // An unfinished task's pinned definition, else the channel of that name when the request started.
  const channel = deps.poller.channelFor(task, ctx.snapshot);
  if (!channel) throw new GatewayError('upstream_unavailable', 'the channel that ran this task is no longer configured');

  const signal = abortOnClose(res);
  const range = rangeOf(req);
  let answer = await fetchResult(ctx, deps, channel, task, result, index, range, signal);
  // An expired result URL (two-step vendors sign theirs for a while): look the files up again, once.
  const protocol = channel.profile.tasks;
  if (GONE.has(answer.statusCode) && protocol?.result) {
    const fresh = await refreshResults(ctx, deps, channel, protocol, task);
    const again = fresh?.results[index];
    if (fresh && again?.url) {
      discard(answer.body);
      answer = await fetchResult(ctx, deps, channel, fresh, again as TaskResult & { url: string }, index, range, signal);
    }
  }
  await streamVendorFile(archived === 'unavailable' ? unlessServable(answer) : answer, res, channel, ctx.requestId, ctx.log, { task: task.id });
  return next(ctx);
}
