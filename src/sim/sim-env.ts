import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Simulator } from './http.js';

/** A whole value that is one `${NAME}` (or `${NAME:-default}`) reference. */
const WHOLE_REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}$/;

/**
 * The channel variables (`NAME=value`) that point every channel of the config directories at the
 * simulator of its profile: each channel's `base_url` variable gets the simulator's URL, each of
 * its secret variables the credential the simulator accepts. Channels of a profile without a
 * simulator, and values that are not one whole reference, are left alone.
 */
export function simulatorEnv(dirs: readonly string[], sims: ReadonlyMap<string, Simulator>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const file of dirs.flatMap(channelFiles)) {
    const doc = parse(readFileSync(file, 'utf8')) as { channels?: { profile?: string; base_url?: unknown; secrets?: Record<string, unknown> }[] } | null;
    for (const c of doc?.channels ?? []) {
      const sim = c.profile ? sims.get(c.profile) : undefined;
      if (!sim) continue;
      const urlVar = refOf(c.base_url);
      if (urlVar) env[urlVar] = sim.url;
      for (const [k, v] of Object.entries(c.secrets ?? {})) {
        const name = refOf(v);
        const secret = sim.secrets[k];
        if (name && secret !== undefined) env[name] = secret;
      }
    }
  }
  return env;
}

function refOf(v: unknown): string | null {
  return typeof v === 'string' ? (WHOLE_REF.exec(v.trim())?.[1] ?? null) : null;
}

function channelFiles(dir: string): string[] {
  const fragments = join(dir, 'channels.d');
  const main = join(dir, 'channels.yaml');
  return [
    ...(existsSync(main) ? [main] : []),
    ...(existsSync(fragments)
      ? readdirSync(fragments)
          .filter((f) => f.endsWith('.yaml'))
          .sort()
          .map((f) => join(fragments, f))
      : []),
  ];
}
