import { GatewayError } from '../errors/gateway-error.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';

/** `POST /admin/tokens/{token_id}/disable`: the token is refused from now on, on every replica. */
export const disableToken = (ctx: AdminContext) => setDisabled(ctx, true);

/** `POST /admin/tokens/{token_id}/enable`: the token works again. */
export const enableToken = (ctx: AdminContext) => setDisabled(ctx, false);

async function setDisabled({ params, deps }: AdminContext, disabled: boolean): Promise<AdminAnswer> {
  const id = params.token_id!;
  const token = await deps.store.setTokenDisabled(id, disabled);
  if (!token) throw new GatewayError('not_found', `no token with id ${id.slice(0, 100)}`);
  deps.tokenChanged(token.keyHash);
  return { json: { id: token.id, name: token.name, group: token.group, disabled: token.disabled } };
}
