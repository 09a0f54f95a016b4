/**
 * The money rules every store driver applies inside its transactions, so two drivers can never
 * disagree on what a settlement charges (README, "When the quota moves").
 */

/**
 * What a settlement charges: a whole number of units from 0 to the price held, rounded up; a
 * figure that is not a finite number keeps the whole hold. The rest of the hold goes back, once.
 */
export function clampSettlement(settle: number, held: number): number {
  return Number.isFinite(settle) ? Math.min(held, Math.max(0, Math.ceil(settle))) : held;
}
