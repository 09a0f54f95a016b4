/**
 * Key rotation (docs/tokens-and-quota.md, "Names and rotation"): a token gets a new key while the
 * one it replaces keeps working for a grace period, so clients can move over without a gap. At
 * most two keys work at once: rotating again ends any earlier replaced key at once.
 */
import type { TokenRecord } from '../store/store.js';
import { expiryView } from './expiry.js';

/** The longest grace a replaced key may get. */
export const MAX_GRACE_MS = 30 * 86_400_000;
/** The same, in the seconds the admin route takes. */
export const MAX_GRACE_SECONDS = MAX_GRACE_MS / 1000;

const GRACE = /^([0-9]{1,7})([smhd])$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** What a grace must look like, for the errors that refuse one. */
export const GRACE_FORM = 'a duration (30s, 15m, 24h, 7d; at most 30d) or 0';

/** A grace as the CLI takes it (`30s`, `15m`, `24h`, `7d`, or `0`), in ms; null when it is none of those or longer than 30 days. */
export function parseGrace(raw: string): number | null {
  if (raw === '0') return 0;
  const m = GRACE.exec(raw);
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms <= MAX_GRACE_MS ? ms : null;
}

/**
 * Why the key of hash `keyHash`, which found `token`, is refused at `now` for being the key a
 * rotation replaced whose grace has ended; null when it is the token's key, or still in its grace.
 * Compared at each request on the cached record too, so a grace ends to the millisecond.
 */
export function replacedKeyRefusal(token: TokenRecord, keyHash: string, now: number): string | null {
  if (token.keyHash === keyHash) return null;
  const until = token.previousKeyExpiresAt;
  if (token.previousKeyHash === keyHash && until != null && now < until) return null;
  return until == null ? 'the API key is not valid' : `the API key was replaced by a new one; it stopped working at ${expiryView(until)}`;
}

/**
 * The key hashes a replica may have cached lookups of for these records of one token (before and
 * after a change): its key and the key it replaced, each once. All of them are forgotten when it
 * changes, so no replica serves an earlier record of it from its cache.
 */
export function keyHashesOf(...records: readonly (TokenRecord | null | undefined)[]): string[] {
  const hashes = new Set<string>();
  for (const t of records) {
    if (!t) continue;
    hashes.add(t.keyHash);
    if (t.previousKeyHash) hashes.add(t.previousKeyHash);
  }
  return [...hashes];
}
