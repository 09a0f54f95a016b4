import type { Next } from './compose.js';
import type { RequestContext } from './context.js';
import { validateBody } from './validate-body.js';

/**
 * The `receiveBody` stage: the rest of the request, read by the server (src/http, which takes the
 * body's room in the memory budget before a byte is read): the body within the route's limits,
 * when it takes one; the request's time is when it has arrived whole.
 */
export function receiveBody<C extends RequestContext>(ctx: C, next: Next<C>): Promise<void> {
  // A then, not an async frame: an await is a few hundred bytes of heap (issue 41).
  return ctx.receive().then((body) => {
    ctx.body = body;
    return next(ctx);
  });
}

/** The `checkBody` stage: the body against the route's JSON Schema; the first problem is invalid_request naming the field. */
export function checkBody<C extends RequestContext>(ctx: C, next: Next<C>): Promise<void> {
  if (ctx.route.body) validateBody(ctx.route.body.validate, ctx.body);
  return next(ctx);
}
