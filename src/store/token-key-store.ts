/**
 * What a token is known by besides its id, and what it was last used for (docs/tokens-and-quota.md,
 * "Names and rotation", "Last use", "IP allow-list"): its unique name, its key and the key it
 * replaced (valid until a grace ends), when it was last used, and the addresses it may come from.
 */
import type { TokenRecord, TokenStore } from './token-store.js';

/** A token's name is taken by another token: names are unique. Thrown by createToken and renameToken. */
export class TokenNameTaken extends Error {
  constructor(readonly tokenName: string) {
    super(`a token named ${JSON.stringify(tokenName.slice(0, 100))} already exists`);
    this.name = 'TokenNameTaken';
  }
}

/**
 * The token methods with createToken saying TokenNameTaken for a name another token has;
 * `isConflict` tells the driver's error of the unique index on names.
 */
export function namedUniquely<T extends Pick<TokenStore, 'createToken'>>(methods: T, isConflict: (err: unknown) => boolean): T {
  const create = methods.createToken.bind(methods);
  return {
    ...methods,
    async createToken(t) {
      try {
        return await create(t);
      } catch (err) {
        if (isConflict(err)) throw new TokenNameTaken(t.name);
        throw err;
      }
    },
  };
}

/** When a token was last used, as one process saw it: Unix milliseconds. */
export interface TokenUse {
  readonly id: string;
  readonly at: number;
}

/** The part of the store that names, rotates, touches and fences tokens. */
export interface TokenKeyStore {
  /** The token of that name; null when there is none. */
  findTokenByName(name: string): Promise<TokenRecord | null>;
  /** Renames a token (TokenNameTaken when another has the name); the token as it now is, null when there is none. */
  renameToken(id: string, name: string): Promise<TokenRecord | null>;
  /**
   * Gives a token a new key: its current key becomes its previous one, valid until
   * `previousExpiresAt` (Unix ms), and any earlier previous key ends at once. The token as it now
   * is, null when there is none.
   */
  rotateTokenKey(id: string, keyHash: string, previousExpiresAt: number): Promise<TokenRecord | null>;
  /** Sets the addresses a token's requests may come from (CIDRs or addresses; null: anywhere); the token as it now is, null when there is none. */
  setTokenAllowedIps(id: string, allowedIps: readonly string[] | null): Promise<TokenRecord | null>;
  /** Moves each token's `lastUsedAt` forward to `at` (never back), in one statement; unknown ids are skipped. */
  touchTokens(uses: readonly TokenUse[]): Promise<void>;
}
