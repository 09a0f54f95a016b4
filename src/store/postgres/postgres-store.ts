import type { Store } from '../store.js';
import { openPool } from './database.js';
import { LedgerListeners } from './ledger-sql.js';
import { linkMethods } from './links.js';
import { operatorTaskMethods } from './operator-tasks.js';
import { ownTaskMethods } from './own-tasks.js';
import { quotaMethods } from './quota.js';
import { taskMethods } from './tasks.js';
import { tokenMethods } from './tokens.js';
import { usageMethods } from './usage.js';

/**
 * The scale-out store: PostgreSQL through a `pg` pool, shared by every replica. Each quota move is
 * one statement or one transaction, so replicas never overspend or pay back twice.
 */
export async function openPostgresStore(url: string, poolSize = 10): Promise<Store> {
  const pool = await openPool(url, poolSize);
  const listeners = new LedgerListeners();
  return {
    ...tokenMethods(pool),
    ...quotaMethods(pool, listeners),
    ...taskMethods(pool, listeners),
    ...ownTaskMethods(pool),
    ...operatorTaskMethods(pool),
    ...linkMethods(pool),
    ...usageMethods(pool),
    onLedger: (listener) => listeners.add(listener),
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      await pool.end();
    },
  };
}
