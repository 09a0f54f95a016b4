/**
 * The money rules every store driver applies inside its transactions, so two drivers can never
 * disagree on what a settlement charges (docs/tokens-and-quota.md, "When the quota moves").
 */

/**
 * What a settlement charges: a whole number of units from 0 to the price held, rounded up; a
 * figure that is not a finite number keeps the whole hold. The rest of the hold goes back, once.
 */
export function clampSettlement(settle: number, held: number): number {
  return Number.isFinite(settle) ? Math.min(held, Math.max(0, Math.ceil(settle))) : held;
}

/** What a task update does to the money: the task's new `refunded` and `charged`, and what goes back. */
export interface TaskMoney {
  readonly refunded: boolean;
  readonly charged: number | null;
  readonly giveBack: { readonly kind: 'refund' | 'settle'; readonly amount: number } | null;
}

/**
 * Refund and settlement ride on the task's compare-and-set: only a task not yet refunded pays out,
 * once, and only one neither settled nor refunded settles. What goes back is never more than what
 * the task still holds.
 */
export function taskMoney(task: { price: number; charged: number | null; refunded: boolean }, patch: { refund?: boolean; settle?: number }): TaskMoney {
  if (patch.refund === true && !task.refunded) {
    return { refunded: true, charged: 0, giveBack: { kind: 'refund', amount: task.charged ?? task.price } };
  }
  if (patch.settle !== undefined && task.charged === null && !task.refunded) {
    const charged = clampSettlement(patch.settle, task.price);
    return { refunded: false, charged, giveBack: { kind: 'settle', amount: task.price - charged } };
  }
  return { refunded: task.refunded, charged: task.charged, giveBack: null };
}
