/**
 * The runner of a request's stages, after Hono's `compose`: a stage does its part on the request's
 * context and hands it on (`next`), or acts around the stages after it (`await next(ctx)`, then
 * settle a hold, write an answer). The list of each kind of route lives in one place,
 * src/operations/stages.ts; this is the one thing that runs it.
 *
 * It lives here, below the operations, because it knows nothing of them: the context and the deps
 * are type parameters. The chain is built once per list when the gateway is assembled; a request
 * allocates nothing for it (no closure, no array) beyond its context.
 */

/** Hands the context to the stages after this one. */
export type Next<C> = (ctx: C) => Promise<void>;

/** One stage: its part of the request, then `next` (or not: a stage that answers ends the request there). */
export type Stage<C, D> = (ctx: C, next: Next<C>, deps: D) => Promise<void>;

const DONE = Promise.resolve();
const done = () => DONE;

/** The stages as one function, run in their order; `deps` is what the process gives them. */
export function compose<C, D>(stages: readonly Stage<C, D>[], deps: D): Next<C> {
  let chain: Next<C> = done;
  for (const stage of stages.toReversed()) {
    const next = chain;
    chain = (ctx) => stage(ctx, next, deps);
  }
  return chain;
}
