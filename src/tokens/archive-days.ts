import { recordAudit, type Operator } from '../records/audit.js';

/** The most days a token's files may be kept (as a route's keep_days). */
export const MAX_ARCHIVE_DAYS = 3650;

/**
 * Sets how many days the result archive keeps a token's files (docs/archive.md, "Retention"):
 * it wins over the route's keep_days; 0 keeps none; null goes back to the route's or the default.
 * The change is audited (`token.archive_days`) and applies to files copied from now on.
 */
export async function setArchiveDays(op: Operator, tokenId: string, days: number | null): Promise<{ before: number | null; after: number | null }> {
  const before = await op.store.getTokenArchiveDays(tokenId);
  await op.store.setTokenArchiveDays(tokenId, days);
  await recordAudit(op, 'token.archive_days', tokenId, { archive_keep_days: before }, { archive_keep_days: days });
  return { before, after: days };
}
