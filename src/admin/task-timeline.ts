import type { LedgerEntry, TaskHistory, TaskRecord, TaskStatus } from '../store/store.js';
import { TERMINAL_STATUSES } from '../store/store.js';

/**
 * What operators see of a task (GET /admin/tasks): who, what, where it ran, how far, what it cost.
 * Never the vendor's id, its result URLs, the mapping's context or the pricing terms.
 */
export interface AdminTaskView {
  readonly id: string;
  readonly token_id: string;
  /** The token's name; null once it is deleted. */
  readonly token_name: string | null;
  readonly kind: string;
  readonly route: string;
  readonly model: string;
  readonly channel: string;
  readonly status: TaskStatus;
  readonly progress: number;
  readonly vendor_status: string | null;
  readonly price: number;
  readonly charged: number | null;
  readonly refunded: boolean;
  readonly created_at: number;
  readonly updated_at: number;
  readonly completed_at: number | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** One task in full (GET /admin/tasks/{task_id}): the listed fields, the request's facts, and how many results (not where). */
export interface AdminTaskDetail extends AdminTaskView {
  readonly seconds: string | null;
  readonly size: string | null;
  readonly deadline_at: number;
  readonly results: number;
}

/** One moment of a task's timeline, oldest first. */
export type TimelineEvent =
  | { readonly at: number; readonly event: 'submitted' }
  | { readonly at: number; readonly event: 'vendor_state'; readonly status: TaskStatus; readonly vendor_status: string | null; readonly progress: number }
  | {
      readonly at: number;
      readonly event: 'completed' | 'failed';
      readonly vendor_status: string | null;
      readonly charged: number | null;
      readonly error: AdminTaskView['error'];
    }
  | { readonly at: number; readonly event: LedgerEntry['kind']; readonly amount: number; readonly ledger_id: number };

/** A task as operators see it in a list, with its token's name (null: deleted, or not looked up). */
export function adminTaskView(t: TaskRecord, tokenName: string | null = null): AdminTaskView {
  return {
    id: t.id,
    token_id: t.tokenId,
    token_name: tokenName,
    kind: t.kind,
    route: t.route,
    model: t.model,
    channel: t.channel,
    status: t.status,
    progress: t.progress,
    vendor_status: t.vendorStatus,
    price: t.price,
    charged: t.charged,
    refunded: t.refunded,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    completed_at: t.completedAt,
    // Copied field by field: a profile's error mapping gives code and message, and nothing else leaves.
    error: t.error === null ? null : { code: t.error.code, message: t.error.message },
  };
}

/** A task as operators see it alone. */
export function adminTaskDetail(t: TaskRecord, tokenName: string | null): AdminTaskDetail {
  return { ...adminTaskView(t, tokenName), seconds: t.seconds, size: t.size, deadline_at: t.deadlineAt, results: t.results.length };
}

// Where an event goes among those of the same millisecond: the order in which they happen.
const RANK: Readonly<Record<TimelineEvent['event'], number>> = { submitted: 0, debit: 1, vendor_state: 2, completed: 3, failed: 3, settle: 4, refund: 4 };

/**
 * The task's timeline, oldest first: submitted, its debit, each state the gateway saw before the
 * end, the end (from the record, so a task stored before states were kept still has one), and
 * what settlement gave back or the refund.
 */
export function timeline({ task, states, ledger }: TaskHistory): TimelineEvent[] {
  const events: TimelineEvent[] = [{ at: task.createdAt, event: 'submitted' }];
  for (const s of states) {
    // The end is told once, below; a state seen after it cannot be (a finished task takes no update of its state).
    if (!TERMINAL_STATUSES.has(s.status))
      events.push({ at: s.at, event: 'vendor_state', status: s.status, vendor_status: s.vendorStatus, progress: s.progress });
  }
  if (task.status === 'completed' || task.status === 'failed') {
    const error = adminTaskView(task).error;
    events.push({ at: task.completedAt ?? task.updatedAt, event: task.status, vendor_status: task.vendorStatus, charged: task.charged, error });
  }
  for (const l of ledger) events.push({ at: l.at, event: l.kind, amount: l.amount, ledger_id: l.id });
  // Stable: events of one time and rank keep the order above.
  return events.sort((a, b) => a.at - b.at || RANK[a.event] - RANK[b.event]);
}
