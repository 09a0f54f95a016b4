import { fileURLToPath } from 'node:url';
import { GatewayError } from '../errors/gateway-error.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/**
 * Opens the store a URL names; the one way every command, test and benchmark opens one
 * (README, "Settings and commands", GATEWAY_STORE): a file path, a `file:` URL or `:memory:` is
 * the embedded SQLite store. A URL of another scheme is refused with the schemes this build has.
 */
export function openStore(url: string): Store {
  if (url === ':memory:') return openSqliteStore(url);
  if (/^file:/i.test(url)) return openSqliteStore(fileURLToPath(url));
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1];
  if (scheme) {
    throw new GatewayError('internal_error', `the store URL scheme "${scheme}:" is not supported by this build; use a file path, a file: URL or :memory:`);
  }
  return openSqliteStore(url);
}
