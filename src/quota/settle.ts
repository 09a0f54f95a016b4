import type { TaskRecord } from '../store/store.js';
import { asSeconds, chargeFor } from './price.js';

/**
 * The final charge of a task that completes (the `settle` of its store patch): for a per-second
 * price, the price of the seconds the vendor reports; the hold when the price is flat or the
 * seconds are unknown. The store charges at most the hold and gives back the difference, once.
 */
export function finalCharge(task: Pick<TaskRecord, 'price' | 'pricing'>, reportedSeconds: string | null): number {
  const seconds = task.pricing ? asSeconds(reportedSeconds) : null;
  if (!task.pricing || seconds === null) return task.price;
  return Math.min(task.price, chargeFor(task.pricing, seconds));
}
