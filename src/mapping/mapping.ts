import jsonata from 'jsonata';
import { COMPILE_CACHE_LIMITS, CompileCache } from './compile-cache.js';
import { limitWork } from './jsonata-budget.js';
import { registerFastFunctions } from './jsonata-functions.js';
import { checkFunctionCalls, type FunctionCheck } from './known-functions.js';
import { BAIL, compileFast, FastBudgetExceeded, type FastMapping, whyNotFast } from './mapping-fast.js';

/**
 * Limits every evaluation runs under, so a bad expression fails fast instead of hanging a request.
 * All count the evaluation's own work, never wall-clock time: jsonata awaits every node, so under
 * load an evaluation waits behind other requests, and a time limit failed healthy mappings then.
 */
export const MAPPING_LIMITS = {
  /**
   * Steps (a node evaluated; on jsonata, jsonata-budget.ts, also an item of an array a node gives;
   * on the fast path, fast/budget.ts). The most a shipped mapping took over the golden cases was
   * 949, and a video submission on 16 images 1,376; 200,000 is over 100 times that, and a runaway
   * spends it in ~150 ms of CPU on jsonata (2-core machine), far less on the fast path.
   */
  steps: 200_000,
  /** Deepest evaluation stack (guards against runaway recursion). */
  stack: 300,
  /** Longest sequence an expression may build. */
  sequence: 100_000,
  /**
   * Longest string an operator or a function call may build (64 Mi characters): above a data URI
   * built from the largest body a route takes (50 MB), far below V8's own limit (~512 Mi).
   */
  stringLength: 64 * 1024 * 1024,
} as const;

/** A JSONata expression of a profile, compiled at load and evaluated under MAPPING_LIMITS. */
export interface Mapping {
  /** The expression text, for `gateway explain` and error messages. */
  readonly source: string;
  /** Where it came from, as `file:line`. */
  readonly where: string;
  /** True when the expression compiled to the synchronous fast path (mapping-fast.ts); jsonata stays the fallback. */
  readonly fast: boolean;
  /** Why it did not (the construct the fast path lacks, as `$now`); null when it did. */
  readonly slowBecause: string | null;
  /** Functions it calls that nothing defines (each would fail every evaluation that reaches it), and the names it binds. */
  readonly functions: FunctionCheck;
  /** Evaluations answered by the fast path and by jsonata, so a lost optimisation shows in tests and metrics. */
  readonly stats: { readonly fast: number; readonly jsonata: number };
  evaluate(input: unknown): Promise<unknown>;
  /**
   * As `evaluate`, but the value itself when the fast path answers, with no promise: the request
   * path's mappings are all fast, and a promise and an await each cost a few hundred bytes of
   * heap (issue 41). A Promise when jsonata evaluates. A fast path that fails throws at once.
   */
  evaluateNow(input: unknown): unknown;
}

/** Thrown by Mapping.evaluate: the expression failed or went over one of MAPPING_LIMITS. */
export class MappingError extends Error {
  constructor(
    readonly where: string,
    readonly jsonataCode: string | undefined,
    message: string,
    /** jsonata's own words, without where and code (for a client's error message). */
    readonly reason: string = message,
  ) {
    super(message);
    this.name = 'MappingError';
  }
}

/**
 * What compiling an expression's text gives, independent of where the text was written. A load
 * parses every expression and finds whether the fast path takes it (so syntax errors and fallbacks
 * are reported at once), but keeps neither the parse nor the compiled closures: those are made on
 * the expression's first evaluation. A shipped config holds some 200 mappings, of which a gateway
 * usually serves a few; kept compiled, each cost its closures, its AST and jsonata's parser
 * (about 10 MB of idle heap for the shipped config). The first request of a mapping pays its
 * compile once (well under a millisecond).
 */
interface CompiledExpression {
  /** Why the fast path does not take the expression (the construct it lacks, as `$now`); null when it does. */
  readonly slowBecause: string | null;
  /** What checkFunctionCalls found in the expression. */
  readonly functions: FunctionCheck;
  /** The fast path's function, null when slowBecause says why not; compiled on first call. */
  readonly fast: () => FastMapping | null;
  /** jsonata's Expression under MAPPING_LIMITS, for a mapping off the fast path or a value it hands back (BAIL); made on first call. */
  readonly jsonata: () => jsonata.Expression;
}

/**
 * Compiled expressions by source text, shared by every load of the process, so a reload recompiles
 * only the expressions it changed. Sharing one jsonata Expression between snapshots is safe (read
 * in jsonata 2.2.2's jsonata.js): evaluate() binds `$`, the bindings, the depth and the guardrails
 * in a new frame per call and never writes to the AST; the only state kept between calls is the
 * `$now()`/`$millis()` timestamp, which concurrent requests on one snapshot already share, and the
 * shared frame changes only through assign()/registerFunction(), which the gateway calls only in
 * limitedJsonata, once, before the expression is shared (budget.ts, jsonata-functions.ts). The work
 * budget's count lives on each evaluation's own frame (budget.ts).
 * The fast path keeps no state between calls.
 */
export const expressionCache = new CompileCache<CompiledExpression>(COMPILE_CACHE_LIMITS.expressions);

/** `source` compiled by jsonata under MAPPING_LIMITS, with the gateway's functions: what the fast path must agree with. */
export function limitedJsonata(source: string): jsonata.Expression {
  // No `timeout`: jsonata's is wall-clock time (see MAPPING_LIMITS); `stack` counts depth per evaluation.
  const expr = jsonata(source, { stack: MAPPING_LIMITS.stack, sequence: MAPPING_LIMITS.sequence });
  limitWork(expr, MAPPING_LIMITS);
  registerFastFunctions(expr);
  return expr;
}

function compileExpression(source: string): CompiledExpression {
  const hit = expressionCache.get(source);
  if (hit) return hit;
  // Throws on a syntax error, for the load to report. jsonata is async per AST node (~90 µs a
  // response mapping); the fast path gives the same value synchronously or BAIL, and then jsonata
  // runs as before, with its limits and its errors.
  const ast = jsonata(source).ast();
  const slowBecause = whyNotFast(ast);
  const functions = checkFunctionCalls(ast);
  let fast: FastMapping | null | undefined;
  let expr: jsonata.Expression | undefined;
  const compiled: CompiledExpression = Object.freeze({
    slowBecause,
    functions,
    fast: () => (fast !== undefined ? fast : (fast = slowBecause === null ? compileFast(jsonata(source).ast(), MAPPING_LIMITS) : null)),
    jsonata: () => (expr ??= limitedJsonata(source)),
  });
  expressionCache.set(source, compiled);
  return compiled;
}

/** Compiles a JSONata expression (or reuses an earlier compile of the same text); throws with the JSONata message when its syntax is wrong. */
export function compileMapping(source: string, where: string): Mapping {
  const compiled = compileExpression(source);
  const { slowBecause, functions } = compiled;
  const stats = { fast: 0, jsonata: 0 };
  const slow = async (input: unknown): Promise<unknown> => {
    stats.jsonata++;
    try {
      return await compiled.jsonata().evaluate(input);
    } catch (err) {
      const e = err as { code?: string; message?: string };
      throw new MappingError(where, e.code, `mapping at ${where} failed: ${e.code ?? ''} ${e.message ?? String(err)}`.trim(), e.message ?? String(err));
    }
  };
  const evaluateNow = (input: unknown): unknown => {
    const fast = compiled.fast();
    if (fast) {
      let out: unknown;
      try {
        out = fast(input);
      } catch (err) {
        // a runaway stopped by its own work: asking jsonata would only run it again
        if (!(err instanceof FastBudgetExceeded)) throw err;
        throw new MappingError(where, err.code, `mapping at ${where} failed: ${err.code} ${err.message}`, err.message);
      }
      if (out !== BAIL) {
        stats.fast++;
        return out;
      }
    }
    return slow(input);
  };
  return {
    source,
    where,
    fast: slowBecause === null,
    slowBecause,
    functions,
    stats,
    evaluateNow,
    async evaluate(input: unknown): Promise<unknown> {
      return evaluateNow(input);
    },
  };
}
