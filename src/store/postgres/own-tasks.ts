import type { OwnTaskStore } from '../store.js';
import { toTask, type TaskRow } from '../sql-rows.js';
import type { Database } from './database.js';

/** Tasks a client has seen: every status but `submitting`, of the families asked ($2, a text array). */
const SEEN = "token_id = $1 AND kind = ANY($2::text[]) AND status <> 'submitting'";

/** What a token does with its own tasks: reads them in pages, newest first, and deletes finished ones. */
export function ownTaskMethods(db: Database): OwnTaskStore {
  return {
    async listTasks(tokenId, kinds, page) {
      const [cmp, dir] = page.order === 'desc' ? ['<', 'DESC'] : ['>', 'ASC'];
      const order = `ORDER BY created_at ${dir}, seq ${dir}`;
      if (page.after === null) {
        const { rows } = await db.repeatable<TaskRow>(`SELECT * FROM tasks WHERE ${SEEN} ${order} LIMIT $3`, [tokenId, kinds, page.limit]);
        return rows.map(toTask);
      }
      // The cursor must be one of the same tasks: another token's id is unknown, never a position.
      const at = (
        await db.repeatable<{ created_at: number; seq: number }>(`SELECT created_at, seq FROM tasks WHERE id = $3 AND ${SEEN}`, [tokenId, kinds, page.after])
      ).rows[0];
      if (!at) return null;
      const { rows } = await db.repeatable<TaskRow>(`SELECT * FROM tasks WHERE ${SEEN} AND (created_at, seq) ${cmp} ($3, $4) ${order} LIMIT $5`, [
        tokenId,
        kinds,
        at.created_at,
        at.seq,
        page.limit,
      ]);
      return rows.map(toTask);
    },
    async deleteTask(id, tokenId) {
      const { rowCount } = await db.query("DELETE FROM tasks WHERE id = $1 AND token_id = $2 AND status IN ('completed', 'failed')", [id, tokenId]);
      return rowCount === 1;
    },
  };
}
