/**
 * Child-process entry of the benchmark: runs one simulator alone in its own process, so its CPU is
 * not mixed with the proxy under test, and prints `{"url":…,"key":…}` when ready.
 * BENCH_SIM_PROFILE picks it: `alpha-native` (the default) or `zeta-openai`; BENCH_SIM_KEY fixes
 * its key.
 */
import { startAlphaSimulator } from '../../src/sim/alpha-native.js';
import { startZetaOpenaiSimulator } from '../../src/sim/zeta-openai.js';

const starters = { 'alpha-native': startAlphaSimulator, 'zeta-openai': startZetaOpenaiSimulator };
const profile = process.env.BENCH_SIM_PROFILE ?? 'alpha-native';
if (!(profile in starters)) {
  process.stderr.write(`sim-process: BENCH_SIM_PROFILE must be one of ${Object.keys(starters).join(', ')}, got ${profile}\n`);
  process.exit(2);
}
const start = starters[profile as keyof typeof starters];
const sim = await start(process.env.BENCH_SIM_KEY ? { key: process.env.BENCH_SIM_KEY } : {});
process.stdout.write(`${JSON.stringify({ ready: 'simulator', url: sim.url, key: sim.secrets.key })}\n`);

const stop = (): void => {
  sim.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
