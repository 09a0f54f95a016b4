import type { ModelRoute, ModelSource } from '../config/snapshot.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Next } from './compose.js';
import type { RequestContext } from './context.js';

/** Reads the public model name from where the route says it is: a path parameter, a body field, or the route's fixed model. */
export function modelAt(where: ModelSource, params: Readonly<Record<string, string>>, body: unknown): string {
  if (where.from === 'value') return where.name;
  let value: unknown;
  if (where.from === 'path') {
    value = params[where.name];
  } else {
    value = body;
    for (const seg of where.pointer) {
      value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[seg] : undefined;
    }
  }
  const param = where.from === 'path' ? '' : where.pointer.join('.');
  if (typeof value !== 'string' || value === '') throw new GatewayError('invalid_request', 'model is required', { param: param || 'model' });
  return value;
}

/**
 * The `readModel` stage: the model is read once, as soon as the body is valid (so even a refused
 * request's log line names it), and kept on the context for every stage after. A remix that names
 * no model takes its source task's (`sourceTask`).
 */
export function readModel<C extends RequestContext<ModelRoute>>(ctx: C, next: Next<C>): Promise<void> {
  const where = ctx.route.model;
  if (where !== null) {
    ctx.model = modelAt(where, ctx.params, ctx.body);
    ctx.facts.model = ctx.model;
  }
  return next(ctx);
}
