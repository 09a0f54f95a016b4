import type { RouteArchive } from '../config/snapshot.js';
import type { ArchiveJobKind } from '../store/store.js';

/** A day in milliseconds: retention is counted in days. */
export const DAY_MS = 86_400_000;

/**
 * How many days a file is kept in the archive; 0: it is not archived (docs/archive.md,
 * "Retention"). A route that says `archive: false` or `keep_days: 0` is never archived; a sync
 * route's links only when the route asks (`archive:`). Otherwise the token's own keep_days wins
 * (the operator's word for that client, longer or shorter; 0 keeps none of its files), then the
 * route's, then GATEWAY_ARCHIVE_KEEP_DAYS. A task whose route is no longer configured keeps the default.
 */
export function keepDaysFor(
  kind: ArchiveJobKind,
  route: { readonly archive: RouteArchive | null } | undefined,
  tokenDays: number | null,
  defaultDays: number,
): number {
  const said = route?.archive ?? null;
  if (said?.keepDays === 0) return 0;
  if (kind === 'link' && said === null) return 0;
  if (tokenDays !== null) return tokenDays;
  return said?.keepDays ?? defaultDays;
}
