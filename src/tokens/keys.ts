import { createHash, randomBytes } from 'node:crypto';

/** Prefix of every key the gateway issues, so a leaked key is recognisable by secret scanners. */
export const KEY_PREFIX = 'gw-';

/** A new random API key: 32 bytes of entropy, base64url. */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The only form in which a key is stored or compared: hex SHA-256. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
