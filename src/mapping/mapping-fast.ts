/**
 * The synchronous fast path of the profile mappings. jsonata 2.x evaluates every AST node through an
 * async function (a promise per node), which made the mappings the largest cost of a proxied
 * request. Here the AST jsonata already parsed is compiled once into plain closures (src/mapping/fast/:
 * compile.ts walks the AST; paths.ts, operators.ts, builtins.ts and patterns.ts evaluate; values.ts
 * is jsonata's value model; budget.ts bounds the work).
 *
 * The contract: a fast mapping gives exactly the value jsonata 2.2.2 gives for the same input, or
 * BAIL, and then the caller asks jsonata (which reports its own errors: whatever jsonata would reject
 * bails here). Each construct mirrors jsonata's evaluator; re-check on a jsonata upgrade (the
 * differential test helps). Left out (Unsupported, jsonata evaluates): order-by `^( )`, parent `%`,
 * wildcards `*` and `**`, transforms `|…|`, partial application, function composition with `~>`,
 * function definitions as results, and `$now $millis $random $shuffle $eval $each $sift $single`.
 *
 * An evaluation that runs over its budget (steps, depth, sequence length) throws FastBudgetExceeded:
 * bailing would only run the runaway again on jsonata.
 */
import { type FastBudget, FastBudgetExceeded, startWork } from './fast/budget.js';
import { boundNames, compileNode, Unsupported } from './fast/compile.js';
import { type Fn, Frame } from './fast/frame.js';
import { createSequence, isFunction, isSequence } from './fast/values.js';

export { FastBudgetExceeded } from './fast/budget.js';

/** What a fast mapping returns when the input needs more than the fast path: evaluate with jsonata. */
export const BAIL: unique symbol = Symbol('mapping-fast.bail');

/** A compiled expression: the value jsonata would give for the input, or BAIL; throws FastBudgetExceeded. */
export type FastMapping = (input: unknown) => unknown;

/** The limits a mapping runs under (MAPPING_LIMITS): jsonata's stack depth and sequence length. */
export interface FastLimits {
  /** Evaluation steps (MAPPING_LIMITS.steps, the same budget jsonata runs under). */
  readonly steps: number;
  readonly stack: number;
  readonly sequence: number;
}

function compileAst(ast: unknown): Fn {
  return compileNode(ast as Parameters<typeof compileNode>[0], { parallel: false, bound: boundNames(ast) });
}

/** Why a jsonata AST does not compile to the fast path (the construct, as `$now`), or null when it does. */
export function whyNotFast(ast: unknown): string | null {
  try {
    compileAst(ast);
    return null;
  } catch (err) {
    return err instanceof Unsupported ? err.message : `unexpected AST (${String(err)})`;
  }
}

/** Compiles a jsonata AST (`expr.ast()`) into a FastMapping, or null when it uses anything outside the fast path. */
export function compileFast(ast: unknown, limits: FastLimits): FastMapping | null {
  let fn: Fn;
  try {
    fn = compileAst(ast);
  } catch {
    return null; // Unsupported, or an AST shape we did not expect
  }
  const budget: FastBudget = { steps: limits.steps, depth: limits.stack, sequence: limits.sequence };
  return (input0) => {
    startWork(budget);
    // as jsonata.evaluate: `$$` is the input; an array input is wrapped in a sequence of one
    const env = new Frame(null);
    env.bind('$', input0);
    let input = input0;
    if (Array.isArray(input) && !isSequence(input)) {
      input = createSequence(input);
      (input as { outerWrapper?: boolean }).outerWrapper = true;
    }
    try {
      const out = fn(input, env);
      return isFunction(out) ? BAIL : out; // a function is jsonata's own object, not modelled
    } catch (err) {
      if (err instanceof FastBudgetExceeded) throw err;
      return BAIL; // Bail, or anything unexpected (a jsonata error from a native, a RangeError): jsonata decides
    }
  };
}
