/**
 * The gateway's configuration for bench/inflight: a copy of the shipped one in the scratch
 * directory, as shipped. Since issue 30 a channel's pool has no bound of its own (it once held 64
 * connections and queued the rest unseen), so the shipped `zeta-images` channel carries any
 * number of calls in flight; the copy only keeps the run's config apart from the checkout.
 */
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths.js';

const SHIPPED = ['routes.yaml', 'channels.yaml', 'routes.d', 'channels.d', 'schemas'];

/** Writes the config under `dir`. */
export function inflightConfig(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const f of SHIPPED) cpSync(join(PROJECT_ROOT, f), join(dir, f), { recursive: true });
}
