import { TokenNameTaken, type TokenKeyStore } from '../token-key-store.js';
import { toRecord, type TokenRow } from '../sql-rows.js';
import type { Database } from './database.js';

/** Whether `err` is PostgreSQL refusing a second token of one name (the unique index tokens_by_name). */
export function isNameConflict(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === '23505' && e.constraint === 'tokens_by_name';
}

/** Runs a statement that sets a token's name, TokenNameTaken when another token has it. */
export async function naming<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isNameConflict(err)) throw new TokenNameTaken(name);
    throw err;
  }
}

/** Tokens by name, renamed, rotated, fenced to addresses, and touched by their last use. */
export function tokenKeyMethods(db: Database): TokenKeyStore {
  const one = async (sql: string, params: unknown[]) => {
    const row = (await db.repeatable<TokenRow>(sql, params)).rows[0];
    return row ? toRecord(row) : null;
  };
  return {
    findTokenByName: (name) => one('SELECT * FROM tokens WHERE name = $1', [name]),
    renameToken: (id, name) => naming(name, () => one('UPDATE tokens SET name = $2 WHERE id = $1 RETURNING *', [id, name])),
    // Every right-hand side reads the row as it was: the current key becomes the previous one.
    rotateTokenKey: (id, keyHash, previousExpiresAt) =>
      one('UPDATE tokens SET previous_key_hash = key_hash, previous_key_expires_at = $3, key_hash = $2 WHERE id = $1 RETURNING *', [
        id,
        keyHash,
        previousExpiresAt,
      ]),
    setTokenAllowedIps: (id, allowedIps) =>
      one('UPDATE tokens SET allowed_ips = $2 WHERE id = $1 RETURNING *', [id, allowedIps === null ? null : JSON.stringify(allowedIps)]),
    async touchTokens(uses) {
      if (uses.length === 0) return;
      // Rows locked in id order before they change, as every batch locks them: the batches of two replicas cannot deadlock.
      await db.repeatable(
        `WITH u AS (SELECT t.id, x.at FROM tokens t JOIN unnest($1::text[], $2::bigint[]) AS x(id, at) ON t.id = x.id ORDER BY t.id FOR UPDATE OF t)
         UPDATE tokens SET last_used_at = GREATEST(tokens.last_used_at, u.at) FROM u WHERE tokens.id = u.id`,
        [uses.map((u) => u.id), uses.map((u) => u.at)],
      );
    },
  };
}
