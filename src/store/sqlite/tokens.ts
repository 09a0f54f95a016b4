import { randomUUID } from 'node:crypto';
import type { NewToken, Store } from '../store.js';
import type { Db } from './database.js';
import { toRecord, type TokenRow } from '../sql-rows.js';

/** Tokens: create, find, list, disable or enable, delete. */
export function tokenMethods(db: Db): Pick<Store, 'createToken' | 'findTokenByHash' | 'listTokens' | 'getToken' | 'setTokenDisabled' | 'deleteTokensNamed'> {
  const insert = db.prepare('INSERT INTO tokens (id, name, key_hash, grp, models, quota, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const byHash = db.prepare('SELECT * FROM tokens WHERE key_hash = ?');
  const byId = db.prepare('SELECT * FROM tokens WHERE id = ?');
  const all = db.prepare('SELECT * FROM tokens ORDER BY created_at');
  const delNamed = db.prepare('DELETE FROM tokens WHERE name = ?');
  const setDisabled = db.prepare('UPDATE tokens SET disabled = ? WHERE id = ?');
  return {
    async createToken(t: NewToken) {
      const id = randomUUID();
      insert.run(id, t.name, t.keyHash, t.group, t.models === null ? null : JSON.stringify(t.models), t.quota, Date.now());
      return toRecord(byId.get(id) as TokenRow);
    },
    async findTokenByHash(keyHash) {
      const row = byHash.get(keyHash) as TokenRow | undefined;
      return row ? toRecord(row) : null;
    },
    async listTokens() {
      return (all.all() as TokenRow[]).map(toRecord);
    },
    async getToken(id) {
      const row = byId.get(id) as TokenRow | undefined;
      return row ? toRecord(row) : null;
    },
    async setTokenDisabled(id, disabled) {
      setDisabled.run(disabled ? 1 : 0, id);
      const row = byId.get(id) as TokenRow | undefined;
      return row ? toRecord(row) : null;
    },
    async deleteTokensNamed(name) {
      return delNamed.run(name).changes;
    },
  };
}
