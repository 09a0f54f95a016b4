import { catalogue } from '../errors/catalogue.js';
import { familyOf, isModelRoute, routeServesModel } from '../config/lookups.js';
import type { CompiledFamily, ModelRoute, ModelSource, Snapshot } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import { errorBody } from '../http/error-boundary.js';
import { checkDepth } from '../http/read-json.js';
import { requestIds } from '../http/request-id.js';
import { operationInput } from '../pipeline/call-operation.js';
import { unsignedRequest } from '../pipeline/call-upstream.js';
import { familyRules, modeMapping, requestMode, type FamilyRequest } from '../pipeline/check-family.js';
import { clientInputError } from '../pipeline/map-request.js';
import { modelAt } from '../pipeline/model-of.js';
import { validateBody } from '../pipeline/validate-body.js';
import { quote } from '../quota/price.js';
import { Shortfall } from '../routing/attempts.js';
import { likeliestOrder, type ChannelChoice } from '../routing/rank-channels.js';
import { newTaskId } from '../tasks/task-id.js';
import type { UpstreamRequest } from '../upstream/upstream-request.js';
import { adminBody } from './admin-input.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';
import { maskedRequest, type ShownRequest } from './masked-request.js';
import { channelsView } from './playground-channels.js';

/** `POST /admin/playground`: a client body for a model, and where it would be sent. */
interface PlaygroundBody {
  readonly model: string;
  /** The token group the request would come from; default `default`. */
  readonly group?: string;
  /** A route id of routes.yaml; needed only when several routes serve the model. */
  readonly route?: string;
  /** The client's JSON body. */
  readonly body: Record<string, unknown>;
}

const NAME = { type: 'string', minLength: 1, maxLength: 200 };

/**
 * The body of `POST /admin/playground`. A pasted client body may carry reference images, so the
 * limit is 1 MB rather than the other admin bodies' 64 KB; its depth is checked again against the
 * route's own limit.
 */
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'body'],
  properties: { model: NAME, group: NAME, route: NAME, body: { type: 'object' } },
};

export const PLAYGROUND_BODY = adminBody(SCHEMA, { maxBytes: 1024 * 1024, maxDepth: 64 });

/** A route the playground can show: it builds its request from the client's body, and reads the model from it. */
type PlayableRoute = ModelRoute & { readonly model: ModelSource };

/** The request as a client would send it on a route: what the family rules read, and the body. */
type PublicRequest = Omit<FamilyRequest, 'model' | 'route'> & { readonly route: PlayableRoute; readonly body: unknown };

/** Which check refused the body; the pipeline applies them in this order. */
type Stage = 'body' | 'schema' | 'family' | 'routing' | 'mapping';

/** One check applied to the body, and how it went. */
interface Applied {
  readonly check: Stage;
  readonly what: string;
  readonly ok: boolean;
}

/**
 * `POST /admin/playground`: what the gateway would do with a client body for a model, without
 * calling a vendor, writing to the store or counting against a quota: the route and family, the
 * checks and the error a client would get, the channels in the order they would be tried, and the
 * request the chosen channel's profile would send, built and signed by the pipeline's own code
 * with every secret masked.
 */
export async function playground({ snapshot, body, deps }: AdminContext): Promise<AdminAnswer> {
  const b = body as PlaygroundBody;
  const group = b.group ?? 'default';
  if (!snapshot.groups.has(group))
    throw new GatewayError('invalid_request', `group ${group.slice(0, 200)} is not a group of channels.yaml`, { param: 'group' });
  const route = routeFor(snapshot, b.model, b.route);
  const req = publicRequest(route, b.model, b.body, snapshot);
  const model = b.model;
  const family = familyOf(snapshot.families, model);
  const now = new Date(deps.routing.now());

  // Ranked whatever the checks say (the list is worth seeing), but never drawn at random and
  // without taking a slot or a probe: the order the router tries most often.
  let ranked: ChannelChoice[] = [];
  let unroutable: unknown = null;
  try {
    ranked = likeliestOrder(snapshot, route, model, { group, models: null });
  } catch (err) {
    unroutable = err;
  }
  const { channels, chosen, skips } = channelsView(snapshot, route, model, ranked, deps.routing);

  const applied: Applied[] = [];
  let refusal: unknown = null;
  let warning: string | null = null;
  let upstream: ShownRequest[] = [];
  /** Runs one check unless an earlier one refused; the first refusal is the client's answer. */
  const step = async (check: Stage, what: string, run: () => unknown): Promise<void> => {
    if (refusal !== null) return;
    try {
      await run();
      applied.push({ check, what, ok: true });
    } catch (err) {
      applied.push({ check, what, ok: false });
      refusal = err;
    }
  };
  // The stages of the route's list (operations/stages.ts), in their order (resource ownership aside: it needs a token).
  const limits = route.body;
  if (limits) await step('body', `nested at most ${limits.maxDepth} levels`, () => checkDepth(req.body, limits.maxDepth));
  if (limits) await step('schema', limits.schemaFile, () => validateBody(limits.validate, req.body));
  if (family) {
    await step('family', `${family.name}: mode and limits`, async () => {
      warning = await familyRules({ ...req, model: modelAt(route.model, req.params, req.body) }, req.body);
    });
  }
  await step('routing', `a channel serving ${model} to group ${group}`, () => {
    if (unroutable !== null) throw unroutable;
    if (chosen !== null) return;
    // Every channel passed over: the client's error is the one the fallback loop gives for that.
    const why = new Shortfall();
    for (const skip of skips) why.passedOver(skip);
    throw why.error(0, deps.routing.now(), snapshot.retry.retryAfterS);
  });
  const choice = ranked.find((c) => c.channel.name === chosen);
  if (choice) {
    await step('mapping', `the ${choice.channel.profile.name} request mapping`, async () => {
      const op = choice.operation;
      const input = operationInput(req, req.body, model, choice.upstreamModel, route.kind === 'task-submit' ? { id: newTaskId() } : undefined);
      let unsigned: UpstreamRequest;
      try {
        unsigned = await unsignedRequest(op.request, choice.channel, input, now, requestIds({}));
      } catch (err) {
        throw clientInputError(err);
      }
      upstream = [maskedRequest(choice.channel, unsigned, now)];
    });
  }
  const price = refusal === null ? await quote(snapshot.prices, model, req.body) : null;

  return {
    json: {
      route: { id: route.id, method: route.method, path: route.path, kind: route.kind, operation: route.operation },
      family: family ? await familyView(family, req, model) : null,
      group: { name: group, max_concurrency: snapshot.groupConcurrency.get(group) ?? null, inflight: deps.routing.groupInflight(group) },
      checks: { outcome: refusal === null ? 'ok' : 'refused', applied, warning, error: refusal === null ? null : clientError(refusal) },
      channels,
      chosen,
      upstream,
      price: price ? { units: price.price, per_second: price.pricing !== null } : null,
    },
  };
}

/** The route asked for, or the one route that serves the model; several without `route` is the operator's to choose. */
function routeFor(snapshot: Snapshot, model: string, id: string | undefined): PlayableRoute {
  // Routes that send a request built from the client's body; a remix works on an earlier task, which needs a token.
  const serving = snapshot.routes.filter(
    (r): r is PlayableRoute => isModelRoute(r) && r.model !== null && !(r.kind === 'task-submit' && r.task.source) && routeServesModel(r, model),
  );
  const ids = serving.map((r) => r.id).join(', ');
  if (id !== undefined) {
    const named = serving.find((r) => r.id === id);
    if (named) return named;
    const known = snapshot.routes.some((r) => r.id === id);
    const why = known ? `route ${id} does not take model ${model} here` : `route ${id.slice(0, 200)} is not a route of routes.yaml`;
    throw new GatewayError('invalid_request', `${why}; routes for it: ${ids || 'none'}`, { param: 'route' });
  }
  const [only] = serving;
  if (only && serving.length === 1) return only;
  if (serving.length === 0) throw new GatewayError('invalid_request', `no route serves model ${model.slice(0, 200)}`, { param: 'model' });
  throw new GatewayError('invalid_request', `several routes serve model ${model}; name one in route: ${ids}`, { param: 'route' });
}

/**
 * The request as a client would send it on `route`: the model in the path, or in the body (put
 * there when the body has none; another model there is refused), the query the route matches on.
 */
function publicRequest(route: PlayableRoute, model: string, body: Record<string, unknown>, snapshot: Snapshot): PublicRequest {
  const where = route.model;
  const params: Record<string, string> = where.from === 'path' ? { [where.name]: model } : {};
  let sent: unknown = body;
  if (where.from === 'body') {
    const said = valueAt(body, where.pointer);
    if (said === undefined) sent = withValue(body, where.pointer, model);
    else if (said !== model) {
      throw new GatewayError('invalid_request', `the body names model ${JSON.stringify(String(said).slice(0, 200))}, not ${model}`, {
        param: `body.${where.pointer.join('.')}`,
      });
    }
  }
  return { route, snapshot, params, query: { ...route.matchQuery }, body: sent };
}

function valueAt(body: unknown, pointer: readonly string[]): unknown {
  let v = body;
  for (const seg of pointer) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[seg] : undefined;
  return v;
}

/** `body` with `value` at `pointer`, copying the objects on the way (the caller's body is left as it is). */
function withValue(body: Record<string, unknown>, pointer: readonly string[], value: string): unknown {
  const top = { ...body };
  let at: Record<string, unknown> = top;
  for (const seg of pointer.slice(0, -1)) {
    const next = at[seg];
    if (next === undefined) at = at[seg] = {};
    else if (next !== null && typeof next === 'object' && !Array.isArray(next)) at = at[seg] = { ...(next as Record<string, unknown>) };
    else return body;
  }
  const last = pointer[pointer.length - 1];
  if (last === undefined) return body;
  at[last] = value;
  return top;
}

/** The family as its stage sees it: the mode it tells for this body, the modes it takes, its limits. */
async function familyView(family: CompiledFamily, req: PublicRequest, model: string) {
  const modeOf = modeMapping(req, family);
  let mode: unknown = null;
  // Told for display only: a body it cannot read is refused by the family check, with its error.
  if (modeOf) mode = await requestMode(req, modeOf, model, req.body).catch(() => null);
  return {
    name: family.name,
    description: family.description,
    mode: mode ?? null,
    mode_from: family.mode ? 'family' : modeOf ? 'route' : null,
    modes: Object.fromEntries(family.modes),
    limits: family.rawLimits,
    model_limits: family.rawModelLimits[model] ?? null,
  };
}

/** The answer a client would get for a refusal: its status and error body (shape A or B), as the error boundary writes them. */
function clientError(thrown: unknown) {
  const err = thrown instanceof GatewayError ? thrown : new GatewayError('internal_error', 'internal error', { cause: thrown });
  const cause = err.details.cause;
  // A fault of ours (a mapping that failed on its own) says why, for the operator who configured it.
  const detail = err.code === 'internal_error' && cause !== undefined ? (cause instanceof Error ? cause.message : String(cause)).slice(0, 1000) : undefined;
  return { status: catalogue[err.code].status, body: errorBody(err), ...(detail ? { detail } : {}) };
}
