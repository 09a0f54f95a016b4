import { randomBytes } from 'node:crypto';
import { dropOldest } from './invariants.js';

/**
 * The task lifecycle every asynchronous simulator shares: a task is queued for the first third of
 * its run, running (with a progress figure) until it finishes, then done or failed. Time is read
 * from the clock on every look, so no timer is kept per task and 10,000 tasks cost only memory.
 *
 * Prompt markers (anywhere in the prompt) steer one task:
 *   `[sim:finish=MS]`   finish after MS instead of the simulator's default
 *   `[sim:fail]`        fail at the finish time with a generic reason
 *   `[sim:fail=TEXT]`   fail with TEXT as the vendor's reason (letters, digits, `_` and `-`)
 *   `[sim:status=WORD]` report the vendor status WORD for ever (an unknown status)
 *   `[sim:never]`       stay running for ever
 */

/** Where a task is in its run, as the clock sees it now. */
export type SimPhase = 'queued' | 'running' | 'done' | 'failed' | 'stuck' | 'odd';

/** One task of a simulator. */
export interface SimTask {
  readonly id: string;
  readonly createdAt: number;
  readonly finishAt: number;
  readonly model: string;
  readonly prompt: string;
  /** The submit body as the simulator received it, for vendor-specific answers. */
  readonly body: unknown;
  /** Free text the simulator attaches (the submit kind, say). */
  readonly kind: string;
  readonly failReason: string | null;
  /** Vendor status reported for ever when the prompt asks for one (`[sim:status=…]`). */
  readonly oddStatus: string | null;
  readonly never: boolean;
  /** Queries answered for this task. */
  polls: number;
}

/** A task's state at one moment. */
export interface SimState {
  readonly phase: SimPhase;
  /** 0–100, rising while running. */
  readonly progress: number;
}

/** Options of a task book. */
export interface TaskBookOptions {
  /** Milliseconds from submission to the end of a task unless its prompt says otherwise; default 3000. */
  readonly finishMs?: number;
  /** Most tasks kept; the oldest are forgotten beyond it. Default 200,000. */
  readonly maxTasks?: number;
  readonly clock?: () => number;
}

const FINISH = /\[sim:finish=([0-9]{1,7})\]/;
const FAIL = /\[sim:fail(?:=([A-Za-z0-9_-]{1,64}))?\]/;
const STATUS = /\[sim:status=([A-Za-z0-9_-]{1,32})\]/;

/** The tasks of one simulator. */
export class TaskBook {
  readonly #tasks = new Map<string, SimTask>();
  readonly #finishMs: number;
  readonly #max: number;
  readonly #clock: () => number;

  constructor(opts: TaskBookOptions = {}) {
    this.#finishMs = opts.finishMs ?? 3000;
    this.#max = opts.maxTasks ?? 200_000;
    this.#clock = opts.clock ?? Date.now;
  }

  /** Creates a task; `prefix` shapes the vendor's id style. */
  create(input: { model: string; prompt: string; body: unknown; kind?: string; prefix?: string }): SimTask {
    const now = this.#clock();
    const finish = FINISH.exec(input.prompt);
    const fail = FAIL.exec(input.prompt);
    const task: SimTask = {
      id: `${input.prefix ?? ''}${randomBytes(12).toString('hex')}`,
      createdAt: now,
      finishAt: now + (finish ? Number(finish[1]) : this.#finishMs),
      model: input.model,
      prompt: input.prompt,
      body: input.body,
      kind: input.kind ?? '',
      failReason: fail ? (fail[1] ?? 'generation_failed') : null,
      oddStatus: STATUS.exec(input.prompt)?.[1] ?? null,
      never: input.prompt.includes('[sim:never]'),
      polls: 0,
    };
    this.#tasks.set(task.id, task);
    if (this.#tasks.size > this.#max) dropOldest(this.#tasks);
    return task;
  }

  /** The task of an id, or undefined. */
  get(id: string): SimTask | undefined {
    return this.#tasks.get(id);
  }

  /** Every task the book holds, oldest first. */
  list(): SimTask[] {
    return [...this.#tasks.values()];
  }

  /** Forgets a task (the vendor deleted it); true when there was one. */
  delete(id: string): boolean {
    return this.#tasks.delete(id);
  }

  /** How many tasks the book holds. */
  get size(): number {
    return this.#tasks.size;
  }

  /** The task's phase and progress now. */
  state(task: SimTask): SimState {
    if (task.oddStatus) return { phase: 'odd', progress: 0 };
    const now = this.#clock();
    const span = Math.max(1, task.finishAt - task.createdAt);
    const elapsed = now - task.createdAt;
    if (task.never) return { phase: 'stuck', progress: 50 };
    if (now >= task.finishAt) return task.failReason ? { phase: 'failed', progress: 100 } : { phase: 'done', progress: 100 };
    if (elapsed < span / 3) return { phase: 'queued', progress: 0 };
    return { phase: 'running', progress: Math.min(99, Math.max(1, Math.floor((elapsed / span) * 100))) };
  }
}
