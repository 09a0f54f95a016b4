import { fileURLToPath } from 'node:url';
import { GatewayError } from '../errors/gateway-error.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import { openThreadedSqliteStore } from './sqlite/store-thread.js';
import type { Store } from './store.js';
import type { StoreTimeouts } from './unavailable.js';

/** Whether the store a URL names can be shared by several replicas (PostgreSQL), not one process's own (SQLite). */
export function isSharedStore(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/**
 * Opens the store a URL names; the one way every command, test and benchmark opens one
 * (docs/operating.md, "Settings and commands", GATEWAY_DB): a file path, a `file:` URL or `:memory:` is the
 * embedded SQLite store; `postgres://` (or `postgresql://`) is PostgreSQL, shared by replicas,
 * its schema brought up to date before this resolves (`timeouts` bound every wait on it). Another
 * scheme is refused by name. `clock` (Unix ms; Date.now by default) is the time the store counts
 * budget periods by and stamps ledger rows with: tests move it to roll a period over. `thread`: a
 * SQLite file is opened on a thread of its own (./sqlite/store-thread.ts), as the gateway does
 * (GATEWAY_STORE_THREAD); a command or a test that only reads and writes a little opens it here.
 */
export async function openStore(
  url: string,
  opts: { poolSize?: number; timeouts?: StoreTimeouts; clock?: () => number; thread?: boolean } = {},
): Promise<Store> {
  const clock = opts.clock ?? (() => Date.now());
  if (url === ':memory:') return openSqliteStore(url, clock);
  const file = (path: string) => (opts.thread ? openThreadedSqliteStore(path, clock) : openSqliteStore(path, clock));
  if (/^file:/i.test(url)) return file(fileURLToPath(url));
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (isSharedStore(url)) {
    // Loaded only when asked for: pg is a few MB of heap and code an embedded store never needs.
    const { openPostgresStore } = await import('./postgres/postgres-store.js');
    return openPostgresStore(url, opts.poolSize, opts.timeouts, clock);
  }
  if (scheme) {
    throw new GatewayError('internal_error', `the store URL scheme "${scheme}:" is not supported; use a file path, a file: URL, :memory: or postgres://`);
  }
  return file(url);
}
