import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths.js';

/**
 * A value for every `${VAR}` the repository's channels.yaml and channels.d/*.yaml reference: an unused local URL for
 * `*_BASE_URL`, a dummy credential otherwise; `overrides` win. For tests that load the real config.
 */
export function channelEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const dir = join(PROJECT_ROOT, 'channels.d');
  const fragments = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.yaml')).map((f) => join(dir, f)) : [];
  const text = [join(PROJECT_ROOT, 'channels.yaml'), ...fragments].map((f) => readFileSync(f, 'utf8')).join('\n');
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/\$\{([A-Z][A-Z0-9_]*)(?::-[^}]*)?\}/g)) env[m[1]!] = m[1]!.endsWith('_BASE_URL') ? 'http://127.0.0.1:9' : 'x';
  return { ...env, ...overrides };
}
