import type { Store } from '../store.js';
import { StoreGuard } from '../store-guard.js';
import { DEFAULT_STORE_TIMEOUTS, type StoreTimeouts } from '../unavailable.js';
import { archiveMethods } from './archive.js';
import { auditMethods } from './audit.js';
import { openDatabase } from './database.js';
import { LedgerListeners } from './ledger-sql.js';
import { linkMethods } from './links.js';
import { operatorTaskMethods } from './operator-tasks.js';
import { ownTaskMethods } from './own-tasks.js';
import { quotaMethods } from './quota.js';
import { requestLogMethods } from './request-log.js';
import { taskMethods } from './tasks.js';
import { namedUniquely } from '../token-key-store.js';
import { isNameConflict, tokenKeyMethods } from './token-keys.js';
import { tokenMethods } from './tokens.js';
import { usageMethods } from './usage.js';
import { webhookMethods } from './webhooks.js';

/**
 * The scale-out store: PostgreSQL through a `pg` pool, shared by every replica. Each quota move is
 * one statement or one transaction, so replicas never overspend or pay back twice. Every call goes
 * through a guard that refuses at once while the server is known to be away (../store-guard.ts).
 */
export async function openPostgresStore(
  url: string,
  poolSize = 10,
  timeouts: StoreTimeouts = DEFAULT_STORE_TIMEOUTS,
  clock: () => number = () => Date.now(),
): Promise<Store> {
  const db = await openDatabase(url, poolSize, timeouts);
  const listeners = new LedgerListeners();
  const store: Omit<Store, 'availability'> = {
    ...namedUniquely(tokenMethods(db, clock), isNameConflict),
    ...tokenKeyMethods(db),
    ...quotaMethods(db, listeners, clock),
    ...taskMethods(db, listeners, clock),
    ...ownTaskMethods(db),
    ...operatorTaskMethods(db),
    ...linkMethods(db),
    ...usageMethods(db),
    ...requestLogMethods(db),
    ...auditMethods(db),
    ...webhookMethods(db),
    ...archiveMethods(db),
    onLedger: (listener) => listeners.add(listener),
    ping: () => db.ping(),
    close: () => db.end(),
  };
  return new StoreGuard(store).guarded();
}
