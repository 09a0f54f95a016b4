import { GatewayError } from '../errors/gateway-error.js';
import type { LedgerRef, Store, TokenRecord } from '../store/store.js';

/**
 * The price a synchronous request holds on its token's quota while it runs (README, "Quota, prices
 * and the ledger"). Whichever comes first wins, once: `settle` when the answer is delivered (a
 * synchronous answer reports no seconds, so the hold is the charge and nothing moves), `refund`
 * when the request fails.
 */
export interface Hold {
  settle(): void;
  refund(): Promise<void>;
}

/** The error a request gets when its token cannot pay its price. */
export function quotaShort(price: number): GatewayError {
  return new GatewayError('insufficient_user_quota', `the quota of this API key is used up (this request costs ${price} unit${price === 1 ? '' : 's'})`);
}

/**
 * Debits the price of a synchronous request before it is sent upstream, atomically in the store
 * with its ledger row, so concurrent requests can never overspend a quota.
 */
export async function holdPrice(store: Store, token: TokenRecord, price: number, entry: LedgerRef): Promise<Hold> {
  if (!(await store.debit(token.id, price, entry))) throw quotaShort(price);
  let done = false;
  return {
    settle() {
      done = true;
    },
    async refund() {
      if (done) return;
      done = true;
      if (price > 0) await store.refund(token.id, price, entry);
    },
  };
}
