/**
 * A real gateway (port 0, in-memory store, one token) over a configuration a test writes into a
 * temporary directory: for tests of one made-up route or profile in front of a local vendor.
 *
 *   const g = await startConfigGateway((dir) => writeConfig(dir, vendor.url), { quota: null });
 *   after(() => g.close());
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigOrThrow } from '../../src/config/load.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';

/** A running gateway over a written configuration, with the key of its one token (group `default`). */
export interface ConfigGateway {
  readonly gateway: Gateway;
  readonly snapshot: Snapshot;
  readonly store: Store;
  readonly key: string;
  /** Stops the gateway, closes the store and removes the directory. */
  close(): Promise<void>;
}

/**
 * Writes the configuration with `write(dir)` beside `body.json` (a body schema of one required
 * string, `prompt`, for its routes to name), loads it and starts a gateway on port 0.
 */
export async function startConfigGateway(write: (dir: string) => void, opts: { quota: number | null; adminKey?: string }): Promise<ConfigGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
  writeFileSync(join(dir, 'body.json'), JSON.stringify({ type: 'object', required: ['prompt'], properties: { prompt: { type: 'string' } } }));
  write(dir);
  const snapshot = loadConfigOrThrow(dir, { env: {} });
  const store = await openStore(':memory:');
  const key = generateKey();
  await store.createToken({ name: 'test', keyHash: hashKey(key), group: 'default', models: null, quota: opts.quota });
  const gateway = createGateway({ snapshot: () => snapshot, store, log: silentLogger(), adminKey: opts.adminKey });
  await gateway.listen(0);
  return {
    gateway,
    snapshot,
    store,
    key,
    async close() {
      await gateway.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Blocks the event loop for `ms` of wall-clock time, as other requests' work or a GC pause would. */
export function busyWait(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}
