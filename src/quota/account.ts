import type { Logger } from 'pino';
import type { HoldRef, Store, TokenRecord } from '../store/store.js';
import { spendRefusal } from './refusal.js';

/**
 * The price a synchronous request holds on its token's quota while it runs (docs/tokens-and-quota.md, "Quota, prices
 * and the ledger"), recorded in the store until it ends so that a crash cannot strand it (an
 * expired hold is given back by the sweep, src/quota/hold-sweep.ts). Whichever comes first wins,
 * once: `settle` when the answer is delivered (a synchronous answer reports no seconds, so the hold
 * is the charge and nothing moves), `refund` when the request fails.
 */
export interface Hold {
  settle(): Promise<void>;
  refund(): Promise<void>;
}

/**
 * Debits the price of a synchronous request before it is sent upstream, atomically in the store
 * with its ledger row and its hold record, so concurrent requests can never overspend a quota or
 * a budget. `now` (Unix ms) dates the words of a refusal: when a budget renews.
 */
export async function holdPrice(store: Store, token: TokenRecord, price: number, entry: HoldRef, log: Logger, now = Date.now()): Promise<Hold> {
  if (!(await store.hold(token.id, price, entry))) throw await spendRefusal(store, token, price, now);
  let done = false;
  return {
    async settle() {
      if (done || price === 0) return;
      done = true;
      if (await store.releaseHold(entry.ref, false)) return;
      // The sweep took this hold for a request that could not finish, yet it did: it is charged again, so
      // the ledger shows the refund and the new debit and still balances.
      log.warn({ ref: entry.ref, token: token.id, price }, 'a request outlived its hold; charged again');
      await store.charge(token.id, price, entry);
    },
    async refund() {
      if (done) return;
      done = true;
      if (price > 0) await store.releaseHold(entry.ref, true);
    },
  };
}
