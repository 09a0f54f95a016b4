import type { KeyedRoute, RouteKind, RouteOfKind } from '../config/snapshot.js';
import { linkFiles } from '../links/hand-out.js';
import { authenticate } from '../pipeline/authenticate.js';
import { checkBody, receiveBody } from '../pipeline/body-stages.js';
import { checkFamily } from '../pipeline/check-family.js';
import { limitKey } from '../pipeline/key-limits.js';
import { chooseChannels } from '../pipeline/choose-channels.js';
import { compose, type Next, type Stage } from '../pipeline/compose.js';
import type { RequestContext } from '../pipeline/context.js';
import { readModel } from '../pipeline/model-of.js';
import { checkResources, recordCreated } from '../pipeline/resources.js';
import type { RequestDeps } from './deps.js';
import { downloadResult } from './download.js';
import { getModel, listModels } from './models.js';
import { queryTasks } from './query.js';
import { respond } from './respond.js';
import { sourceTask, submitTask } from './submit.js';
import { callWithFallback, holdQuota } from './sync.js';
import { deleteTask } from './task-delete.js';
import { listTasks } from './task-list.js';

/**
 * The stages of a public request, for each kind of route, in the order they run: the one place
 * they are named, and the one place they are run (through pipeline/compose.ts). The server matches
 * the route and hands over the request's context (src/http/arrival.ts); a `link-content` route
 * asks for no key and runs none of this (operations/link-content.ts).
 *
 * It lives in operations/ because it names stages of every room below the server: pipeline/
 * (authenticate, the body, the model, the family, resources, the channels), quota and routing
 * through the sync operation, links/, and the operations themselves; each of those imports none
 * of the others' stages, and the server imports none of them (gateway.ts hands it `serve`).
 *
 * `respond` is first because it acts last: it writes the answer once the stages after it have
 * made it; `holdQuota` likewise settles the price once the call and what follows it succeeded.
 * `limitKey` follows `authenticate` everywhere: the key's rate limits apply to every route it calls.
 */
export const STAGES: { readonly [K in KeyedKind]: readonly Stage<RequestContext<RouteOfKind<K>>, RequestDeps>[] } = {
  sync: [
    respond,
    authenticate,
    limitKey,
    receiveBody,
    checkBody,
    readModel,
    checkFamily,
    checkResources,
    chooseChannels,
    holdQuota,
    callWithFallback,
    recordCreated,
    linkFiles,
  ],
  'task-submit': [respond, authenticate, limitKey, receiveBody, checkBody, readModel, checkFamily, checkResources, sourceTask, chooseChannels, submitTask],
  'task-query': [respond, authenticate, limitKey, receiveBody, checkBody, checkResources, queryTasks],
  // A download streams the vendor's bytes itself.
  'task-content': [authenticate, limitKey, receiveBody, downloadResult],
  'task-list': [respond, authenticate, limitKey, receiveBody, checkResources, listTasks],
  'task-delete': [respond, authenticate, limitKey, receiveBody, checkResources, deleteTask],
  'model-list': [respond, authenticate, limitKey, receiveBody, checkResources, listModels],
  'model-get': [respond, authenticate, limitKey, receiveBody, checkResources, getModel],
};

/** The kinds whose requests run a stage list. */
type KeyedKind = Exclude<RouteKind, 'link-content'>;

/** Each kind's stages as one function. */
type Runners = { readonly [K in KeyedKind]: Next<RequestContext<RouteOfKind<K>>> };

/** Runs a request through its route's stages: built once, when the gateway is assembled. */
export function serveRequests(deps: RequestDeps): (ctx: RequestContext<KeyedRoute>) => Promise<void> {
  const runners: Runners = {
    sync: compose(STAGES.sync, deps),
    'task-submit': compose(STAGES['task-submit'], deps),
    'task-query': compose(STAGES['task-query'], deps),
    'task-content': compose(STAGES['task-content'], deps),
    'task-list': compose(STAGES['task-list'], deps),
    'task-delete': compose(STAGES['task-delete'], deps),
    'model-list': compose(STAGES['model-list'], deps),
    'model-get': compose(STAGES['model-get'], deps),
  };
  return (ctx) => run(runners, ctx, ctx.route.kind);
}

/** The runner of the context's kind: `kind` is its route's, so the context is that kind's. */
function run<K extends KeyedKind>(runners: Runners, ctx: RequestContext<RouteOfKind<K>>, kind: K): Promise<void> {
  return runners[kind](ctx);
}
