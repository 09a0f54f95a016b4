/**
 * A real `gateway start` process over the repository's config, with every channel pointed at a
 * simulator of its profile running in the test process (so the simulators outlive the gateway and
 * tests can kill it): the environment that does it, and the process started and waited for.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Simulator } from '../../src/sim/http.js';
import { startSimulator, type CommonSimOptions } from '../../src/sim/registry.js';
import { channelEnv } from './channel-env.js';
import { startCli, type Running } from './process.js';

/** One variable name when the value is exactly `${NAME}` (or `${NAME:-default}`). */
function envName(value: unknown): string | null {
  return typeof value === 'string' ? (/^\$\{([A-Z][A-Z0-9_]*)(?::-[^}]*)?\}$/.exec(value)?.[1] ?? null) : null;
}

/**
 * The environment that points every channel of the repository's channels.yaml and channels.d/ at the simulator
 * of its profile: `base_url: ${X}` gets the simulator's URL, `secrets: {name: ${Y}}` its secret of
 * that name. Simulators are started into `sims` (one per profile) unless already there. Variables
 * of channels without a simulator get the dummies of channelEnv().
 */
export async function simulatorsFor(sims: Map<string, Simulator>, opts: CommonSimOptions = {}): Promise<Record<string, string>> {
  type Channel = { name: string; profile: string; base_url: unknown; secrets?: Record<string, unknown> };
  const files = [join(PROJECT_ROOT, 'channels.yaml'), ...readdirSync(join(PROJECT_ROOT, 'channels.d')).filter((f) => f.endsWith('.yaml')).sort().map((f) => join(PROJECT_ROOT, 'channels.d', f))];
  const channels = files.flatMap((f) => (parse(readFileSync(f, 'utf8')) as { channels?: Channel[] } | null)?.channels ?? []);
  const env: Record<string, string> = {};
  for (const c of channels) {
    let sim = sims.get(c.profile);
    if (!sim) {
      const started = await startSimulator(c.profile, opts);
      if (!started) continue;
      sims.set(c.profile, (sim = started));
    }
    const base = envName(c.base_url);
    if (base) env[base] = sim.url;
    for (const [name, value] of Object.entries(c.secrets ?? {})) {
      const v = envName(value);
      if (v && sim.secrets[name] !== undefined) env[v] = sim.secrets[name]!;
    }
  }
  return channelEnv(env);
}

/** Starts `gateway start` with `env` and resolves once it listens, with its base URL. */
export async function startGatewayProcess(env: NodeJS.ProcessEnv): Promise<{ proc: Running; base: string }> {
  const proc = startCli(['start'], env);
  const [, base] = await proc.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"gateway listening"/, 20_000).catch(async (err: unknown) => {
    await proc.stop('SIGKILL');
    throw err;
  });
  return { proc, base: base! };
}
