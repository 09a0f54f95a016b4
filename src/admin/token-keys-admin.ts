/**
 * The admin routes' side of names, rotation and IP allow-lists (docs/tokens-and-quota.md, "Names
 * and rotation", "IP allow-list"): a token named by id or name in the path of every
 * `/admin/tokens/{token_id}…` route, and the routes that rename it, rotate its key and set the
 * addresses it may come from.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { Operator } from '../records/audit.js';
import { TokenNameTaken, type TokenRecord } from '../store/store.js';
import { allowListProblem, MAX_ALLOWED_IPS } from '../tokens/ip-allow.js';
import { renameToken, rotateKey, setAllowedIps, tokenView } from '../tokens/manage-tokens.js';
import { keyHashesOf, MAX_GRACE_SECONDS } from '../tokens/rotation.js';
import { findToken, MAX_NAME_LENGTH, nameProblem, unknownToken } from '../tokens/token-ref.js';
import { adminBody, pathParam } from './admin-input.js';
import type { AdminAnswer, AdminContext, AdminDeps } from './admin-types.js';

/** A token name in a body: checked further by nameOf (its rules say more than a schema could). */
export const NAME_FIELD = { type: 'string', maxLength: MAX_NAME_LENGTH * 4 };
/** An allow-list in a body: checked further by allowedIpsOf, which names the bad entry. */
export const ALLOWED_IPS = { type: ['array', 'null'], maxItems: MAX_ALLOWED_IPS, items: { type: 'string', maxLength: 200 } };

/** `POST /admin/tokens/{token_id}/name`. */
export const NAME_BODY = adminBody({ type: 'object', additionalProperties: false, required: ['name'], properties: { name: NAME_FIELD } });
/** `POST /admin/tokens/{token_id}/rotate`: how long the old key keeps working, in seconds (default 0: it stops now). */
export const ROTATE_BODY = adminBody({
  type: 'object',
  additionalProperties: false,
  properties: { grace_seconds: { type: 'integer', minimum: 0, maximum: MAX_GRACE_SECONDS } },
});
/** `POST /admin/tokens/{token_id}/allowed-ips`: the list, or null for anywhere. */
export const ALLOWED_IPS_BODY = adminBody({ type: 'object', additionalProperties: false, required: ['allowed_ips'], properties: { allowed_ips: ALLOWED_IPS } });

/** Who acts: the admin routes are reached only with the admin key, so there is one. */
export function operator(deps: AdminDeps): Operator {
  if (!deps.operator) throw new GatewayError('internal_error', 'an admin route ran without an admin key');
  return deps.operator;
}

/** The token the path names (`{token_id}`: an id, or else a name); not_found when none. */
export async function tokenOf({ params, deps }: AdminContext): Promise<TokenRecord> {
  const ref = pathParam(params, 'token_id');
  const token = await findToken(deps.store, ref);
  if (!token) throw new GatewayError('not_found', unknownToken(ref));
  return token;
}

/** The id of the token the path names; not_found when none. */
export async function tokenIdOf(ctx: AdminContext): Promise<string> {
  return (await tokenOf(ctx)).id;
}

/** A name from a body, or invalid_request naming `name` and the rule it breaks. */
export function nameOf(raw: string): string {
  const problem = nameProblem(raw);
  if (problem) throw new GatewayError('invalid_request', problem, { param: 'name' });
  return raw;
}

/** An allow-list from a body (null: anywhere), or invalid_request naming the bad entry. */
export function allowedIpsOf(raw: readonly string[] | null | undefined): readonly string[] | null {
  if (raw === null || raw === undefined) return null;
  const problem = allowListProblem(raw);
  if (problem) throw new GatewayError('invalid_request', `allowed_ips: ${problem}`, { param: 'allowed_ips' });
  return [...new Set(raw)];
}

/** A token changed: every replica forgets its cached lookups of every key of these records (before and after). */
export function tokenChangedEverywhere(deps: AdminDeps, ...records: readonly (TokenRecord | null)[]): void {
  for (const hash of keyHashesOf(...records)) deps.tokenChanged(hash);
}

/** Refuses a name another token has with token_name_taken (409); other errors pass. */
export function nameTaken(err: unknown): never {
  if (err instanceof TokenNameTaken) throw new GatewayError('token_name_taken', `${err.message}; token names are unique`, { param: 'name' });
  throw err;
}

/** `POST /admin/tokens/{token_id}/name`: renames a token; a name another has is token_name_taken (409). */
export async function renameTokenRoute(ctx: AdminContext): Promise<AdminAnswer> {
  const name = nameOf((ctx.body as { name: string }).name);
  const before = await tokenOf(ctx);
  const token = await renameToken(operator(ctx.deps), before.id, name).catch(nameTaken);
  if (!token) throw new GatewayError('not_found', unknownToken(before.id));
  tokenChangedEverywhere(ctx.deps, token);
  return { json: tokenView(token) };
}

/**
 * `POST /admin/tokens/{token_id}/rotate`: a new key, answered this once; the old one works
 * `grace_seconds` more (default 0: it stops now), and a key an earlier rotation replaced stops now.
 */
export async function rotateTokenRoute(ctx: AdminContext): Promise<AdminAnswer> {
  const graceSeconds = (ctx.body as { grace_seconds?: number } | undefined)?.grace_seconds ?? 0;
  const id = await tokenIdOf(ctx);
  const rotated = await rotateKey(operator(ctx.deps), id, graceSeconds * 1000);
  if (!rotated) throw new GatewayError('not_found', unknownToken(id));
  tokenChangedEverywhere(ctx.deps, rotated.before, rotated.token);
  return { json: { key: rotated.key, token: tokenView(rotated.token) } };
}

/** `POST /admin/tokens/{token_id}/allowed-ips`: the addresses its requests may come from (null: anywhere), on every replica at once. */
export async function setAllowedIpsRoute(ctx: AdminContext): Promise<AdminAnswer> {
  const list = allowedIpsOf((ctx.body as { allowed_ips: readonly string[] | null }).allowed_ips);
  const id = await tokenIdOf(ctx);
  const token = await setAllowedIps(operator(ctx.deps), id, list);
  if (!token) throw new GatewayError('not_found', unknownToken(id));
  tokenChangedEverywhere(ctx.deps, token);
  return { json: tokenView(token) };
}
