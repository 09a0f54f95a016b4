import { GatewayError } from '../errors/gateway-error.js';
import type { TokenRecord } from '../store/store.js';
import {
  BUDGET_NEEDS_PERIOD,
  deletionProblem,
  groupProblem,
  issueToken,
  MAX_RATE_LIMIT,
  removeToken,
  setDisabled,
  setBudget,
  setExpiry,
  setLimits,
  setQuota,
  tokenView,
} from '../tokens/manage-tokens.js';
import { type BudgetPeriod, PERIOD_FORM, parseBudgetPeriod } from '../store/budget-period.js';
import { EXPIRY_FORM, parseInstant } from '../tokens/expiry.js';
import { defaultName } from '../tokens/token-ref.js';
import { ALLOWED_IPS, allowedIpsOf, nameOf, NAME_FIELD, operator, nameTaken, tokenIdOf, tokenOf, tokenChangedEverywhere } from './token-keys-admin.js';
import { adminBody } from './admin-input.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';

/** `POST /admin/tokens`: what a new token is. */
interface CreateTokenBody {
  readonly group: string;
  readonly name?: string;
  readonly quota?: number | null;
  readonly models?: readonly string[] | null;
  readonly rpm_limit?: number | null;
  readonly max_parallel?: number | null;
  readonly expires_at?: string | null;
  readonly budget?: number | null;
  readonly budget_period?: string | null;
  readonly allowed_ips?: readonly string[] | null;
}

/** `POST /admin/tokens/{token_id}/budget`: units per period, null: none; the period, left out: the token's own. */
interface BudgetBody {
  readonly budget: number | null;
  readonly budget_period?: string | null;
}

/** `POST /admin/tokens/{token_id}/expiry`: when the key stops working; null: never. */
interface ExpiryBody {
  readonly expires_at: string | null;
}

/** `POST /admin/tokens/{token_id}/limits`: the rate limits to change; one left out stays, null removes it. */
interface LimitsBody {
  readonly rpm_limit?: number | null;
  readonly max_parallel?: number | null;
}

/** `POST /admin/tokens/{token_id}/quota`: the units it may spend in all; null: unlimited. */
interface QuotaBody {
  readonly quota: number | null;
}

const NAME = { type: 'string', minLength: 1, maxLength: 200 };
const QUOTA = { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
/** A rate limit: at least 1 (a key that may do nothing is a disabled key), null: none. */
const RATE_LIMIT = { type: ['integer', 'null'], minimum: 1, maximum: MAX_RATE_LIMIT };
/** An expiry: ISO 8601 with a zone (checked by parseInstant), null: never. */
const EXPIRY = { type: ['string', 'null'], maxLength: 64 };
/** A budget per period: units, 0 or more, null: none. */
const BUDGET = QUOTA;
/** A budget's period (checked by parseBudgetPeriod), null: none. */
const PERIOD = { type: ['string', 'null'], maxLength: 16 };

/** The body of `POST /admin/tokens`. */
export const CREATE_TOKEN_BODY = adminBody({
  type: 'object',
  additionalProperties: false,
  required: ['group'],
  properties: {
    group: NAME,
    name: NAME_FIELD,
    quota: QUOTA,
    models: { type: ['array', 'null'], maxItems: 1000, items: NAME },
    rpm_limit: RATE_LIMIT,
    max_parallel: RATE_LIMIT,
    expires_at: EXPIRY,
    budget: BUDGET,
    budget_period: PERIOD,
    allowed_ips: ALLOWED_IPS,
  },
});

/** The body of `POST /admin/tokens/{token_id}/budget`. */
export const BUDGET_BODY = adminBody({
  type: 'object',
  additionalProperties: false,
  required: ['budget'],
  properties: { budget: BUDGET, budget_period: PERIOD },
});

/** The period of a `budget_period` field; undefined when it is absent or null; invalid_request when it names none. */
function periodOf(raw: string | null | undefined): BudgetPeriod | undefined {
  if (raw === null || raw === undefined) return undefined;
  const period = parseBudgetPeriod(raw);
  if (period === null) throw new GatewayError('invalid_request', `budget_period must be ${PERIOD_FORM}`, { param: 'budget_period' });
  return period;
}

/** The body of `POST /admin/tokens/{token_id}/expiry`. */
export const EXPIRY_BODY = adminBody({ type: 'object', additionalProperties: false, required: ['expires_at'], properties: { expires_at: EXPIRY } });

/** The instant of an `expires_at` field (Unix ms), null for never; invalid_request when it is not one. */
function expiryOf(raw: string | null | undefined): number | null {
  if (raw === null || raw === undefined) return null;
  const at = parseInstant(raw);
  if (at === null) throw new GatewayError('invalid_request', `expires_at must be ${EXPIRY_FORM}, or null for never`, { param: 'expires_at' });
  return at;
}

/** The body of `POST /admin/tokens/{token_id}/quota`. */
export const QUOTA_BODY = adminBody({ type: 'object', additionalProperties: false, required: ['quota'], properties: { quota: QUOTA } });

/** The body of `POST /admin/tokens/{token_id}/limits`: one limit at least. */
export const LIMITS_BODY = adminBody({
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { rpm_limit: RATE_LIMIT, max_parallel: RATE_LIMIT },
});

/** A changed token: every replica forgets what it cached of its keys, and the operator sees it as it now is. */
function changed({ deps }: AdminContext, token: TokenRecord | null, id: string): AdminAnswer {
  if (!token) throw new GatewayError('not_found', `no token with id ${id.slice(0, 100)}`);
  tokenChangedEverywhere(deps, token);
  return { json: tokenView(token) };
}

/** `GET /admin/tokens`: every token, oldest first, never a key. */
export async function listTokens({ deps }: AdminContext): Promise<AdminAnswer> {
  return { json: { tokens: (await deps.store.listTokens()).map(tokenView) } };
}

/** `GET /admin/tokens/{token_id}`: one token (by id or name), never its key. */
export async function getToken(ctx: AdminContext): Promise<AdminAnswer> {
  return { json: tokenView(await tokenOf(ctx)) };
}

/** `POST /admin/tokens`: a new token of a group the serving configuration declares; its key is answered this once. */
export async function createToken({ snapshot, body, deps }: AdminContext): Promise<AdminAnswer> {
  const b = body as CreateTokenBody;
  const problem = groupProblem(snapshot.groups, b.group);
  if (problem) throw new GatewayError('invalid_request', problem, { param: 'group' });
  const op = operator(deps);
  const expiresAt = expiryOf(b.expires_at);
  // A key born expired is a mistake; ending a key now is what POST …/expiry with a past time is for.
  if (expiresAt !== null && expiresAt <= (op.now?.() ?? Date.now())) {
    throw new GatewayError('invalid_request', 'expires_at must be in the future for a new token', { param: 'expires_at' });
  }
  const budget = b.budget ?? null;
  const budgetPeriod = periodOf(b.budget_period) ?? null;
  if (budget !== null && budgetPeriod === null) throw new GatewayError('invalid_request', 'a budget needs its budget_period', { param: 'budget_period' });
  if (budget === null && budgetPeriod !== null) throw new GatewayError('invalid_request', 'a budget_period needs its budget', { param: 'budget' });
  const { token, key } = await issueToken(op, {
    name: b.name === undefined ? defaultName('admin') : nameOf(b.name),
    allowedIps: allowedIpsOf(b.allowed_ips),
    group: b.group,
    models: b.models ?? null,
    quota: b.quota ?? null,
    rpmLimit: b.rpm_limit ?? null,
    maxParallel: b.max_parallel ?? null,
    expiresAt,
    budget,
    budgetPeriod,
  }).catch(nameTaken);
  return { status: 201, json: { key, token: tokenView(token) } };
}

/** `POST /admin/tokens/{token_id}/disable`: the token is refused from now on, on every replica. */
export async function disableToken(ctx: AdminContext): Promise<AdminAnswer> {
  const id = await tokenIdOf(ctx);
  return changed(ctx, await setDisabled(operator(ctx.deps), id, true), id);
}

/** `POST /admin/tokens/{token_id}/enable`: the token works again. */
export async function enableToken(ctx: AdminContext): Promise<AdminAnswer> {
  const id = await tokenIdOf(ctx);
  return changed(ctx, await setDisabled(operator(ctx.deps), id, false), id);
}

/** `POST /admin/tokens/{token_id}/quota`: the units it may spend in all from now on (what it used stays used). */
export async function setTokenQuota(ctx: AdminContext): Promise<AdminAnswer> {
  const id = await tokenIdOf(ctx);
  return changed(ctx, await setQuota(operator(ctx.deps), id, (ctx.body as QuotaBody).quota), id);
}

/** `POST /admin/tokens/{token_id}/limits`: its requests per minute and in flight, on every replica at once. */
export async function setTokenLimits(ctx: AdminContext): Promise<AdminAnswer> {
  const id = await tokenIdOf(ctx);
  const b = ctx.body as LimitsBody;
  return changed(ctx, await setLimits(operator(ctx.deps), id, { rpmLimit: b.rpm_limit, maxParallel: b.max_parallel }), id);
}

/** `POST /admin/tokens/{token_id}/expiry`: when its key stops working, on every replica at once; a past time ends it now. */
export async function setTokenExpiry(ctx: AdminContext): Promise<AdminAnswer> {
  const id = await tokenIdOf(ctx);
  const expiresAt = expiryOf((ctx.body as ExpiryBody).expires_at);
  return changed(ctx, await setExpiry(operator(ctx.deps), id, expiresAt), id);
}

/**
 * `POST /admin/tokens/{token_id}/budget`: units per period from now on (null: none). The amount
 * alone keeps the period running and what it used; a new period starts now from 0.
 */
export async function setTokenBudget(ctx: AdminContext): Promise<AdminAnswer> {
  const id = await tokenIdOf(ctx);
  const b = ctx.body as BudgetBody;
  const period = periodOf(b.budget_period);
  if (b.budget === null && period !== undefined)
    throw new GatewayError('invalid_request', 'a budget_period needs its budget; null removes both', { param: 'budget' });
  const change = await setBudget(operator(ctx.deps), id, b.budget, period);
  if (change.outcome === 'no-period') throw new GatewayError('invalid_request', BUDGET_NEEDS_PERIOD, { param: 'budget_period' });
  return changed(ctx, change.outcome === 'changed' ? change.token : null, id);
}

/** `DELETE /admin/tokens/{token_id}`: refused (409) while it has unfinished tasks or requests in flight. */
export async function deleteToken(ctx: AdminContext): Promise<AdminAnswer> {
  const { deps } = ctx;
  const id = await tokenIdOf(ctx);
  await deps.writeHoldEndings();
  const d = await removeToken(operator(deps), id);
  if (d.outcome === 'unknown') throw new GatewayError('not_found', deletionProblem(id, d));
  if (d.outcome === 'busy') throw new GatewayError('token_in_use', deletionProblem(id, d));
  tokenChangedEverywhere(deps, d.token);
  return { json: { deleted: true, token: tokenView(d.token) } };
}
