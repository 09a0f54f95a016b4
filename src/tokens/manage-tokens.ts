/** What operators do to tokens, the same way from the CLI (`gateway tokens …`) and the admin routes. */
import { type Operator, recordAudit } from '../records/audit.js';
import { type BudgetPeriod, type NewToken, type TokenDeletion, type TokenLimitsChange, type TokenRecord, tokenBudgetAt } from '../store/store.js';
import { expiryView } from './expiry.js';
import { generateKey, hashKey } from './keys.js';

/** A token as operators see it: never its key, nor the key's hash. */
export interface TokenView {
  readonly id: string;
  readonly name: string;
  readonly group: string;
  /** Null: every model of its group. */
  readonly models: readonly string[] | null;
  /** Null: unlimited. */
  readonly quota: number | null;
  readonly used: number;
  readonly disabled: boolean;
  /** Unix milliseconds. */
  readonly created_at: number;
  /** Requests per minute; null: no limit. */
  readonly rpm_limit: number | null;
  /** Requests in flight at once; null: no limit. */
  readonly max_parallel: number | null;
  /** When the key stops working, ISO 8601 in UTC; null: never. */
  readonly expires_at: string | null;
  /** Units of the quota not yet used; null: unlimited. */
  readonly quota_remaining: number | null;
  /** Units it may spend per period (docs/tokens-and-quota.md, "Budgets"); null: no budget, and so the four below. */
  readonly budget: number | null;
  /** `day`, `week`, `month` or `<N>d`. */
  readonly budget_period: BudgetPeriod | null;
  /** Units spent in the current period. */
  readonly budget_used: number | null;
  readonly budget_remaining: number | null;
  /** When the current period ends and the budget renews, ISO 8601 in UTC. */
  readonly budget_resets_at: string | null;
  /** Until when the key its last rotation replaced works (a past instant: it has stopped), ISO 8601 in UTC; null: never rotated. */
  readonly previous_key_expires_at: string | null;
  /** When a request last authenticated with it, ISO 8601 in UTC (written within a minute or so); null: never. */
  readonly last_used_at: string | null;
  /** The CIDRs or addresses its requests may come from; null: anywhere. */
  readonly allowed_ips: readonly string[] | null;
}

/** The operator's view of a token at `now` (Unix ms): its budget as the current period stands. */
export function tokenView(t: TokenRecord, now = Date.now()): TokenView {
  const b = tokenBudgetAt(t, now);
  return {
    id: t.id,
    name: t.name,
    group: t.group,
    models: t.models,
    quota: t.quota,
    used: t.used,
    disabled: t.disabled,
    created_at: t.createdAt,
    rpm_limit: t.rpmLimit ?? null,
    max_parallel: t.maxParallel ?? null,
    expires_at: expiryView(t.expiresAt),
    quota_remaining: t.quota === null ? null : Math.max(0, t.quota - t.used),
    budget: b?.budget ?? null,
    budget_period: b?.period ?? null,
    budget_used: b?.used ?? null,
    budget_remaining: b?.remaining ?? null,
    budget_resets_at: b ? new Date(b.resetsAt).toISOString() : null,
    previous_key_expires_at: expiryView(t.previousKeyExpiresAt),
    last_used_at: expiryView(t.lastUsedAt),
    allowed_ips: t.allowedIps ?? null,
  };
}

/**
 * Creates a token with a new key; the key is answered this once, only its hash is stored. Audited.
 * A name another token has is TokenNameTaken. An allow-list is set before the key is answered, so
 * the key never works from elsewhere.
 */
export async function issueToken(
  op: Operator,
  token: Omit<NewToken, 'keyHash'> & { readonly allowedIps?: readonly string[] | null },
): Promise<{ token: TokenRecord; key: string }> {
  const key = generateKey();
  const { allowedIps, ...fields } = token;
  let created = await op.store.createToken({ ...fields, keyHash: hashKey(key) });
  if (allowedIps) created = (await op.store.setTokenAllowedIps(created.id, allowedIps)) ?? created;
  await recordAudit(op, 'token.create', created.id, null, tokenView(created));
  return { token: created, key };
}

/** Renames a token (TokenNameTaken when another has the name); the token as it now is, null when there is none. Audited. */
export async function renameToken(op: Operator, id: string, name: string): Promise<TokenRecord | null> {
  return changeToken(op, 'token.rename', id, () => op.store.renameToken(id, name));
}

/** Sets the addresses a token's requests may come from (null: anywhere); the token as it now is. Audited. */
export async function setAllowedIps(op: Operator, id: string, allowedIps: readonly string[] | null): Promise<TokenRecord | null> {
  return changeToken(op, 'token.allowed_ips', id, () => op.store.setTokenAllowedIps(id, allowedIps));
}

/**
 * Gives a token a new key (answered this once); the old one works `graceMs` more (0: it stops
 * now), and any key an earlier rotation replaced stops now. Audited as `token.rotate`, without
 * either key. `before` is the token as it was: every key it had must be forgotten by the replicas.
 */
export async function rotateKey(
  op: Operator,
  id: string,
  graceMs: number,
): Promise<{ readonly before: TokenRecord; readonly token: TokenRecord; readonly key: string } | null> {
  const before = await op.store.getToken(id);
  if (!before) return null;
  const key = generateKey();
  const token = await op.store.rotateTokenKey(id, hashKey(key), (op.now?.() ?? Date.now()) + graceMs);
  if (!token) return null;
  await recordAudit(op, 'token.rotate', id, tokenView(before), tokenView(token));
  return { before, token, key };
}

/** Disables or enables a token; the token as it now is, null when there is none. Audited when it exists. */
export async function setDisabled(op: Operator, id: string, disabled: boolean): Promise<TokenRecord | null> {
  return changeToken(op, disabled ? 'token.disable' : 'token.enable', id, () => op.store.setTokenDisabled(id, disabled));
}

/** Sets a token's quota (null: unlimited); the token as it now is, null when there is none. Audited when it exists. */
export async function setQuota(op: Operator, id: string, quota: number | null): Promise<TokenRecord | null> {
  return changeToken(op, 'token.quota', id, () => op.store.setTokenQuota(id, quota));
}

/** Sets or removes a token's rate limits (a limit left out stays, null removes it); the change is audited. */
export async function setLimits(op: Operator, id: string, limits: TokenLimitsChange): Promise<TokenRecord | null> {
  return changeToken(op, 'token.limits', id, () => op.store.setTokenLimits(id, limits));
}

/** Sets when a token's key stops working (Unix ms; past ends it now; null: never); the change is audited. */
export async function setExpiry(op: Operator, id: string, expiresAt: number | null): Promise<TokenRecord | null> {
  return changeToken(op, 'token.expiry', id, () => op.store.setTokenExpiry(id, expiresAt));
}

/** What `setBudget` did: the token as it now is; none of that id; or a budget without a period, for a token that has none to keep. */
export type BudgetChange = { readonly outcome: 'changed'; readonly token: TokenRecord } | { readonly outcome: 'unknown' } | { readonly outcome: 'no-period' };

/**
 * Sets a token's budget (null: none) and its period; a period left out keeps the token's own. The
 * amount alone keeps the period running and what it used; a new period starts now from 0
 * (TokenStore.setTokenBudget). Audited as `token.budget`.
 */
export async function setBudget(op: Operator, id: string, budget: number | null, period?: BudgetPeriod): Promise<BudgetChange> {
  const before = await op.store.getToken(id);
  if (!before) return { outcome: 'unknown' };
  const p = budget === null ? null : (period ?? before.budgetPeriod ?? null);
  if (budget !== null && p === null) return { outcome: 'no-period' };
  const after = await op.store.setTokenBudget(id, budget, p);
  if (!after) return { outcome: 'unknown' };
  await recordAudit(op, 'token.budget', id, tokenView(before), tokenView(after));
  return { outcome: 'changed', token: after };
}

/** Deletes a token unless it is busy (Store.deleteToken); a deletion is audited. */
export async function removeToken(op: Operator, id: string): Promise<TokenDeletion> {
  const d = await op.store.deleteToken(id);
  if (d.outcome === 'deleted') await recordAudit(op, 'token.delete', id, tokenView(d.token), null);
  return d;
}

/** A change of one token with its audit record: the token before (read just before) and after. */
async function changeToken(op: Operator, action: string, id: string, change: () => Promise<TokenRecord | null>): Promise<TokenRecord | null> {
  const before = await op.store.getToken(id);
  if (!before) return null;
  const after = await change();
  if (after) await recordAudit(op, action, id, tokenView(before), tokenView(after));
  return after;
}

/** Why a token cannot be of `group` under the configuration's `groups`; null when it can. */
export function groupProblem(groups: ReadonlySet<string>, group: string): string | null {
  return groups.has(group) ? null : `group "${group.slice(0, 100)}" is not declared in channels.yaml (known: ${[...groups].join(', ')})`;
}

/** What a budget without a period is told, by the CLI and the admin routes. */
export const BUDGET_NEEDS_PERIOD = 'this token has no budget yet: give its period too (day, week, month or a number of days, 7d)';

/** The largest rate limit a token may have: a bound for validation, far above any real use. */
export const MAX_RATE_LIMIT = 1_000_000;

/** Why a token was not deleted, in the operator's words. */
export function deletionProblem(id: string, d: Exclude<TokenDeletion, { outcome: 'deleted' }>): string {
  if (d.outcome === 'unknown') return `no token with id ${id.slice(0, 100)}`;
  const running = [d.unfinishedTasks > 0 ? `${d.unfinishedTasks} unfinished task(s)` : '', d.holds > 0 ? `${d.holds} request(s) in flight` : ''].filter(
    Boolean,
  );
  return `token ${id} still has ${running.join(' and ')}, whose refund or settlement needs it; disable it now, and delete it once they have ended`;
}
