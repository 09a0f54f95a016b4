/**
 * Child-process entry of the benchmark: runs the alpha-native simulator alone in its own process,
 * so its CPU is not mixed with the proxy under test, and prints `{"url":…,"key":…}` when ready.
 */
import { startAlphaSimulator } from '../../src/sim/alpha-native.js';

const sim = await startAlphaSimulator(process.env.BENCH_SIM_KEY ? { key: process.env.BENCH_SIM_KEY } : {});
process.stdout.write(`${JSON.stringify({ ready: 'simulator', url: sim.url, key: sim.secrets.key })}\n`);

const stop = (): void => {
  sim.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
