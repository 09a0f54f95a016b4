import { MAX_ARCHIVE_DAYS, setArchiveDays } from '../tokens/archive-days.js';
import { adminBody } from './admin-input.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';
import { operator, tokenIdOf } from './token-keys-admin.js';

/** `POST /admin/tokens/{token_id}/archive`: days its archived files are kept (0: none kept; null: the route's or the default). */
export const ARCHIVE_DAYS_BODY = adminBody({
  type: 'object',
  additionalProperties: false,
  required: ['archive_keep_days'],
  properties: { archive_keep_days: { type: ['integer', 'null'], minimum: 0, maximum: MAX_ARCHIVE_DAYS } },
});

/** `GET /admin/tokens/{token_id}/archive`: the token's own retention in the result archive (docs/archive.md). */
export async function getTokenArchive(ctx: AdminContext): Promise<AdminAnswer> {
  const id = await tokenIdOf(ctx);
  return { json: { token_id: id, archive_keep_days: await ctx.deps.store.getTokenArchiveDays(id) } };
}

/** `POST /admin/tokens/{token_id}/archive`: sets it; audited as `token.archive_days`. */
export async function setTokenArchive(ctx: AdminContext): Promise<AdminAnswer> {
  const id = await tokenIdOf(ctx);
  const { after } = await setArchiveDays(operator(ctx.deps), id, (ctx.body as { archive_keep_days: number | null }).archive_keep_days);
  return { json: { token_id: id, archive_keep_days: after } };
}
