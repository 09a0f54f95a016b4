import { TASK_HISTORY_LIMIT, type TaskPatch, type TaskRecord, type TaskStateSeen } from './store.js';

/**
 * The states a task was seen in (Store.updateTask), as the drivers keep them: a JSON array in the
 * `history` column, oldest first. SQLite applies these functions to the row it has just read;
 * PostgreSQL, which updates without reading, says the same in SQL (./postgres/tasks.ts), and the
 * contract suite holds both to it.
 */

/**
 * The state an update leaves a task in when it changes its status, vendor status or progress, at
 * `now` (when it is written); null when it changes none.
 */
export function stateSeen(before: Pick<TaskRecord, 'status' | 'vendorStatus' | 'progress'>, patch: TaskPatch, now: number): TaskStateSeen | null {
  const status = patch.status ?? before.status;
  const vendorStatus = patch.vendorStatus !== undefined ? patch.vendorStatus : before.vendorStatus;
  const progress = patch.progress ?? before.progress;
  if (status === before.status && vendorStatus === before.vendorStatus && progress === before.progress) return null;
  return { at: now, status, vendorStatus, progress };
}

/** A stored history with `state` appended; the oldest states beyond TASK_HISTORY_LIMIT go. */
export function withState(history: string | null, state: TaskStateSeen): string {
  return JSON.stringify([...readStates(history), state].slice(-TASK_HISTORY_LIMIT));
}

/** The states of a stored history; none for a row from before histories were kept. */
export function readStates(history: string | null): TaskStateSeen[] {
  return history === null ? [] : (JSON.parse(history) as TaskStateSeen[]);
}
