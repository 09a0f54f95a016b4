/**
 * Child process of bench/tasks: the gateway alone, built as `gateway start` builds it
 * (createGateway over the repo's routes.yaml / channels.yaml, a SQLite file store, the pino logger
 * on stdout), with every channel whose profile has a simulator pointed at it. Polling settings are
 * the config's own unless BENCH_INTERVAL_MS / BENCH_CONCURRENCY override them.
 *
 * Env: BENCH_DB (a SQLite file or a postgres:// URL), BENCH_SIMS (JSON: profile → {url, secrets}), LOG_LEVEL;
 * with BENCH_REPLICA (its name) the gateway is one of several replicas sharing tasks by lease
 * (BENCH_LEASE_MS, default the gateway's), as `gateway start` over PostgreSQL is.
 * Announces `{url, key, channels}` and answers `stats` with the poller's counters, this process's
 * own resource usage (so CPU and peak RSS are the gateway's alone) and the store's method calls
 * (./store-calls.ts), and `loop-reset`.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open-store.js';
import { DEFAULT_LEASE_MS } from '../../src/tasks/poller.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { serveParent } from './ipc.js';
import { countedStore } from './store-calls.js';

const env = process.env;
if (!env.BENCH_DB || !env.BENCH_SIMS) throw new Error('BENCH_DB and BENCH_SIMS must be set');
const sims = JSON.parse(env.BENCH_SIMS) as Record<string, { url: string; secrets: Record<string, string> }>;
const polling: Record<string, number> = {};
if (env.BENCH_INTERVAL_MS) polling.interval_ms = Number(env.BENCH_INTERVAL_MS);
if (env.BENCH_CONCURRENCY) polling.concurrency = Number(env.BENCH_CONCURRENCY);

const snapshot = loadConfigOrThrow(PROJECT_ROOT, {
  overrideChannel: (c) => {
    const sim = sims[c.profile];
    if (!sim) return null;
    return { base_url: sim.url, secrets: { ...sim.secrets }, ...(Object.keys(polling).length > 0 ? { polling: { ...c.polling, ...polling } } : {}) };
  },
});
const opened = await openStore(env.BENCH_DB);
const { store, calls: storeCalls } = countedStore(opened);
const key = generateKey();
// Names are unique, and replicas of one run share the store: each process's token is named apart.
await store.createToken({ name: `bench-tasks-${process.pid}-${Date.now()}`, keyHash: hashKey(key), group: 'default', models: null, quota: null });
const lease = env.BENCH_REPLICA ? { owner: env.BENCH_REPLICA, ms: Number(env.BENCH_LEASE_MS || DEFAULT_LEASE_MS), soleReplica: false } : undefined;
const gateway = createGateway({ snapshot: () => snapshot, store, log: createLogger(), lease });
await gateway.listen(0);

const LOOP_RESOLUTION_MS = 10;
const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
loop.enable();
/** The histogram records the time between its timer's runs; the delay is what exceeds the period. */
const ms = (ns: number): number => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS);

serveParent(
  {
    url: gateway.url(),
    key,
    channels: snapshot.channels.map((c) => ({
      name: c.name,
      profile: c.profile.name,
      models: [...c.models.keys()],
      intervalMs: c.polling.intervalMs,
      concurrency: c.polling.concurrency,
      batchMaxIds: c.profile.tasks?.batchQuery?.maxIds ?? null,
      tasks: c.profile.tasks !== null,
    })),
  },
  {
    stats: async () => ({
      poller: { ...gateway.poller.stats },
      followed: gateway.poller.size,
      usage: process.resourceUsage(),
      memory: process.memoryUsage(),
      loop: { mean: ms(loop.mean), p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
      store: Object.fromEntries(storeCalls),
      pollLag: (await gateway.metrics.pollLag.get()).values.map((v) => [v.labels.le ?? v.metricName, v.value]),
    }),
    'loop-reset': () => {
      loop.reset();
      return null;
    },
  },
  async () => {
    await gateway.close();
    await opened.close();
  },
);
