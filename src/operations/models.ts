import { familyOf } from '../config/lookups.js';
import type { ModelGetRoute, ModelListRoute } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Next } from '../pipeline/compose.js';
import type { RequestContext } from '../pipeline/context.js';
import { availableModels, mayUseModel } from '../routing/available-models.js';
import { evaluateAnswer } from './answer.js';

/** A model as the `answer` mapping of a model route sees it. */
export interface PublicModel {
  readonly id: string;
  /** The family it belongs to (routes.yaml `families`), or null. */
  readonly family: string | null;
}

function modelView(ctx: RequestContext, id: string): PublicModel {
  return { id, family: familyOf(ctx.snapshot.families, id)?.name ?? null };
}

/**
 * The `listModels` stage, GET /v1/models (`model-list`): the models the calling token may use, from
 * the snapshot alone (no vendor is asked): each built by the route's `answer`, the list by its `list`.
 */
export async function listModels(ctx: RequestContext<ModelListRoute>, next: Next<RequestContext<ModelListRoute>>): Promise<void> {
  const { answer, list } = ctx.route;
  const data = [];
  for (const id of availableModels(ctx.snapshot, ctx.token)) data.push(await evaluateAnswer(answer, { model: modelView(ctx, id) }));
  ctx.answer = await evaluateAnswer(list, { data });
  return next(ctx);
}

/**
 * The `getModel` stage, GET /v1/models/{model} (`model-get`): one model the token may use, exact
 * name or one a pattern serves. A model that does not exist and one the token may not use are
 * answered alike, so a token's list cannot be widened by asking.
 */
export async function getModel(ctx: RequestContext<ModelGetRoute>, next: Next<RequestContext<ModelGetRoute>>): Promise<void> {
  const where = ctx.route.model.name;
  const id = ctx.params[where] ?? '';
  if (id === '' || !mayUseModel(ctx.snapshot, ctx.token, id)) {
    throw new GatewayError('model_not_found', `no model ${JSON.stringify(id.slice(0, 200))} is available to this API key`, { param: where });
  }
  ctx.facts.model = id;
  ctx.answer = await evaluateAnswer(ctx.route.answer, { model: modelView(ctx, id) });
  return next(ctx);
}
