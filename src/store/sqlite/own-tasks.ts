import type { OwnTaskStore, TaskPage } from '../store.js';
import { toTask, type TaskRow } from '../sql-rows.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';

/** Tasks a client has seen: every status but `submitting`, of the families asked (a JSON array). */
const SEEN = "token_id = ? AND kind IN (SELECT value FROM json_each(?)) AND status <> 'submitting'";

/** What a token does with its own tasks: reads them in pages, newest first, and deletes finished ones. */
export function ownTaskMethods(db: Db, { write }: GroupCommit): OwnTaskStore {
  const cursor = db.prepare(`SELECT created_at, seq FROM tasks WHERE id = ? AND ${SEEN}`);
  // One statement per order and cursor: (created_at, seq) is the order, and the index's tail.
  const pages = {
    desc: db.prepare(`SELECT * FROM tasks WHERE ${SEEN} ORDER BY created_at DESC, seq DESC LIMIT ?`),
    asc: db.prepare(`SELECT * FROM tasks WHERE ${SEEN} ORDER BY created_at, seq LIMIT ?`),
    descAfter: db.prepare(`SELECT * FROM tasks WHERE ${SEEN} AND (created_at, seq) < (?, ?) ORDER BY created_at DESC, seq DESC LIMIT ?`),
    ascAfter: db.prepare(`SELECT * FROM tasks WHERE ${SEEN} AND (created_at, seq) > (?, ?) ORDER BY created_at, seq LIMIT ?`),
  };
  const deleteFinished = db.prepare("DELETE FROM tasks WHERE id = ? AND token_id = ? AND status IN ('completed', 'failed')");
  return {
    async listTasks(tokenId, kinds, page: TaskPage) {
      const families = JSON.stringify(kinds);
      if (page.after === null) return (pages[page.order].all(tokenId, families, page.limit) as TaskRow[]).map(toTask);
      const at = cursor.get(page.after, tokenId, families) as { created_at: number; seq: number } | undefined;
      if (!at) return null;
      const stmt = page.order === 'desc' ? pages.descAfter : pages.ascAfter;
      return (stmt.all(tokenId, families, at.created_at, at.seq, page.limit) as TaskRow[]).map(toTask);
    },
    deleteTask(id, tokenId) {
      return write(() => deleteFinished.run(id, tokenId).changes === 1);
    },
  };
}
