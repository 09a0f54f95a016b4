import { randomUUID } from 'node:crypto';
import type { NewToken, TokenDeletion, TokenStore } from '../store.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';
import { toRecord, type TokenRow } from '../sql-rows.js';
import { newBudget } from '../budget-period.js';
import { setBudgetSql } from '../budget-sql.js';

/** Tokens: create, find, list, disable or enable, set the quota, the rate limits or the expiry, delete. */
export function tokenMethods(db: Db, commits: Pick<GroupCommit, 'flush'>, clock: () => number = () => Date.now()): TokenStore {
  const insert = db.prepare(
    `INSERT INTO tokens (id, name, key_hash, grp, models, quota, created_at, rpm_limit, max_parallel, expires_at, budget, budget_period, budget_days, budget_anchor, budget_start)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const setBudget = db.prepare(setBudgetSql({ budget: '@budget', period: '@period', days: '@days', anchor: '@anchor', start: '@start', id: '@id' }));
  // A key is a token's current one or the one its last rotation replaced (./token-keys.ts); the current one first.
  const byHash = db.prepare('SELECT * FROM tokens WHERE key_hash = ?1 OR previous_key_hash = ?1 ORDER BY key_hash = ?1 DESC LIMIT 1');
  const byId = db.prepare('SELECT * FROM tokens WHERE id = ?');
  const all = db.prepare('SELECT * FROM tokens ORDER BY created_at');
  const delNamed = db.prepare('DELETE FROM tokens WHERE name = ?');
  const setDisabled = db.prepare('UPDATE tokens SET disabled = ? WHERE id = ?');
  const setQuota = db.prepare('UPDATE tokens SET quota = ? WHERE id = ? RETURNING *');
  // A limit left out of the change keeps its value (the flag is 0), null removes it.
  const setLimits = db.prepare(
    `UPDATE tokens SET rpm_limit = CASE WHEN ? THEN ? ELSE rpm_limit END, max_parallel = CASE WHEN ? THEN ? ELSE max_parallel END
     WHERE id = ? RETURNING *`,
  );
  const setExpiry = db.prepare('UPDATE tokens SET expires_at = ? WHERE id = ? RETURNING *');
  const inUse = db.prepare(
    `SELECT (SELECT count(*) FROM tasks WHERE token_id = ? AND status IN ('submitting', 'queued', 'in_progress')) AS tasks,
            (SELECT count(*) FROM holds WHERE token_id = ?) AS holds`,
  );
  const delById = db.prepare('DELETE FROM tokens WHERE id = ?');
  // IMMEDIATE takes the write lock before the reads: a gateway process sharing the file cannot
  // create a task or a hold for the token between the look and the delete.
  const remove = db.transaction((id: string): TokenDeletion => {
    const row = byId.get(id) as TokenRow | undefined;
    if (!row) return { outcome: 'unknown' };
    const busy = inUse.get(id, id) as { tasks: number; holds: number };
    if (busy.tasks > 0 || busy.holds > 0) return { outcome: 'busy', unfinishedTasks: busy.tasks, holds: busy.holds };
    delById.run(id);
    return { outcome: 'deleted', token: toRecord(row) };
  });
  return {
    async createToken(t: NewToken) {
      const id = randomUUID();
      const now = clock();
      const budget = t.budgetPeriod ? (t.budget ?? null) : null;
      const b = newBudget(budget, t.budgetPeriod ?? null, now);
      insert.run(
        id,
        t.name,
        t.keyHash,
        t.group,
        t.models === null ? null : JSON.stringify(t.models),
        t.quota,
        now,
        t.rpmLimit ?? null,
        t.maxParallel ?? null,
        t.expiresAt ?? null,
        budget,
        budget === null ? null : (t.budgetPeriod ?? null),
        b.days,
        b.anchor,
        b.start,
      );
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
    async setTokenQuota(id, quota) {
      const row = setQuota.get(quota, id) as TokenRow | undefined;
      return row ? toRecord(row) : null;
    },
    async setTokenLimits(id, c) {
      const row = setLimits.get(c.rpmLimit === undefined ? 0 : 1, c.rpmLimit ?? null, c.maxParallel === undefined ? 0 : 1, c.maxParallel ?? null, id) as
        | TokenRow
        | undefined;
      return row ? toRecord(row) : null;
    },
    async setTokenExpiry(id, expiresAt) {
      const row = setExpiry.get(expiresAt, id) as TokenRow | undefined;
      return row ? toRecord(row) : null;
    },
    async setTokenBudget(id, budget, period) {
      const b = newBudget(budget, period, clock());
      const row = setBudget.get({ id, budget: period === null ? null : budget, period: budget === null ? null : period, ...b }) as TokenRow | undefined;
      return row ? toRecord(row) : null;
    },
    async deleteToken(id) {
      // Its own IMMEDIATE transaction cannot open inside the turn's group commit (a hold opens one at once): that commits first.
      commits.flush();
      return remove.immediate(id);
    },
    async deleteTokensNamed(name) {
      return delNamed.run(name).changes;
    },
  };
}
