/**
 * The store interface: everything the gateway keeps across restarts. One contract test suite
 * (test/store-contract.ts) is run against every driver, so drivers are interchangeable.
 */

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
}

/** What a new token needs. */
export interface NewToken {
  readonly name: string;
  readonly keyHash: string;
  readonly group: string;
  readonly models: readonly string[] | null;
  readonly quota: number | null;
}

/** Persistent state of the gateway. Every method is safe under concurrent callers. */
export interface Store {
  createToken(token: NewToken): Promise<TokenRecord>;
  findTokenByHash(keyHash: string): Promise<TokenRecord | null>;
  listTokens(): Promise<TokenRecord[]>;
  /** Removes the tokens of that name; returns how many went. */
  deleteTokensNamed(name: string): Promise<number>;
  /** Atomically spends `amount` units if the quota allows it; false when it does not. */
  debit(tokenId: string, amount: number): Promise<boolean>;
  /** Gives back units of a debit whose request failed. */
  refund(tokenId: string, amount: number): Promise<void>;
  close(): Promise<void>;
}
