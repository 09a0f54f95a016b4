/**
 * Child-process entry of bench/streams: the zeta-openai simulator alone in its own process (its
 * CPU and RSS its own), with the stream options the benchmark needs, and its counters on a side
 * port so the benchmark can see what the vendor did. Environment:
 *   BENCH_SIM_KEY            its key (default: a random one)
 *   BENCH_STREAM_GAP_MS      the wait between two events of an image stream (`streamGapMs`, default 0)
 *   BENCH_FULL_SIZE_IMAGES   `1`: images at the asked size with a photograph's weight (`fullSizeImages`)
 * Prints `{"ready":"simulator","url":…,"key":…,"stats":…}`; `GET <stats>` answers the simulator's
 * counters as they are now (`streams`, `events`, `blocked`, `abandoned`, … src/sim/zeta-openai.ts).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startZetaOpenaiSimulator } from '../../src/sim/zeta-openai.js';

const gap = Number(process.env.BENCH_STREAM_GAP_MS ?? '0');
if (!Number.isFinite(gap) || gap < 0) {
  process.stderr.write(`sim-process: BENCH_STREAM_GAP_MS must be a number of ms, got ${process.env.BENCH_STREAM_GAP_MS}\n`);
  process.exit(2);
}
const sim = await startZetaOpenaiSimulator({
  ...(process.env.BENCH_SIM_KEY ? { key: process.env.BENCH_SIM_KEY } : {}),
  streamGapMs: gap,
  fullSizeImages: process.env.BENCH_FULL_SIZE_IMAGES === '1',
});
const stats = createServer((_req, res) => {
  const text = JSON.stringify(sim.stats);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
});
stats.listen(0, '127.0.0.1', () => {
  const { port } = stats.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ ready: 'simulator', url: sim.url, key: sim.secrets.key, stats: `http://127.0.0.1:${port}/` })}\n`);
});

const stop = (): void => {
  stats.close();
  sim.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
