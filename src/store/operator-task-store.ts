import type { LedgerEntry } from './quota-store.js';
import type { TaskRecord, TaskStateSeen, TaskStatus } from './task-store.js';

/**
 * Which tasks of every token `findTasks` answers (operators): each filter set narrows them; a page
 * of at most `limit`, newest first by (`createdAt`, `id`), strictly after `before` in that order.
 */
export interface TaskQuery {
  readonly status?: TaskStatus;
  readonly model?: string;
  readonly channel?: string;
  readonly tokenId?: string;
  /** Where the previous page ended; null: from the newest. */
  readonly before: { readonly createdAt: number; readonly id: string } | null;
  readonly limit: number;
}

/** One task as the gateway saw it: its record, its states seen (oldest first), and the ledger rows of its id. */
export interface TaskHistory {
  readonly task: TaskRecord;
  /** The last TASK_HISTORY_LIMIT; empty for a task stored before states were recorded. */
  readonly states: readonly TaskStateSeen[];
  /** Oldest first: the debit of its price, then a settlement's give-back or a refund, if any. */
  readonly ledger: readonly LedgerEntry[];
}

/** The operators' view of the tasks of every token (GET /admin/tasks). */
export interface OperatorTaskStore {
  /**
   * Tasks of every token, `submitting` ones too, newest first by (createdAt, id), narrowed by the
   * query (GET /admin/tasks). A position deleted meanwhile is still a position: paging goes on.
   */
  findTasks(query: TaskQuery): Promise<TaskRecord[]>;
  /** A task with the states it was seen in and its ledger rows; null for an unknown id. */
  taskHistory(id: string): Promise<TaskHistory | null>;
}
