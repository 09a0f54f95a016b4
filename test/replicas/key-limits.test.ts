/**
 * A key's rate limits across three real gateway processes over one PostgreSQL schema
 * (DATABASE_URL) and one Redis (a redis-server of the test's own, so the test can stop it), in
 * front of one `gateway sims` process: requests per minute and in flight held exactly under
 * concurrent load spread over the replicas; then Redis stopped mid-test, and each replica keeps
 * serving with the limits of its own process (docs/tokens-and-quota.md, "Rate limits").
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli, startCli, type Running } from '../helpers/process.js';
import { pgSchemas, privateRedis, serviceUrl, type PrivateRedis } from '../helpers/services.js';
import { until } from '../helpers/until.js';

const ALPHA = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
/** fetch with a bound: no request may hang the test. */
const http = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });

const databaseUrl = serviceUrl('DATABASE_URL', 'rate limits of keys across replicas over PostgreSQL and Redis');
if (databaseUrl) {
  describe('rate limits of a key across three replicas', { timeout: 180_000 }, () => {
    const storeUrl = pgSchemas(databaseUrl).url();
    const adminKey = `admin-${randomBytes(8).toString('hex')}`;
    const running: Running[] = [];
    const bases: string[] = [];
    let redis: PrivateRedis;
    let env: NodeJS.ProcessEnv;

    before(async () => {
      const sims = startCli(['sims'], { GATEWAY_CONFIG_DIR: PROJECT_ROOT });
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
      env = {
        ...simEnv,
        GATEWAY_DB: storeUrl,
        GATEWAY_REDIS: redis.url,
        GATEWAY_CONFIG_DIR: PROJECT_ROOT,
        GATEWAY_WATCH: '0',
        GATEWAY_ADMIN_KEY: adminKey,
        HOST: '127.0.0.1',
        PORT: '0',
      };
      const started = await Promise.all(['r1', 'r2', 'r3'].map((id) => startGatewayProcess({ ...env, GATEWAY_REPLICA_ID: id })));
      for (const r of started) {
        running.push(r.proc);
        bases.push(r.base);
      }
    });
    after(async () => {
      for (const r of running) await r.stop('SIGKILL');
      await redis?.stop();
    });

    const key = (args: string[]) => {
      const created = runCli(['tokens', 'create', '--group', 'default', ...args], env);
      assert.equal(created.status, 0, created.stderr);
      return created.stdout.trim();
    };
    const models = (base: string, k: string) => http(`${base}/v1/models`, { headers: { authorization: `Bearer ${k}` } });
    /** Statuses of `n` requests sent at once, spread over the three replicas in turn. */
    const burst = async (n: number, send: (base: string) => Promise<Response>) =>
      Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const r = await send(bases[i % bases.length]!);
          await r.arrayBuffer();
          return r.status;
        }),
      );
    const metrics = async (base: string) => (await http(`${base}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } })).text();
    const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

    test('rpm N: of many concurrent requests over three replicas, exactly N are admitted in the window', async () => {
      const k = key(['--rpm', '10']);
      const statuses = await burst(45, (base) => models(base, k));
      assert.deepEqual([count(statuses, 200), count(statuses, 429)], [10, 35], statuses.join(','));
      const again = await burst(6, (base) => models(base, k));
      assert.deepEqual(again, [429, 429, 429, 429, 429, 429], 'the window is still full on every replica');
    });

    test('max_parallel M: of many concurrent calls over three replicas, exactly M are in flight; their slots come back', async () => {
      const k = key(['--max-parallel', '4']);
      // The simulator answers each call after 2 s: the admitted ones are in flight while the others arrive.
      const slow = (base: string) =>
        http(`${base}${ALPHA}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            contents: [{ role: 'user', parts: [{ text: 'a lighthouse [sim:fault=slow-headers:2000]' }] }],
            generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
          }),
        });
      const statuses = await burst(15, slow);
      assert.deepEqual([count(statuses, 200), count(statuses, 429)], [4, 11], statuses.join(','));
      const after = await burst(3, (base) => models(base, k));
      assert.deepEqual(after, [200, 200, 200], 'every slot was given back when its answer ended');
    });

    test('Redis stopped mid-test: every replica keeps serving, each holding the limit in its own process', async () => {
      const k = key(['--rpm', '2']);
      const shared = await burst(3, (base) => models(base, k));
      assert.deepEqual([count(shared, 200), count(shared, 429)], [2, 1], 'shared while Redis is up');
      await redis.stop();
      for (const base of bases) {
        await until(`${base} to see Redis gone`, async () => /gateway_redis_up 0/.test(await metrics(base)), 20_000);
      }
      const fresh = key(['--rpm', '2']);
      // Per process: each replica admits 2 of the 3 it gets; 6 in all where Redis admitted 2.
      for (const base of bases) {
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push((await models(base, fresh)).status);
        assert.deepEqual(statuses, [200, 200, 429], `${base}: its own window`);
      }
      const plain = key([]);
      for (const base of bases) assert.equal((await models(base, plain)).status, 200, 'a key without limits is served as ever');
      for (const base of bases) assert.match(await metrics(base), /gateway_redis_fallbacks_total\{op="window"\} [1-9]/);
    });
  });
}
