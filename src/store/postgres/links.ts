import type { LinkStore } from '../store.js';
import type { Database } from './database.js';
import { toLink, type LinkRow } from '../sql-rows.js';

/** Links handed out instead of vendor URLs, and the files stored behind some of them. */
export function linkMethods(db: Database): LinkStore {
  return {
    async putLinks(links) {
      if (links.length === 0) return;
      await db.transaction(async (c) => {
        for (const l of links) {
          await c.query('INSERT INTO links (id, token_id, channel, url, data, content_type, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
            l.id,
            l.tokenId,
            l.channel,
            l.url,
            l.data,
            l.contentType,
            l.createdAt,
            l.expiresAt,
          ]);
        }
      });
    },
    async getLink(id, now) {
      // A deleted token's links die with it: the join finds no token.
      const { rows } = await db.repeatable<LinkRow>('SELECT l.* FROM links l JOIN tokens t ON t.id = l.token_id WHERE l.id = $1 AND l.expires_at > $2', [
        id,
        now,
      ]);
      return rows[0] ? toLink(rows[0]) : null;
    },
    async deleteExpiredLinks(now, limit) {
      const { rowCount } = await db.repeatable('DELETE FROM links WHERE id IN (SELECT id FROM links WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)', [
        now,
        limit,
      ]);
      return rowCount ?? 0;
    },
  };
}
