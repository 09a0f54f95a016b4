/**
 * How operators name a token (docs/tokens-and-quota.md, "Names and rotation"): by its id or by its
 * name, everywhere, in one way for the CLI and the admin routes. Names are unique and never shaped
 * like an id, so a reference is an id exactly when it looks like one.
 */
import { randomBytes } from 'node:crypto';
import type { Store, TokenRecord } from '../store/store.js';

/** The most characters (code points) a name may have. */
export const MAX_NAME_LENGTH = 100;

/** A token id: a UUID, as the stores make them. */
const TOKEN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Control characters (C0, DEL, C1): a name is shown in terminals, logs and the console. */
const CONTROL = /\p{Cc}/u;

/** Whether a reference is shaped like a token id (then it is read as one, never as a name). */
export function isTokenId(ref: string): boolean {
  return TOKEN_ID.test(ref);
}

/** Why `name` cannot be a token's name; null when it can. */
export function nameProblem(name: string): string | null {
  const length = [...name].length;
  if (length === 0 || length > MAX_NAME_LENGTH) return `a token name has 1 to ${MAX_NAME_LENGTH} characters`;
  if (CONTROL.test(name)) return 'a token name may not hold control characters';
  if (/^\s|\s$/u.test(name)) return 'a token name may not start or end with white space';
  if (isTokenId(name)) return 'a token name may not be shaped like a token id (a UUID): tokens are named by either';
  return null;
}

/** The name a token made without one gets: who made it and 8 random hex digits (`cli-3f9a1c2b`), so two never meet. */
export function defaultName(maker: 'cli' | 'admin'): string {
  return `${maker}-${randomBytes(4).toString('hex')}`;
}

/** The token a reference (an id, or else a name) names; null when none. */
export async function findToken(store: Store, ref: string): Promise<TokenRecord | null> {
  if (isTokenId(ref)) return store.getToken(ref.toLowerCase());
  return [...ref].length > MAX_NAME_LENGTH ? null : store.findTokenByName(ref);
}

/** What to say of a reference that names no token. */
export function unknownToken(ref: string): string {
  const shown = JSON.stringify(ref.slice(0, MAX_NAME_LENGTH));
  return isTokenId(ref) ? `no token with id ${ref.slice(0, 36)}` : `no token named ${shown}`;
}
