import type { ValidateFunction } from 'ajv';
import { familyOf } from '../config/lookups.js';
import { MappingError, type Mapping } from '../mapping/mapping.js';
import { GatewayError } from '../errors/gateway-error.js';
import { describeError, dottedPath, usefulErrors } from '../schema/describe-error.js';
import { IMAGE_KEYWORD } from '../schema/image-keyword.js';
import { MEDIA_KEYWORD } from '../schema/media-keyword.js';
import type { CompiledFamily, ModelRoute } from '../config/snapshot.js';
import type { Next } from './compose.js';
import type { RequestContext } from './context.js';
import { inputFault } from './map-request.js';

/** What the family rules read of a request: its route, its model (read once, `readModel`), where the mode is. */
export type FamilyRequest = Pick<RequestContext<ModelRoute>, 'route' | 'snapshot' | 'params' | 'query' | 'model'>;

/** The `checkFamily` stage: the family rules (`familyRules`), and the Warning header they may ask for. */
export function checkFamily<C extends RequestContext<ModelRoute>>(ctx: C, next: Next<C>): Promise<void> {
  const warning = familyRulesNow(ctx, ctx.body);
  if (warning instanceof Promise) {
    return warning.then((w) => {
      ctx.warning = w;
      return next(ctx);
    });
  }
  ctx.warning = warning;
  return next(ctx);
}

/**
 * The family rules: the generation mode the request asks for must be one its model's family
 * takes, and the body must pass the family's limits (routes.yaml `families`). Returns the text of a
 * Warning header when the family takes the mode but does not recommend it; null otherwise.
 */
export async function familyRules(ctx: FamilyRequest, body: unknown): Promise<string | null> {
  return familyRulesNow(ctx, body);
}

/**
 * `familyRules`, giving its answer itself when the mode expression answers on the fast path (a
 * promise and an await cost a few hundred bytes each: issue 41); a Promise when jsonata tells the
 * mode. Throws at once what the fast path refuses.
 */
function familyRulesNow(ctx: FamilyRequest, body: unknown): string | null | Promise<string | null> {
  // A remix takes its model from its source task: that task already passed its family's checks.
  if (ctx.route.model === null) return null;
  const { model } = ctx;
  const family = familyOf(ctx.snapshot.families, model);
  if (!family) return null;
  const modeOf = modeMapping(ctx, family);
  const mode = modeOf ? requestModeNow(ctx, modeOf, model, body) : undefined;
  if (mode instanceof Promise) return mode.then((m) => modeRules(family, model, m, body));
  return modeRules(family, model, mode, body);
}

/** What the family says of the mode a request asks for, and of its body: a Warning header's text or null, or the refusal. */
function modeRules(family: CompiledFamily, model: string, mode: unknown, body: unknown): string | null {
  let warning: string | null = null;
  if (typeof mode === 'string') {
    const support = family.modes.get(mode) ?? 'unsupported';
    if (support === 'unsupported') {
      const takes = [...family.modes].filter(([, s]) => s !== 'unsupported').map(([m]) => m);
      throw new GatewayError(
        'invalid_request',
        `mode ${mode} is not supported by the ${family.name} family (${model}); it supports: ${takes.join(', ') || 'none'}`,
        { param: '' },
      );
    }
    if (support === 'discouraged') warning = `299 gateway "mode ${mode} is not recommended for the ${family.name} family"`;
  }
  checkLimits(family.limits, body, `${family.name} family`);
  checkLimits(family.modelLimits.get(model) ?? null, body, `${family.name} family, model ${model}`);
  return warning;
}

/** How a request's generation mode is told: its family's own expression, else its route's; null when neither says. */
export function modeMapping(ctx: { readonly route: ModelRoute }, family: CompiledFamily): Mapping | null {
  return family.mode ?? ctx.route.mode;
}

/** The generation mode a request asks for, by `modeMapping`; a body the expression cannot read is the client's `invalid_request`. */
export async function requestMode(ctx: Pick<FamilyRequest, 'params' | 'query'>, modeOf: Mapping, model: string, body: unknown): Promise<unknown> {
  return requestModeNow(ctx, modeOf, model, body);
}

/** `requestMode`, the mode itself when the expression answers on the fast path; a Promise when jsonata tells it. */
function requestModeNow(ctx: Pick<FamilyRequest, 'params' | 'query'>, modeOf: Mapping, model: string, body: unknown): unknown {
  let mode: unknown;
  try {
    mode = modeOf.evaluateNow({ body, params: ctx.params, query: ctx.query, model });
  } catch (err) {
    throw modeFault(err);
  }
  return mode instanceof Promise
    ? mode.catch((err: unknown) => {
        throw modeFault(err);
      })
    : mode;
}

function modeFault(err: unknown): GatewayError {
  return (
    inputFault(err, 'the generation mode of the request cannot be told') ??
    new GatewayError('internal_error', 'the route could not tell the generation mode of the request', {
      cause: err instanceof MappingError ? err.message : err,
    })
  );
}

function checkLimits(validate: ValidateFunction | null, body: unknown, whose: string): void {
  if (!validate || validate(body)) return;
  const first = usefulErrors(validate.errors ?? [])[0] ?? validate.errors?.[0];
  if (!first) throw new GatewayError('invalid_request', `the request is outside the limits of the ${whose}`);
  const problem = describeError(first, 'body');
  // A limit may say in words why (its sub-schema's `description`): "image: URLs are not accepted, send the bytes".
  // Not over the image check's own words, which name the size it found.
  const said =
    first.keyword === IMAGE_KEYWORD || first.keyword === MEDIA_KEYWORD ? undefined : (first.parentSchema as { description?: unknown } | undefined)?.description;
  const param = dottedPath(problem.path);
  const base = typeof said === 'string' ? `${param || 'the request'}: ${said}` : problem.message;
  // Say what was refused too ("… not \"5:4\""): the client may have sent the value from elsewhere.
  const refused = first.keyword === 'enum' || first.keyword === 'const' ? JSON.stringify(first.data) : undefined;
  const message = refused !== undefined && refused.length <= 60 ? `${base}, not ${refused}` : base;
  throw new GatewayError('invalid_request', `${message} (a limit of the ${whose})`, { param });
}
