/**
 * The gateway's configuration for bench/inflight: a copy of the shipped one in the scratch
 * directory, with the image channel's pool opened up so the vendor pool is not the bottleneck.
 *
 * Until issue 30's first item lands (the pool follows `max_concurrency`), a channel's pool holds at
 * most `max_connections` (default 64, schema maximum 4096) vendor calls at once and queues the
 * rest unseen. This benchmark measures what a request in flight costs, not that queue, so it sets
 * `max_connections: 4096` on `zeta-images` and, past 4096 clients, adds copies of the channel
 * (`zeta-images-bench-K`, same vendor, same priority and weight, so requests spread evenly) each
 * with a pool of its own (a pool is per origin and pool size: the sizes differ by one).
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths.js';

const SHIPPED = ['routes.yaml', 'channels.yaml', 'routes.d', 'channels.d', 'schemas'];
/** The schema's largest `max_connections`. */
export const POOL_MAX = 4096;

/** Writes the config under `dir` for `clients` in flight; returns how many zeta image channels it has. */
export function inflightConfig(dir: string, clients: number): number {
  mkdirSync(dir, { recursive: true });
  for (const f of SHIPPED) cpSync(join(PROJECT_ROOT, f), join(dir, f), { recursive: true });
  const file = join(dir, 'channels.d/zeta-openai.yaml');
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf('  - name: zeta-images\n');
  const timeouts = text.indexOf('    timeouts:', at);
  if (at < 0 || timeouts < 0) throw new Error('bench/inflight: channels.d/zeta-openai.yaml has no zeta-images channel with timeouts');
  const lineEnd = text.indexOf('\n', timeouts) + 1;
  writeFileSync(file, `${text.slice(0, lineEnd)}    max_connections: ${POOL_MAX}\n${text.slice(lineEnd)}`);
  const copies = Math.ceil((clients * 1.2) / POOL_MAX) - 1;
  if (copies > 0) {
    const lines = ['version: 1', 'channels:'];
    for (let k = 1; k <= copies; k++) {
      lines.push(
        `  - name: zeta-images-bench-${k}`,
        '    profile: zeta-openai',
        '    base_url: ${ZETA_BASE_URL}',
        '    secrets: { key: "${ZETA_API_KEY}" }',
        '    groups: [default]',
        '    models: [zeta-image-1]',
        '    timeouts: { connect_ms: 10000, headers_ms: 180000, body_ms: 60000 }',
        `    max_connections: ${POOL_MAX - k}`,
      );
    }
    writeFileSync(join(dir, 'channels.d/zz-inflight.yaml'), `${lines.join('\n')}\n`);
  }
  return 1 + Math.max(0, copies);
}
