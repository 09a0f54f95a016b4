import { budgetAt, type BudgetNow, type BudgetPeriod } from './budget-period.js';

/** An API token as stored: only the SHA-256 of its key is kept. */
export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  readonly keyHash: string;
  readonly group: string;
  /** Models the token may use; null means every model of its group. */
  readonly models: readonly string[] | null;
  /** Total units the token may spend; null means unlimited. */
  readonly quota: number | null;
  readonly used: number;
  readonly disabled: boolean;
  readonly createdAt: number;
  /** Requests it may start per minute (docs/tokens-and-quota.md, "Rate limits"); null or absent: no limit. */
  readonly rpmLimit?: number | null;
  /** Requests it may have in flight at once; null or absent: no limit. */
  readonly maxParallel?: number | null;
  /** When the key stops working, Unix milliseconds (docs/tokens-and-quota.md, "Expiry"); null or absent: never. */
  readonly expiresAt?: number | null;
  /** Units it may spend per period (docs/tokens-and-quota.md, "Budgets"); null or absent: no budget. */
  readonly budget?: number | null;
  /** The budget's period; null when there is no budget. */
  readonly budgetPeriod?: BudgetPeriod | null;
  /** When the budget was set (Unix ms): where an N-day period counts from. */
  readonly budgetAnchor?: number | null;
  /** The start of the period `budgetUsed` counts in (Unix ms); a later period has used nothing yet. */
  readonly budgetStart?: number | null;
  /** Units spent in the period that started at `budgetStart`. */
  readonly budgetUsed?: number;
  /** The hash of the key a rotation replaced (./token-key-store.ts); null or absent: none. */
  readonly previousKeyHash?: string | null;
  /** Until when (Unix ms) that key still works; null or absent: none. */
  readonly previousKeyExpiresAt?: number | null;
  /** When a request last authenticated with it (Unix ms, written in batches); null or absent: never. */
  readonly lastUsedAt?: number | null;
  /** The CIDRs or addresses its requests may come from; null or absent: anywhere. */
  readonly allowedIps?: readonly string[] | null;
}

/**
 * What `deleteToken` did. A token still in use (an unfinished task, or a hold of a synchronous
 * request in flight) is not deleted: its refund or settlement needs it. `busy` says what runs.
 */
export type TokenDeletion =
  | { readonly outcome: 'deleted'; readonly token: TokenRecord }
  | { readonly outcome: 'unknown' }
  | { readonly outcome: 'busy'; readonly unfinishedTasks: number; readonly holds: number };

/** What a new token needs. */
export interface NewToken {
  readonly name: string;
  readonly keyHash: string;
  readonly group: string;
  readonly models: readonly string[] | null;
  readonly quota: number | null;
  /** Requests per minute; absent or null: no limit. */
  readonly rpmLimit?: number | null;
  /** Requests in flight at once; absent or null: no limit. */
  readonly maxParallel?: number | null;
  /** When the key stops working, Unix milliseconds; absent or null: never. */
  readonly expiresAt?: number | null;
  /** Units per period; absent or null: no budget. Given with `budgetPeriod`. */
  readonly budget?: number | null;
  readonly budgetPeriod?: BudgetPeriod | null;
}

/** A change of a token's rate limits: a field left out stays as it is, null removes that limit. */
export interface TokenLimitsChange {
  readonly rpmLimit?: number | null;
  readonly maxParallel?: number | null;
}

/** The tokens: created, found by the hash of their key, listed, disabled, given a quota, deleted. */
export interface TokenStore {
  createToken(token: NewToken): Promise<TokenRecord>;
  findTokenByHash(keyHash: string): Promise<TokenRecord | null>;
  listTokens(): Promise<TokenRecord[]>;
  /** Removes the token of that name (names are unique: at most one); returns how many went. */
  deleteTokensNamed(name: string): Promise<number>;
  /** The token of that id; null when there is none. */
  getToken(id: string): Promise<TokenRecord | null>;
  /** Disables (refused from then on) or enables a token; the token as it now is, null when there is none. */
  setTokenDisabled(id: string, disabled: boolean): Promise<TokenRecord | null>;
  /** Sets a token's quota (null: unlimited), even below what it used; the token as it now is, null when there is none. */
  setTokenQuota(id: string, quota: number | null): Promise<TokenRecord | null>;
  /**
   * Deletes a token unless it is busy (see TokenDeletion), atomically with task creation and holds:
   * once it is gone none can start for it, and none that started before is left without it. Its
   * ledger rows, finished tasks and resources stay, as the record of what it did.
   */
  deleteToken(id: string): Promise<TokenDeletion>;
  /** Sets a token's rate limits (see TokenLimitsChange); the token as it now is, null when there is none. */
  setTokenLimits(id: string, change: TokenLimitsChange): Promise<TokenRecord | null>;
  /** Sets when a token's key stops working (Unix ms, even past; null: never); the token as it now is, null when there is none. */
  setTokenExpiry(id: string, expiresAt: number | null): Promise<TokenRecord | null>;
  /**
   * Sets a token's budget: `budget` units per `period` (both null: none). A change of the amount
   * alone keeps the period running and what it used; a new period (or a budget where there was
   * none) starts one now with nothing used. The token as it now is, null when there is none.
   */
  setTokenBudget(id: string, budget: number | null, period: BudgetPeriod | null): Promise<TokenRecord | null>;
}

/** A token's budget as it stands at `now` (Unix ms): its period, what that used and has left, when it renews; null without one. */
export function tokenBudgetAt(t: TokenRecord, now: number): BudgetNow | null {
  return budgetAt(
    { budget: t.budget ?? null, period: t.budgetPeriod ?? null, anchor: t.budgetAnchor ?? null, start: t.budgetStart ?? null, used: t.budgetUsed ?? 0 },
    now,
  );
}
