/**
 * A real `gateway start` process over the repository's config, with every channel pointed at a
 * simulator of its profile running in the test process (so the simulators outlive the gateway and
 * tests can kill it): the environment that does it, and the process started and waited for.
 */
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Simulator } from '../../src/sim/http.js';
import { SIMULATORS, type CommonSimOptions } from '../../src/sim/registry.js';
import { simulatorEnv } from '../../src/sim/sim-env.js';
import { channelEnv } from './channel-env.js';
import { startCli, type Running } from './process.js';

/**
 * The environment that points every channel of the repository's channels.yaml and channels.d/ at the simulator
 * of its profile (what `gateway sims` prints). Simulators are started into `sims` (one per profile)
 * unless already there. Variables of channels without a simulator get the dummies of channelEnv().
 */
export async function simulatorsFor(sims: Map<string, Simulator>, opts: CommonSimOptions = {}): Promise<Record<string, string>> {
  for (const [profile, start] of Object.entries(SIMULATORS)) if (!sims.has(profile)) sims.set(profile, await start(opts));
  return channelEnv(simulatorEnv([PROJECT_ROOT], sims));
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
