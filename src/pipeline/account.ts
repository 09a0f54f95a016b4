import { GatewayError } from '../errors/gateway-error.js';
import type { Store, TokenRecord } from '../store/store.js';

/** Units one request costs until per-model prices exist (issue #5). */
export const REQUEST_PRICE = 1;

/**
 * Spends the price of a request before it is sent upstream, atomically in the store, so
 * concurrent requests can never overspend a quota. Returns the refund to call if it fails.
 */
export async function debit(store: Store, token: TokenRecord, amount = REQUEST_PRICE): Promise<() => Promise<void>> {
  if (!(await store.debit(token.id, amount))) {
    throw new GatewayError('insufficient_user_quota', 'the quota of this API key is used up');
  }
  let refunded = false;
  return async () => {
    if (refunded) return;
    refunded = true;
    await store.refund(token.id, amount);
  };
}
