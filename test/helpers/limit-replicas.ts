/**
 * Three real gateway processes over one PostgreSQL schema (DATABASE_URL) and one Redis of the
 * test's own (so it can be stopped mid-test), in front of one `gateway sims` process: the set-up of
 * the limit tests across replicas (test/replicas/key-limits.test.ts, group-limits.test.ts,
 * budget.test.ts), with what they send and count.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { startGatewayProcess } from './gateway-process.js';
import { runCli, startCli, type Running } from './process.js';
import { pgSchemas, privateRedis, type PrivateRedis } from './services.js';
import { until } from './until.js';

const ALPHA = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
/** fetch with a bound: no request may hang the test. */
export const boundedFetch = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });

/** The running set and what the tests do with it. */
export interface LimitReplicas {
  /** The three gateways' base URLs. */
  readonly bases: readonly string[];
  readonly redis: PrivateRedis;
  /** The admin key of the three. */
  readonly adminKey: string;
  /** A new token (`gateway tokens create --group <group> …args`), its key. */
  key(args: string[], group?: string): string;
  /** A new token as `key` makes it: its key and its id. */
  token(args: string[], group?: string): { key: string; id: string };
  /** `GET /v1/models` with a key: the cheapest request that passes the limits. */
  models(base: string, key: string): Promise<Response>;
  /** An alpha image call the simulator answers after `ms`: it holds its in-flight slot that long. */
  slow(base: string, key: string, ms: number): Promise<Response>;
  /** Statuses of `n` requests sent at once, the i-th to replica i mod 3 (its body read to the end). */
  burst(n: number, send: (base: string, i: number) => Promise<Response>): Promise<number[]>;
  /** A replica's /metrics text. */
  metrics(base: string): Promise<string>;
  /** What a replica has logged so far. */
  output(base: string): string;
  /** Stops Redis and waits until every replica reports it gone (`gateway_redis_up 0`). */
  stopRedis(): Promise<void>;
  /**
   * Waits until every replica reports Redis back (`gateway_redis_up 1`) and counts a limited request
   * through it: one round of requests of a key of its own moves no replica's in-process count.
   */
  sharedAgain(): Promise<void>;
  stop(): Promise<void>;
}

/** How many of `statuses` are `status`. */
export const count = (statuses: readonly number[], status: number) => statuses.filter((s) => s === status).length;

/** Starts the simulators, a private Redis and three replicas (GATEWAY_REPLICA_ID r1..r3) over `configDir` (default the project's). */
export async function startLimitReplicas(databaseUrl: string, configDir: string = PROJECT_ROOT): Promise<LimitReplicas> {
  const storeUrl = pgSchemas(databaseUrl).url();
  const adminKey = `admin-${randomBytes(8).toString('hex')}`;
  const running: Running[] = [];
  let redis: PrivateRedis | undefined;
  const stop = async () => {
    for (const r of running) await r.stop('SIGKILL');
    await redis?.stop();
  };
  try {
    const sims = startCli(['sims'], { GATEWAY_CONFIG_DIR: configDir });
    running.push(sims);
    await sims.waitFor(/ready \(SIGINT or SIGTERM stops them\)/);
    const simEnv = Object.fromEntries(
      sims
        .output()
        .split('\n')
        .filter((l) => /^[A-Z][A-Z0-9_]*=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    redis = await privateRedis();
    const env: NodeJS.ProcessEnv = {
      ...simEnv,
      GATEWAY_DB: storeUrl,
      GATEWAY_REDIS: redis.url,
      GATEWAY_CONFIG_DIR: configDir,
      GATEWAY_WATCH: '0',
      GATEWAY_ADMIN_KEY: adminKey,
      HOST: '127.0.0.1',
      PORT: '0',
    };
    // One after another: three configurations compiled at once on a busy two-core machine can pass the start's bound.
    const bases: string[] = [];
    const procs = new Map<string, Running>();
    for (const id of ['r1', 'r2', 'r3']) {
      const r = await startGatewayProcess({ ...env, GATEWAY_REPLICA_ID: id });
      running.push(r.proc);
      bases.push(r.base);
      procs.set(r.base, r.proc);
    }
    const shared = redis;
    const token = (args: string[], group = 'default') => {
      const created = runCli(['tokens', 'create', '--group', group, ...args], env);
      assert.equal(created.status, 0, created.stderr);
      const id = /created token ([0-9a-f-]{36})/.exec(created.stderr)?.[1];
      assert.ok(id, created.stderr);
      return { key: created.stdout.trim(), id };
    };
    const metrics = async (base: string) => (await boundedFetch(`${base}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } })).text();
    return {
      bases,
      redis: shared,
      adminKey,
      key: (args, group) => token(args, group).key,
      token,
      models: (base, k) => boundedFetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${k}` } }),
      slow: (base, k, ms) =>
        boundedFetch(`${base}${ALPHA}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            contents: [{ role: 'user', parts: [{ text: `a lighthouse [sim:fault=slow-headers:${ms}]` }] }],
            generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
          }),
        }),
      burst: (n, send) =>
        Promise.all(
          Array.from({ length: n }, async (_, i) => {
            const r = await send(bases[i % bases.length] ?? '', i);
            await r.arrayBuffer();
            return r.status;
          }),
        ),
      metrics,
      output: (base) => procs.get(base)?.output() ?? '',
      async sharedAgain() {
        for (const base of bases) await until(`${base} to share again`, async () => /gateway_redis_up 1/.test(await metrics(base)), 20_000);
        const probe = token(['--rpm', '100000']).key;
        const counted = async () =>
          (await Promise.all(bases.map(metrics))).map((t) => /gateway_redis_fallbacks_total\{op="window"\} (\d+)/.exec(t)?.[1] ?? '0').join(',');
        await until(
          'a round of limited requests counted through Redis on every replica',
          async () => {
            const before = await counted();
            for (const base of bases) await (await boundedFetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${probe}` } })).arrayBuffer();
            return (await counted()) === before;
          },
          20_000,
        );
      },
      async stopRedis() {
        await shared.stop();
        for (const base of bases) await until(`${base} to see Redis gone`, async () => /gateway_redis_up 0/.test(await metrics(base)), 20_000);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
