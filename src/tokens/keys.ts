import { hash, randomBytes } from 'node:crypto';

/** Prefix of every key the gateway issues, so a leaked key is recognisable by secret scanners. */
export const KEY_PREFIX = 'gw-';

/** A new random API key: 32 bytes of entropy, base64url. */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The only form in which a key is stored or compared: hex SHA-256. */
export function hashKey(key: string): string {
  // One call, no Hash object: every request hashes its key (issue 41). The same hex SHA-256 of the UTF-8.
  return hash('sha256', key, 'hex');
}
