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

/**
 * How a synchronous request's hold ends (docs/tokens-and-quota.md, "When the quota moves"): written
 * in batches after the answer left (src/quota/hold-endings.ts), so it names everything a settlement
 * needs should it find its hold already given back.
 */
export interface HoldEnding {
  readonly ref: string;
  /** `settle`: the debit stands; `refund`: the units go back with a `refund` row. */
  readonly outcome: 'settle' | 'refund';
  readonly tokenId: string;
  readonly model: string;
  /** The units held, > 0 (a hold of 0 units records nothing and is never ended). */
  readonly amount: number;
}

/**
 * What ending a hold did: `ended` it; found it `gone` (ended before, by its other outcome or by
 * expiry, or never recorded) and did nothing; or, a settlement whose hold expiry had given back
 * (no debit of its request stands), `charged` its units again, whatever the quota.
 */
export type HoldEnd = 'ended' | 'gone' | 'charged';

/** A hold ended because it expired: given back, or settled when the request log shows its request answered. */
export interface ExpiredHold {
  readonly ref: string;
  readonly tokenId: string;
  readonly model: string;
  readonly amount: number;
  readonly expiresAt: number;
  /** `settled`: the request log has the request's success, so its debit stands; `refunded`: its units went back. */
  readonly outcome: 'settled' | 'refunded';
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
   * Ends holds in one batch, each exactly once whatever else ends it (`expireHolds`, on any replica),
   * and answers what each ending did, in order. Safe to run again with the same endings (a batch
   * whose answer was lost): what the first run ended is `gone` the second time, and a settlement is
   * charged again only while no debit of its request stands.
   */
  endHolds(endings: readonly HoldEnding[]): Promise<HoldEnd[]>;
  /**
   * Ends, each exactly once, at most `limit` holds that expired at or before `now` (oldest first), and
   * returns them: a hold whose request the request log records as answered (status below 400) is
   * settled, its debit standing; any other is given back with a `refund` row.
   */
  expireHolds(now: number, limit: number): Promise<ExpiredHold[]>;
  /** Ledger rows of a token with ids after `after` (null: from the start), oldest first, at most `limit`. */
  ledger(tokenId: string, after: number | null, limit: number): Promise<LedgerEntry[]>;
  /** The token's `used` and its ledger's sums, read together; null for an unknown token. */
  ledgerBalance(tokenId: string): Promise<LedgerBalance | null>;
}
