import { STEPS_EXCEEDED } from '../jsonata-budget.js';

/**
 * The work one fast evaluation may do. A runaway expression (a lambda that recurses for ever, a
 * sequence that keeps growing) is stopped by its own work, not by a clock, and fails: bailing to
 * jsonata would only run the runaway a second time, slower.
 */

/** Bounds of one fast evaluation. */
export interface FastBudget {
  /** AST nodes evaluated (jsonata's evaluate() calls). */
  readonly steps: number;
  /** Nested evaluations, lambda calls included (jsonata's `stack` option counts the same). */
  readonly depth: number;
  /** Longest sequence an evaluation may build (jsonata's `sequence` option, D2015 there). */
  readonly sequence: number;
}

/** Thrown out of a fast mapping when an evaluation ran over its budget: the mapping fails, jsonata is not asked. */
export class FastBudgetExceeded extends Error {
  constructor(
    /** Which bound: 'steps', 'depth' or 'sequence'. */
    readonly bound: keyof FastBudget,
    readonly limit: number,
  ) {
    super(
      `the mapping ran over its budget: more than ${limit} ${bound === 'steps' ? 'evaluation steps' : bound === 'depth' ? 'nested evaluations' : 'items in a sequence'}`,
    );
    this.name = 'FastBudgetExceeded';
  }

  /** The code of the same runaway on jsonata: stack (D1011), sequence (D2015), steps (G0002, jsonata-budget.ts). */
  get code(): string {
    return this.bound === 'depth' ? 'D1011' : this.bound === 'sequence' ? 'D2015' : STEPS_EXCEEDED;
  }
}

/** What is left of the current evaluation's budget; evaluations are synchronous, so one at a time. */
export const work = { steps: 0, depth: 0, maxSteps: 0, maxDepth: 0, maxSequence: 0 };

/** Starts the count of a new evaluation. */
export function startWork(b: FastBudget): void {
  work.steps = 0;
  work.depth = 0;
  work.maxSteps = b.steps;
  work.maxDepth = b.depth;
  work.maxSequence = b.sequence;
}

/** Counts one node evaluation entered (leave() when it returns). */
export function enter(): void {
  if (++work.steps > work.maxSteps) throw new FastBudgetExceeded('steps', work.maxSteps);
  if (++work.depth > work.maxDepth) throw new FastBudgetExceeded('depth', work.maxDepth);
}

/** Counts one evaluation step that enters no deeper (a name looked up in place). */
export function countStep(): void {
  if (++work.steps > work.maxSteps) throw new FastBudgetExceeded('steps', work.maxSteps);
}

/** Counts one node evaluation left. */
export function leave(): void {
  work.depth--;
}
