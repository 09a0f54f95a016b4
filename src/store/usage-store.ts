/** Which ledger rows `usage` sums: `from` ≤ `at` < `to` (Unix ms), of one token and/or one model when given. */
export interface UsageQuery {
  readonly from: number;
  readonly to: number;
  readonly tokenId: string | null;
  readonly model: string | null;
}

/**
 * The ledger rows of one UTC day, one token and one model, summed by kind (docs/console.md, "Usage"). Each
 * row counts on the day of its own `at`: a refund the day after its debit counts the day after.
 */
export interface UsageGroup {
  /** The UTC day, `YYYY-MM-DD`. */
  readonly day: string;
  readonly tokenId: string;
  /** The token's name; null once the token was deleted (its ledger rows stay). */
  readonly tokenName: string | null;
  readonly model: string;
  /** Units of the day's `debit`, `refund` and `settle` rows. */
  readonly debit: number;
  readonly refund: number;
  readonly settle: number;
  /** How many `debit` and `refund` rows (a refund gives back a whole debit; a settlement only part of one). */
  readonly debits: number;
  readonly refunds: number;
}

/** The ledger summed for the usage reports. */
export interface UsageStore {
  /**
   * The ledger summed in the store by UTC day, token and model over the query's range, ordered by
   * day, token id and model (byte-wise), at most `limit` groups.
   */
  usage(query: UsageQuery, limit: number): Promise<UsageGroup[]>;
}
