/** A movement of a token's `used`: `debit` adds, `refund` and `settle` (what settlement gives back) take away. */
export type LedgerKind = 'debit' | 'refund' | 'settle';

/** One row of the usage ledger (docs/tokens-and-quota.md, "Quota, prices and the ledger"). */
export interface LedgerEntry {
  /** Increasing; pages of the ledger are read after an id. */
  readonly id: number;
  readonly tokenId: string;
  readonly kind: LedgerKind;
  /** The task id, or the request id of a synchronous request. */
  readonly ref: string;
  /** Public model name. */
  readonly model: string;
  /** Units moved, > 0. */
  readonly amount: number;
  /** Unix milliseconds. */
  readonly at: number;
  /**
   * The budget the debit came from (docs/tokens-and-quota.md, "Budgets"): its period and the start of
   * that period; for a refund or a settlement, those of the debit it gives back. Null without a budget.
   */
  readonly budgetPeriod: string | null;
  readonly budgetStart: number | null;
}

/** What a debit or a refund of a synchronous request is for. */
export interface LedgerRef {
  readonly ref: string;
  readonly model: string;
}

/**
 * A synchronous request's hold (docs/tokens-and-quota.md, "Quota, prices and the ledger"): its debit, recorded until
 * the request settles (the debit stands) or fails (it goes back). A hold still recorded after
 * `expiresAt` belongs to a request that can no longer finish (its process died) and is given back.
 */
export interface HoldRef extends LedgerRef {
  /** Unix milliseconds, later than the longest the request can run. */
  readonly expiresAt: number;
}

/** A hold given back because it expired. */
export interface ExpiredHold {
  readonly ref: string;
  readonly tokenId: string;
  readonly model: string;
  readonly amount: number;
  readonly expiresAt: number;
}

/**
 * A token's `used` and the units its whole ledger moved per kind, read together (one consistent
 * view): `debit − refund − settle = used`, always.
 */
export type LedgerBalance = Readonly<Record<LedgerKind, number> & { used: number }>;

/** Units spent and given back, each with its ledger row, and the ledger read back. */
export interface QuotaStore {
  /**
   * Atomically spends `amount` units if the quota allows it, with its ledger row; false, with
   * nothing written, when it does not.
   */
  debit(tokenId: string, amount: number, entry: LedgerRef): Promise<boolean>;
  /**
   * Gives back `amount` units of a debit whose request failed, with its ledger row. Callers give
   * back a debit at most once (src/quota/account.ts); tasks are refunded through updateTask.
   */
  refund(tokenId: string, amount: number, entry: LedgerRef): Promise<void>;
  /**
   * A debit (as `debit`) recorded as a hold until `entry.expiresAt`, in the same transaction; false,
   * with nothing written, when the quota is short. A hold of 0 units records nothing.
   */
  hold(tokenId: string, amount: number, entry: HoldRef): Promise<boolean>;
  /**
   * Ends the hold of request `ref`: settled (`refund` false: the debit stands) or failed (the units
   * go back with a `refund` row), in one transaction. True when this call ended it; false when it
   * was ended before (by the other outcome or by expiry) or never recorded.
   */
  releaseHold(ref: string, refund: boolean): Promise<boolean>;
  /**
   * Gives back, each exactly once with a `refund` row, at most `limit` holds that expired at or
   * before `now` (oldest first), and returns them.
   */
  expireHolds(now: number, limit: number): Promise<ExpiredHold[]>;
  /**
   * Spends `amount` units whatever the quota, with a `debit` row: for a request that was served
   * after its hold had already been given back by expiry.
   */
  charge(tokenId: string, amount: number, entry: LedgerRef): Promise<void>;
  /** Ledger rows of a token with ids after `after` (null: from the start), oldest first, at most `limit`. */
  ledger(tokenId: string, after: number | null, limit: number): Promise<LedgerEntry[]>;
  /** The token's `used` and its ledger's sums, read together; null for an unknown token. */
  ledgerBalance(tokenId: string): Promise<LedgerBalance | null>;
}
