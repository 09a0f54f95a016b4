/**
 * A key's budget per period across three real gateway processes over one PostgreSQL schema
 * (DATABASE_URL) and one Redis (a redis-server of the test's own, so the test can stop it), in
 * front of one `gateway sims` process: of many concurrent requests spread over the replicas,
 * exactly as many as the budget admits are served, the rest are 402 naming the budget; then Redis
 * is stopped mid-test and the count is still exact, since the budget is the store's one atomic
 * spend, never Redis's (docs/tokens-and-quota.md, "Budgets").
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
/** An alpha 1K image: 1 unit at the shipped prices. */
const IMAGE = JSON.stringify({
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
});
/** fetch with a bound: no request may hang the test. */
const http = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });

const databaseUrl = serviceUrl('DATABASE_URL', 'budgets of keys across replicas over PostgreSQL and Redis');
if (databaseUrl) {
  describe('the budget of a key across three replicas', { timeout: 180_000 }, () => {
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
      // One after another: three configurations compiled at once on a busy two-core machine can pass the start's bound.
      for (const id of ['r1', 'r2', 'r3']) {
        const r = await startGatewayProcess({ ...env, GATEWAY_REPLICA_ID: id });
        running.push(r.proc);
        bases.push(r.base);
      }
    });
    after(async () => {
      for (const r of running) await r.stop('SIGKILL');
      await redis?.stop();
    });

    /** A key with a budget, made by the CLI: its key and its token id. */
    const key = (budget: number) => {
      const created = runCli(['tokens', 'create', '--group', 'default', '--budget', String(budget), '--period', 'day'], env);
      assert.equal(created.status, 0, created.stderr);
      const id = /created token ([0-9a-f-]{36})/.exec(created.stderr)?.[1];
      assert.ok(id, created.stderr);
      return { key: created.stdout.trim(), id };
    };
    const image = (base: string, k: string) =>
      http(`${base}${ALPHA}`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: IMAGE });
    /** Answers of `n` requests sent at once, spread over the three replicas in turn. */
    const burst = async (n: number, k: string) =>
      Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const r = await image(bases[i % bases.length]!, k);
          const text = await r.text();
          return { status: r.status, text };
        }),
      );
    const count = (answers: { status: number }[], status: number) => answers.filter((a) => a.status === status).length;
    const admin = async (path: string) => (await http(`${bases[0]}${path}`, { headers: { authorization: `Bearer ${adminKey}` } })).json() as Promise<any>;
    const metrics = async (base: string) => (await http(`${base}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } })).text();
    /** The token's ledger as the admin route gives it: it balances, and every debit names today's budget. */
    const ledger = async (id: string) => {
      const report = await admin(`/admin/tokens/${id}/ledger?limit=1000`);
      assert.equal(report.balanced, true);
      const today = Math.floor(Date.now() / 86_400_000) * 86_400_000;
      for (const e of report.entries) assert.deepEqual([e.budget_period, e.budget_start], ['day', today], JSON.stringify(e));
      return report;
    };

    test('a budget of K: of N concurrent requests over three replicas, exactly K are served, the others 402 naming the budget', async () => {
      const { key: k, id } = key(7);
      const answers = await burst(40, k);
      assert.deepEqual([count(answers, 200), count(answers, 402)], [7, 33], answers.map((a) => a.status).join(','));
      for (const a of answers.filter((x) => x.status === 402)) {
        assert.match(
          JSON.parse(a.text).error.message,
          /^this key's daily budget of 7 units has 0 left, the request costs 1; it renews at \d{4}-\d\d-\d\dT00:00:00\.000Z$/,
        );
      }
      const report = await ledger(id);
      assert.deepEqual([report.token.used, report.totals.debit, report.entries.length], [7, 7, 7]);
      const [token] = (await admin('/admin/tokens')).tokens.filter((t: { id: string }) => t.id === id);
      assert.deepEqual([token.budget_used, token.budget_remaining], [7, 0]);
    });

    test('Redis stopped mid-test: the budget stays exact over the three replicas', async () => {
      const { key: k, id } = key(9);
      const first = await burst(4, k);
      assert.deepEqual([count(first, 200), count(first, 402)], [4, 0], 'while Redis is up');
      await redis.stop();
      for (const base of bases) {
        await until(`${base} to see Redis gone`, async () => /gateway_redis_up 0/.test(await metrics(base)), 20_000);
      }
      const rest = await burst(30, k);
      assert.deepEqual([count(rest, 200), count(rest, 402)], [5, 25], `exactly the 5 units left: ${rest.map((a) => a.status).join(',')}`);
      const report = await ledger(id);
      assert.deepEqual([report.token.used, report.totals.debit], [9, 9]);
    });
  });
}
