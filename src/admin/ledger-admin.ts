import { GatewayError } from '../errors/gateway-error.js';
import { wholeParam } from './admin-input.js';
import { tokenIdOf } from './token-keys-admin.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';

/** Rows one page gives when `limit` is not set, and the most it may ask for. */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/**
 * `GET /admin/tokens/{token_id}/ledger?after=&limit=`: the token's (by id or name) quota and use, the ledger's sums
 * (read together with `used`, so `balanced` is exact), and one page of rows oldest first. The next
 * page starts after `next_after`; null when this page is the last.
 */
export async function ledgerReport(ctx: AdminContext): Promise<AdminAnswer> {
  const { query, deps } = ctx;
  const id = await tokenIdOf(ctx);
  const after = wholeParam(query.get('after'), 'after', 0, Number.MAX_SAFE_INTEGER);
  const limit = wholeParam(query.get('limit'), 'limit', 1, MAX_LIMIT) ?? DEFAULT_LIMIT;
  const [token, balance, rows] = await Promise.all([deps.store.getToken(id), deps.store.ledgerBalance(id), deps.store.ledger(id, after, limit)]);
  if (!token || !balance) throw new GatewayError('not_found', `no token with id ${id.slice(0, 100)}`);
  return {
    json: {
      token: {
        id: token.id,
        name: token.name,
        group: token.group,
        quota: token.quota,
        used: balance.used,
        budget: token.budget ?? null,
        budget_period: token.budgetPeriod ?? null,
      },
      totals: { debit: balance.debit, refund: balance.refund, settle: balance.settle },
      balanced: balance.debit - balance.refund - balance.settle === balance.used,
      // The budget a debit came from (a give-back: the one of its debit): its period and that period's start, Unix ms; null without one.
      entries: rows.map((r) => ({
        id: r.id,
        kind: r.kind,
        ref: r.ref,
        model: r.model,
        amount: r.amount,
        at: r.at,
        budget_period: r.budgetPeriod,
        budget_start: r.budgetStart,
      })),
      next_after: rows.length === limit ? (rows.at(-1)?.id ?? null) : null,
    },
  };
}
