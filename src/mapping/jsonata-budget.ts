import type jsonata from 'jsonata';

/** The error code of an evaluation that spent its budget of steps (docs/channels-yaml.md, "Mapping inputs"): a runaway, the expression's fault. */
export const STEPS_EXCEEDED = 'G0002';
/** The error code of an evaluation that built a string longer than the budget allows: a runaway too. */
export const STRING_EXCEEDED = 'G0003';

/** What one evaluation may spend, besides jsonata's own depth and sequence limits. */
export interface WorkBudget {
  /** Steps: one per expression node evaluated, plus one per item of each array a node gives. */
  readonly steps: number;
  /** Longest string (UTF-16 code units) an operator or function call may build. */
  readonly stringLength: number;
}

/** Steps spent so far, kept on the evaluation's own root frame (see `limitWork`). */
const SPENT = Symbol('mapping.steps-spent');

/** jsonata 2.2.2 calls (and awaits) this symbol's binding after evaluating each node of the AST. */
const EVALUATE_EXIT = Symbol.for('jsonata.__evaluate_exit');

/** Node types whose string results are built here rather than looked up in the input: `&`, and function calls (`$f(…)`, `~>`). */
const BUILDERS: ReadonlySet<string> = new Set(['binary', 'function', 'apply']);

interface Frame {
  readonly base: { [SPENT]?: number };
}

/**
 * Makes every evaluation of `expr` fail once it has spent `budget`: a count of its own work, so a
 * runaway (a loop by tail recursion, a range per item, a string doubled again and again) stops
 * after the same work on any machine, and an evaluation that merely waited (jsonata awaits each
 * node, so a busy event loop delays it) is never cut short, as a wall-clock timeout would.
 *
 * Safe under concurrency although the hook is bound once on an expression that every request and
 * snapshot shares: the hook keeps no state of its own. What it counts lives on `environment.base`,
 * the root frame jsonata 2.2.2 creates anew in each `evaluate()` call and hands down to every frame
 * of that call (blocks, function definitions, `$eval`); two evaluations in flight never share one, and the
 * read-and-add below runs without an await in between. Call once, before the expression is shared.
 */
export function limitWork(expr: jsonata.Expression, budget: WorkBudget): void {
  const onExit = (node: { type: string }, _input: unknown, environment: Frame, result: unknown): void => {
    const base = environment.base;
    const spent = (base[SPENT] ?? 0) + 1 + (Array.isArray(result) ? result.length : 0);
    base[SPENT] = spent;
    if (spent > budget.steps) {
      throw Object.assign(new Error(`the evaluation went over its budget of ${budget.steps} steps (a loop or recursion without end, or ranges too large)`), {
        code: STEPS_EXCEEDED,
      });
    }
    if (typeof result === 'string' && result.length > budget.stringLength && BUILDERS.has(node.type)) {
      throw Object.assign(new Error(`the evaluation built a string of ${result.length} characters, more than its budget of ${budget.stringLength}`), {
        code: STRING_EXCEEDED,
      });
    }
  };
  // jsonata's typings name bindings by string; its lookup takes this symbol as it is.
  expr.assign(EVALUATE_EXIT as unknown as string, onExit);
}
