/**
 * When a key stops working (docs/tokens-and-quota.md, "Expiry"): the instants operators write, in
 * one place so the CLI and the admin routes take the same ones, and the form every view shows.
 */

/**
 * ISO 8601 with a date, a time and a zone (`Z` or `±hh:mm`): an instant without a zone would mean
 * another moment on each host, so it is refused rather than guessed.
 */
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
/** A duration from now for the CLI: whole days, hours or minutes. */
const FROM_NOW = /^([1-9][0-9]{0,5})([dhm])$/;
const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** What an expiry must look like, for the errors that refuse one. */
export const EXPIRY_FORM = 'an ISO 8601 time with a zone (2027-01-31T00:00:00Z)';

/** The instant (Unix ms) an ISO 8601 time with a zone names; null when it is not one, or names no real date. */
export function parseInstant(raw: string): number | null {
  if (!ISO_WITH_ZONE.test(raw)) return null;
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) return null;
  // Date.parse rolls 2027-02-31 over to March: a date that does not exist is refused instead.
  const [y, mo, d] = raw.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, mo - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d && Number(raw.slice(11, 13)) < 24 ? ms : null;
}

/** An expiry as the CLI takes it: an ISO 8601 time with a zone, or a duration from `now` (`30d`, `12h`, `90m`); null when neither. */
export function parseExpiry(raw: string, now: number): number | null {
  const rel = FROM_NOW.exec(raw);
  if (rel) return now + Number(rel[1]) * UNIT_MS[rel[2] as keyof typeof UNIT_MS];
  return parseInstant(raw);
}

/** An expiry as operators see it: ISO 8601 in UTC, null for never. */
export function expiryView(expiresAt: number | null | undefined): string | null {
  return expiresAt === null || expiresAt === undefined ? null : new Date(expiresAt).toISOString();
}

/** Whether a key of that expiry is refused at `now`: from its instant on. */
export function hasExpired(expiresAt: number | null | undefined, now: number): boolean {
  return expiresAt !== null && expiresAt !== undefined && now >= expiresAt;
}
