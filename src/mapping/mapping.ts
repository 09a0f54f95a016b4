import jsonata from 'jsonata';
import { COMPILE_CACHE_LIMITS, CompileCache } from './compile-cache.js';
import { registerFastFunctions } from './jsonata-functions.js';
import { BAIL, compileFast, FastBudgetExceeded, type FastMapping } from './mapping-fast.js';

/** Limits every mapping runs under, so a bad expression fails fast instead of hanging a request. */
export const MAPPING_LIMITS = {
  /** Milliseconds one evaluation may take. */
  timeoutMs: 250,
  /** Deepest evaluation stack (guards against runaway recursion). */
  stack: 300,
  /** Longest sequence an expression may build. */
  sequence: 100_000,
} as const;

/** A JSONata expression of a profile, compiled at load and evaluated under MAPPING_LIMITS. */
export interface Mapping {
  /** The expression text, for `gateway explain` and error messages. */
  readonly source: string;
  /** Where it came from, as `file:line`. */
  readonly where: string;
  /** True when the expression compiled to the synchronous fast path (mapping-fast.ts); jsonata stays the fallback. */
  readonly fast: boolean;
  /** Evaluations answered by the fast path and by jsonata, so a lost optimisation shows in tests and metrics. */
  readonly stats: { readonly fast: number; readonly jsonata: number };
  evaluate(input: unknown): Promise<unknown>;
}

/** Thrown by Mapping.evaluate: the expression failed or ran out of time. */
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

/** What compiling an expression's text gives, independent of where the text was written. */
interface CompiledExpression {
  readonly expr: jsonata.Expression;
  readonly fast: FastMapping | null;
}

/**
 * Compiled expressions by source text, shared by every load of the process, so a reload recompiles
 * only the expressions it changed. Sharing one jsonata Expression between snapshots is safe (read
 * in jsonata 2.2.2's jsonata.js): evaluate() binds `$`, the bindings, the depth and the guardrails
 * in a new frame per call and never writes to the AST; the only state kept between calls is the
 * `$now()`/`$millis()` timestamp, which concurrent requests on one snapshot already share, and the
 * shared frame changes only through assign()/registerFunction(), which the gateway calls only here,
 * once, before the expression is shared (jsonata-functions.ts).
 * The fast path keeps no state between calls.
 */
export const expressionCache = new CompileCache<CompiledExpression>(COMPILE_CACHE_LIMITS.expressions);

function compileExpression(source: string): CompiledExpression {
  const hit = expressionCache.get(source);
  if (hit) return hit;
  const expr = jsonata(source, {
    timeout: MAPPING_LIMITS.timeoutMs,
    stack: MAPPING_LIMITS.stack,
    sequence: MAPPING_LIMITS.sequence,
  });
  registerFastFunctions(expr);
  // jsonata is async per AST node (~90 µs a response mapping); the fast path gives the same value
  // synchronously or BAIL, and then jsonata runs as before, with its limits and its errors.
  const compiled: CompiledExpression = Object.freeze({ expr, fast: compileFast(expr.ast(), MAPPING_LIMITS) });
  expressionCache.set(source, compiled);
  return compiled;
}

/** Compiles a JSONata expression (or reuses an earlier compile of the same text); throws with the JSONata message when its syntax is wrong. */
export function compileMapping(source: string, where: string): Mapping {
  const { expr, fast } = compileExpression(source);
  const stats = { fast: 0, jsonata: 0 };
  return {
    source,
    where,
    fast: fast !== null,
    stats,
    async evaluate(input: unknown): Promise<unknown> {
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
      stats.jsonata++;
      try {
        return await expr.evaluate(input);
      } catch (err) {
        const e = err as { code?: string; message?: string };
        throw new MappingError(where, e.code, `mapping at ${where} failed: ${e.code ?? ''} ${e.message ?? String(err)}`.trim(), e.message ?? String(err));
      }
    },
  };
}
