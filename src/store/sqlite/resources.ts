import type { ResourceRecord, ResourceStore } from '../store.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';
import { toResource, type ResourceRow } from '../sql-rows.js';

/** Resources a client created (assets), and whose they are. */
export function resourceMethods(db: Db, { write }: GroupCommit): ResourceStore {
  const insertResource = db.prepare('INSERT OR IGNORE INTO resources (kind, id, token_id, channel, vendor_id, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const resourceById = db.prepare('SELECT * FROM resources WHERE kind = ? AND id = ?');
  return {
    putResource(r) {
      return write(() => {
        if (insertResource.run(r.kind, r.id, r.tokenId, r.channel, r.vendorId, r.createdAt).changes === 1) return true;
        const had = resourceById.get(r.kind, r.id) as ResourceRow | undefined;
        return had !== undefined && had.token_id === r.tokenId && had.channel === r.channel;
      });
    },
    async getResources(kind, ids) {
      const out: ResourceRecord[] = [];
      for (const id of new Set(ids)) {
        const row = resourceById.get(kind, id) as ResourceRow | undefined;
        if (row) out.push(toResource(row));
      }
      return out;
    },
  };
}
