/**
 * The configurations bench/reload reloads: copies of the shipped config (both tables, fragments,
 * schemas) in the scratch directory, each with a fragment of its own. The fragment `zz-bench.yaml`
 * holds the alpha channel the load goes to (priority 10, so it wins over the shipped alpha
 * channel); it is rewritten between two forms (another name and pool size, so each swap drops a
 * channel and a connection pool) while the gateway serves. `zz-many.yaml` adds N generated channels.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths.js';

/** What the shipped config is made of, relative to the project root. */
const SHIPPED = ['routes.yaml', 'channels.yaml', 'routes.d', 'channels.d', 'schemas'];

/** Models of the alpha route, spread over the generated channels. */
const ALPHA_MODELS = ['alpha-3-pro-image-preview', 'alpha-2.5-flash-image-preview', 'alpha-3.1-flash-image-preview'];

/** The alpha channel the load is served by; form 0 and 1 differ in name and pool settings (so each swap closes a pool). */
export function benchFragment(form: 0 | 1, simUrl: string, simKey: string): string {
  return `version: 1
channels:
  - name: bench-alpha-${form === 0 ? 'a' : 'b'}
    profile: alpha-native
    base_url: ${simUrl}
    secrets: { key: ${JSON.stringify(simKey)} }
    groups: [default]
    models: [alpha-3-pro-image-preview]
    priority: 10
    keep_alive_ms: ${form === 0 ? 4000 : 3000}
`;
}

/**
 * `n` alpha channels that are never called (a lower priority than the bench channel), each on its
 * own origin as real channels would be; a tenth also rename a model, to exercise that path.
 */
export function manyChannels(n: number): string {
  const lines = ['version: 1', 'channels:'];
  for (let i = 0; i < n; i++) {
    const model = ALPHA_MODELS[i % ALPHA_MODELS.length]!;
    const models = i % 10 === 0 ? `[{ name: ${model}, upstream: ${model}-v${i} }]` : `[${model}]`;
    lines.push(
      `  - name: generated-${String(i).padStart(4, '0')}`,
      '    profile: alpha-native',
      `    base_url: http://10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8080/v${i % 7}`,
      `    secrets: { key: "generated-key-${i}" }`,
      '    groups: [default]',
      `    models: ${models}`,
      `    weight: ${1 + (i % 5)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A copy of the shipped config under `dir` with the bench fragment, and `extra` channels when asked. */
export function scratchConfig(dir: string, simUrl: string, simKey: string, extra = 0): string {
  mkdirSync(dir, { recursive: true });
  for (const f of SHIPPED) cpSync(join(PROJECT_ROOT, f), join(dir, f), { recursive: true });
  mkdirSync(join(dir, 'channels.d'), { recursive: true });
  writeFileSync(join(dir, 'channels.d/zz-bench.yaml'), benchFragment(0, simUrl, simKey));
  if (extra > 0) writeFileSync(join(dir, 'channels.d/zz-many.yaml'), manyChannels(extra));
  return dir;
}
