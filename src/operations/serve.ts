import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';
import { encodeJson } from '../json/to-bytes.js';
import { checkFamily } from '../pipeline/check-family.js';
import { modelOf } from '../pipeline/model-of.js';
import type { RequestContext } from '../pipeline/context.js';
import { ownedResources } from '../pipeline/resources.js';
import { validateBody } from '../pipeline/validate-body.js';
import type { TaskDeps } from './deps.js';
import { runTaskContent } from './download.js';
import { runModelGet, runModelList } from './models.js';
import { runTaskQuery } from './query.js';
import { sendSse } from './sse-answer.js';
import { runTaskSubmit } from './submit.js';
import { runSyncOperation } from './sync.js';
import { runTaskDelete } from './task-delete.js';
import { runTaskList } from './task-list.js';

/**
 * One public request, matched, authenticated and read by the server: the stages in their order
 * (validate the body, check the family, check what it names is the caller's), then the route's
 * operation; its answer is written here, as JSON or (a route with `stream: sse`) as an event
 * stream; a download streams its own.
 */
export async function serveRequest(ctx: RequestContext, body: unknown, req: IncomingMessage, res: ServerResponse, deps: TaskDeps): Promise<void> {
  const { route } = ctx;
  if (route.body) validateBody(route.body.validate, body);
  // Known as soon as the body is valid, so even a refused request's log line names it.
  if (route.model && (route.kind === 'sync' || route.kind === 'task-submit')) ctx.facts.model = modelOf(route, ctx.params, body);
  if (route.kind === 'task-content') return runTaskContent(ctx, req, res, deps);
  const warning = route.kind === 'sync' || route.kind === 'task-submit' ? await checkFamily(ctx, body) : null;
  // What the request reads or references must be the caller's; it then goes where that is held.
  const holder = await ownedResources(ctx, body, deps.store);
  const answer = await answerOf(ctx, body, deps, holder);
  const headers = { 'x-request-id': ctx.requestId, ...(warning ? { warning } : {}) };
  if (route.stream === 'sse') return sendSse(res, answer, headers);
  // An answer carrying an inline image goes out as the one Buffer it is written into, not a text the socket copies again.
  const out = encodeJson(answer);
  res.writeHead(200, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': typeof out === 'string' ? Buffer.byteLength(out) : out.length,
  });
  res.end(out);
}

/** The JSON answer of a route that is not a download, by the route's kind. */
function answerOf(ctx: RequestContext, body: unknown, deps: TaskDeps, holder: string | null): Promise<unknown> {
  switch (ctx.route.kind) {
    case 'sync':
      return runSyncOperation(ctx, body, deps, holder);
    case 'task-submit':
      return runTaskSubmit(ctx, body, deps, holder);
    case 'task-query':
      return runTaskQuery(ctx, body, deps);
    case 'task-list':
      return runTaskList(ctx, deps);
    case 'task-delete':
      return runTaskDelete(ctx, deps);
    case 'model-list':
      return runModelList(ctx);
    case 'model-get':
      return runModelGet(ctx);
    case 'task-content':
    case 'link-content':
      // Streamed by serveRequest before any JSON answer is made, or served by the server with no key (runLinkContent).
      throw new GatewayError('internal_error', 'a download route has no JSON answer');
  }
}
