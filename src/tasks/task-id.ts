import { randomBytes } from 'node:crypto';

/** Our task ids: `task_` and 24 base64url characters (144 random bits), safe in a path segment. */
const SHAPE = /^task_[A-Za-z0-9_-]{24}$/;

/** A new random, unguessable task id. */
export function newTaskId(): string {
  return `task_${randomBytes(18).toString('base64url')}`;
}

/** Whether a string has the shape of one of our ids (anything else is not found without a store read). */
export function isTaskId(value: unknown): value is string {
  return typeof value === 'string' && SHAPE.test(value);
}

/** Deterministic ids for golden runs: task_ and a counter, padded to the real shape. */
export function sequentialTaskIds(prefix = 'golden'): () => string {
  let n = 0;
  return () => `task_${`${prefix}${String(++n)}`.padEnd(24, '0').slice(0, 24)}`;
}
