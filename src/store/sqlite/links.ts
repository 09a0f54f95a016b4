import type { LinkStore } from '../store.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';
import { toLink, type LinkRow } from '../sql-rows.js';

/** Links handed out instead of vendor URLs, and the files stored behind some of them. */
export function linkMethods(db: Db, { write }: GroupCommit): LinkStore {
  const insert = db.prepare('INSERT INTO links (id, token_id, channel, url, data, content_type, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  // A deleted token's links die with it: the join finds no token.
  const byId = db.prepare('SELECT l.* FROM links l JOIN tokens t ON t.id = l.token_id WHERE l.id = ? AND l.expires_at > ?');
  const expired = db.prepare('DELETE FROM links WHERE id IN (SELECT id FROM links WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)');
  return {
    putLinks(links) {
      // One step of the group commit: all of an answer's links or none.
      return write(() => {
        for (const l of links) insert.run(l.id, l.tokenId, l.channel, l.url, l.data, l.contentType, l.createdAt, l.expiresAt);
      });
    },
    async getLink(id, now) {
      const row = byId.get(id, now) as LinkRow | undefined;
      return row ? toLink(row) : null;
    },
    deleteExpiredLinks(now, limit) {
      return write(() => expired.run(now, limit).changes);
    },
  };
}
