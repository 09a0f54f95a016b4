import { randomUUID } from 'node:crypto';
import type { ResourceRecord, ResourceStore, TokenDeletion, TokenStore } from '../store.js';
import { onlyRow, toRecord, toResource, type ResourceRow, type TokenRow } from '../sql-rows.js';
import type { Database } from './database.js';
import { newBudget } from '../budget-period.js';
import { setBudgetSql } from '../budget-sql.js';

const SET_BUDGET = setBudgetSql({ id: '$1', budget: '$2::bigint', period: '$3::text', days: '$4::integer', anchor: '$5::bigint', start: '$6::bigint' });

const IN_USE = `SELECT (SELECT count(*) FROM tasks WHERE token_id = $1 AND status IN ('submitting', 'queued', 'in_progress'))::int AS tasks,
  (SELECT count(*) FROM holds WHERE token_id = $1)::int AS holds`;

/** Tokens (create, find, list, disable or enable, set the quota, the rate limits or the expiry, delete) and the resources clients created. */
export function tokenMethods(db: Database, clock: () => number = () => Date.now()): TokenStore & ResourceStore {
  const one = async (sql: string, params: unknown[]) => {
    const row = (await db.repeatable<TokenRow>(sql, params)).rows[0];
    return row ? toRecord(row) : null;
  };
  return {
    async createToken(t) {
      const now = clock();
      const budget = t.budgetPeriod ? (t.budget ?? null) : null;
      const b = newBudget(budget, t.budgetPeriod ?? null, now);
      const { rows } = await db.query<TokenRow>(
        `INSERT INTO tokens (id, name, key_hash, grp, models, quota, created_at, rpm_limit, max_parallel, expires_at, budget, budget_period, budget_days, budget_anchor, budget_start)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING *`,
        [
          randomUUID(),
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
        ],
      );
      return toRecord(onlyRow(rows));
    },
    // A key is a token's current one or the one its last rotation replaced (./token-keys.ts); the current one first.
    findTokenByHash: (keyHash) => one('SELECT * FROM tokens WHERE key_hash = $1 OR previous_key_hash = $1 ORDER BY key_hash = $1 DESC LIMIT 1', [keyHash]),
    getToken: (id) => one('SELECT * FROM tokens WHERE id = $1', [id]),
    async listTokens() {
      return (await db.repeatable<TokenRow>('SELECT * FROM tokens ORDER BY created_at, seq')).rows.map(toRecord);
    },
    setTokenDisabled: (id, disabled) => one('UPDATE tokens SET disabled = $2 WHERE id = $1 RETURNING *', [id, disabled ? 1 : 0]),
    setTokenQuota: (id, quota) => one('UPDATE tokens SET quota = $2 WHERE id = $1 RETURNING *', [id, quota]),
    // A limit left out of the change keeps its value (its flag is false), null removes it.
    setTokenLimits: (id, c) =>
      one(
        `UPDATE tokens SET rpm_limit = CASE WHEN $2::boolean THEN $3::integer ELSE rpm_limit END,
         max_parallel = CASE WHEN $4::boolean THEN $5::integer ELSE max_parallel END WHERE id = $1 RETURNING *`,
        [id, c.rpmLimit !== undefined, c.rpmLimit ?? null, c.maxParallel !== undefined, c.maxParallel ?? null],
      ),
    setTokenExpiry: (id, expiresAt) => one('UPDATE tokens SET expires_at = $2 WHERE id = $1 RETURNING *', [id, expiresAt]),
    setTokenBudget(id, budget, period) {
      const b = newBudget(budget, period, clock());
      return one(SET_BUDGET, [id, period === null ? null : budget, budget === null ? null : period, b.days, b.anchor, b.start]);
    },
    deleteToken(id) {
      // Not one statement: under READ COMMITTED a DELETE … WHERE NOT EXISTS (unfinished task) reads
      // its snapshot before it waits for the token's row, so a task created by a statement holding
      // that row would be missed. Locking the row first waits for such a statement (task creation
      // and holds update the token's row in the statement that inserts them), and the counts after
      // it see what it wrote; a later one waits for this transaction, then finds no token.
      return db.transaction(async (c): Promise<TokenDeletion> => {
        const row = (await c.query<TokenRow>('SELECT * FROM tokens WHERE id = $1 FOR UPDATE', [id])).rows[0];
        if (!row) return { outcome: 'unknown' };
        const busy = onlyRow((await c.query<{ tasks: number; holds: number }>(IN_USE, [id])).rows);
        if (busy.tasks > 0 || busy.holds > 0) return { outcome: 'busy', unfinishedTasks: busy.tasks, holds: busy.holds };
        await c.query('DELETE FROM tokens WHERE id = $1', [id]);
        return { outcome: 'deleted', token: toRecord(row) };
      });
    },
    async deleteTokensNamed(name) {
      return (await db.repeatable('DELETE FROM tokens WHERE name = $1', [name])).rowCount ?? 0;
    },
    async putResource(r) {
      const inserted = await db.repeatable(
        'INSERT INTO resources (kind, id, token_id, channel, vendor_id, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
        [r.kind, r.id, r.tokenId, r.channel, r.vendorId, r.createdAt],
      );
      if (inserted.rowCount === 1) return true;
      // A second statement, so it sees a row another transaction committed while this one waited.
      const had = (await db.repeatable<ResourceRow>('SELECT * FROM resources WHERE kind = $1 AND id = $2', [r.kind, r.id])).rows[0];
      return had !== undefined && had.token_id === r.tokenId && had.channel === r.channel;
    },
    async getResources(kind, ids) {
      const { rows } = await db.repeatable<ResourceRow>('SELECT * FROM resources WHERE kind = $1 AND id = ANY($2::text[])', [kind, [...new Set(ids)]]);
      return rows.map(toResource) as ResourceRecord[];
    },
  };
}
