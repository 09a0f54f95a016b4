import { TokenNameTaken, type TokenKeyStore } from '../token-key-store.js';
import { toRecord, type TokenRow } from '../sql-rows.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';

/** Whether `err` is SQLite refusing a second token of one name (the unique index tokens_by_name). */
export function isNameConflict(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return typeof e.code === 'string' && e.code.startsWith('SQLITE_CONSTRAINT') && /tokens\.name/.test(e.message ?? '');
}

/** Runs a statement that sets a token's name, TokenNameTaken when another token has it. */
export function naming<T>(name: string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (isNameConflict(err)) throw new TokenNameTaken(name);
    throw err;
  }
}

/** Tokens by name, renamed, rotated, fenced to addresses, and touched by their last use. */
export function tokenKeyMethods(db: Db, { write }: Pick<GroupCommit, 'write'>): TokenKeyStore {
  const byName = db.prepare('SELECT * FROM tokens WHERE name = ?');
  // Not RETURNING: a statement of libsql's whose `get` failed once (a name taken) keeps failing after.
  const rename = db.prepare('UPDATE tokens SET name = ? WHERE id = ?');
  const byId = db.prepare('SELECT * FROM tokens WHERE id = ?');
  // Every right-hand side reads the row as it was: the current key becomes the previous one.
  const rotate = db.prepare('UPDATE tokens SET previous_key_hash = key_hash, previous_key_expires_at = ?, key_hash = ? WHERE id = ? RETURNING *');
  const setIps = db.prepare('UPDATE tokens SET allowed_ips = ? WHERE id = ? RETURNING *');
  // One statement for the whole batch: the uses as one JSON array of [id, at] pairs.
  const touch = db.prepare(
    `UPDATE tokens SET last_used_at = max(coalesce(last_used_at, 0), u.at)
     FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS at FROM json_each(?)) AS u
     WHERE tokens.id = u.id`,
  );
  const one = (row: unknown) => (row ? toRecord(row as TokenRow) : null);
  return {
    async findTokenByName(name) {
      return one(byName.get(name));
    },
    async renameToken(id, name) {
      // Run at once, not in the group commit's batch: a refused name must not fail the others' writes.
      naming(name, () => rename.run(name, id));
      return one(byId.get(id));
    },
    async rotateTokenKey(id, keyHash, previousExpiresAt) {
      return one(rotate.get(previousExpiresAt, keyHash, id));
    },
    async setTokenAllowedIps(id, allowedIps) {
      return one(setIps.get(allowedIps === null ? null : JSON.stringify(allowedIps), id));
    },
    async touchTokens(uses) {
      if (uses.length === 0) return;
      const pairs = JSON.stringify(uses.map((u) => [u.id, u.at]));
      await write(() => touch.run(pairs));
    },
  };
}
