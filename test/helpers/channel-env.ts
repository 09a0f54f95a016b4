import { channelEnvNames } from '../../src/config/env.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';

/**
 * A value for every `${VAR}` the repository's channels.yaml and channels.d/*.yaml reference: an
 * unused local URL for `*_BASE_URL`, a dummy credential otherwise; `overrides` win. For tests that
 * load the real config.
 */
export function channelEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of channelEnvNames(PROJECT_ROOT)) env[name] = name.endsWith('_BASE_URL') ? 'http://127.0.0.1:9' : 'x';
  return { ...env, ...overrides };
}
