import type { TaskRecord } from './task-store.js';

/**
 * A page of a token's tasks (`listTasks`): after the task `after` (null: from the start), at most
 * `limit`, newest first (`desc`) or oldest first (`asc`). Newest means the later `createdAt`; tasks
 * created in the same millisecond keep the order the store took them in.
 */
export interface TaskPage {
  readonly after: string | null;
  readonly limit: number;
  readonly order: 'asc' | 'desc';
}

/** A token's own tasks, as the public list and delete routes see them. */
export interface OwnTaskStore {
  /**
   * A page of the token's tasks of those kinds that clients have seen (every status but
   * `submitting`), in the page's order. Null when `after` is not such a task of that token (another
   * token's id, an unknown or deleted one): a cursor of someone else's is unknown, never a position.
   */
  listTasks(tokenId: string, kinds: readonly string[], page: TaskPage): Promise<TaskRecord[] | null>;
  /**
   * Removes a finished task (`completed` or `failed`) of that token, results and all; true when this
   * call removed it. An unfinished task, another token's and an unknown one are left (false). Its
   * ledger rows stay, as the record of what was spent: a deletion moves no units.
   */
  deleteTask(id: string, tokenId: string): Promise<boolean>;
}
