import { GatewayError } from '../errors/gateway-error.js';
import { periodAdjective } from '../store/budget-period.js';
import { type BudgetNow, type Store, type TokenRecord, tokenBudgetAt } from '../store/store.js';

const units = (n: number) => `${n} unit${n === 1 ? '' : 's'}`;

/** The error a request gets when its token's lifetime quota cannot pay its price. */
export function quotaShort(price: number): GatewayError {
  return new GatewayError('insufficient_user_quota', `the quota of this API key is used up (this request costs ${units(price)})`);
}

/** The error of a budget too short for `price` (docs/tokens-and-quota.md, "Budgets"): the budget, what it has left, when it renews. */
export function budgetShort(b: BudgetNow, price: number): GatewayError {
  return new GatewayError(
    'insufficient_user_quota',
    `this key's ${periodAdjective(b.period)} budget of ${units(b.budget)} has ${b.remaining} left, the request costs ${price}; it renews at ${new Date(b.resetsAt).toISOString()}`,
  );
}

/**
 * Why the store refused to spend `price` for the token, in words: its lifetime quota (which a new
 * period would not help, so it is named first) or its budget. The refusal itself was the store's
 * one atomic spend. A token without a budget (as the authenticator found it) is refused for its
 * quota at once; for one with a budget the token is read again, only for the words (what is left
 * now), and one that cannot be read gets the quota's words.
 */
export async function spendRefusal(store: Store, token: TokenRecord, price: number, now: number): Promise<GatewayError> {
  if (token.budget === null || token.budget === undefined) return quotaShort(price);
  const t = await store.getToken(token.id).catch(() => null);
  if (!t || (t.quota !== null && t.quota - t.used < price)) return quotaShort(price);
  const budget = tokenBudgetAt(t, now);
  return budget ? budgetShort(budget, price) : quotaShort(price);
}
