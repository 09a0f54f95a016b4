import type { HoldRef, Store, TokenRecord } from '../store/store.js';
import type { HoldEndings } from './hold-endings.js';
import { spendRefusal } from './refusal.js';

/**
 * The price a synchronous request holds on its token's quota while it runs (docs/tokens-and-quota.md, "When the
 * quota moves"), recorded in the store until it ends so that a crash cannot strand it (an expired
 * hold is settled or given back by the sweep, src/quota/hold-sweep.ts). Whichever comes first
 * wins, once: `settle` when the answer is delivered (a synchronous answer reports no seconds, so
 * the hold is the charge and nothing moves), `refund` when the request fails. Neither waits for the
 * store: the ending is written in a batch after the answer left (./hold-endings.ts).
 */
export interface Hold {
  settle(): void;
  refund(): void;
}

/**
 * Debits the price of a synchronous request before it is sent upstream, atomically in the store
 * with its ledger row and its hold record, so concurrent requests can never overspend a quota or
 * a budget: the one store write a request waits for. `now` (Unix ms) dates the words of a
 * refusal: when a budget renews.
 */
export async function holdPrice(store: Store, endings: HoldEndings, token: TokenRecord, price: number, entry: HoldRef, now = Date.now()): Promise<Hold> {
  if (!(await store.hold(token.id, price, entry))) throw await spendRefusal(store, token, price, now);
  let done = false;
  // A hold of 0 units records nothing, so there is nothing to end.
  const end = (outcome: 'settle' | 'refund') => {
    if (done || price === 0) return;
    done = true;
    endings.end({ ref: entry.ref, outcome, tokenId: token.id, model: entry.model, amount: price });
  };
  return { settle: () => end('settle'), refund: () => end('refund') };
}
