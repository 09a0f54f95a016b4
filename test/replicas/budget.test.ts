/**
 * A key's budget per period across three real gateway processes over one PostgreSQL schema
 * (DATABASE_URL) and one Redis (a redis-server of the test's own, so the test can stop it), in
 * front of one `gateway sims` process: of many concurrent requests spread over the replicas,
 * exactly as many as the budget admits are served, the rest are 402 naming the budget; then Redis
 * is stopped mid-test and the count is still exact, since the budget is the store's one atomic
 * spend, never Redis's (docs/tokens-and-quota.md, "Budgets").
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { boundedFetch as http, type LimitReplicas, startLimitReplicas } from '../helpers/limit-replicas.js';
import { serviceUrl } from '../helpers/services.js';

const ALPHA = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
/** An alpha 1K image: 1 unit at the shipped prices. */
const IMAGE = JSON.stringify({
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
});

const databaseUrl = serviceUrl('DATABASE_URL', 'budgets of keys across replicas over PostgreSQL and Redis');
if (databaseUrl) {
  describe('the budget of a key across three replicas', { timeout: 180_000 }, () => {
    let set: LimitReplicas;
    before(async () => {
      set = await startLimitReplicas(databaseUrl);
    });
    after(async () => {
      await set?.stop();
    });

    /** A key with a budget of `budget` units a day, made by the CLI: its key and its token id. */
    const key = (budget: number) => set.token(['--budget', String(budget), '--period', 'day']);
    const image = (base: string, k: string) =>
      http(`${base}${ALPHA}`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: IMAGE });
    /** Answers of `n` requests sent at once, spread over the three replicas in turn. */
    const burst = async (n: number, k: string) =>
      Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const r = await image(set.bases[i % set.bases.length] ?? '', k);
          const text = await r.text();
          return { status: r.status, text };
        }),
      );
    const count = (answers: { status: number }[], status: number) => answers.filter((a) => a.status === status).length;
    const admin = async (path: string) =>
      (await http(`${set.bases[0]}${path}`, { headers: { authorization: `Bearer ${set.adminKey}` } })).json() as Promise<any>;
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
      await set.stopRedis();
      const rest = await burst(30, k);
      assert.deepEqual([count(rest, 200), count(rest, 402)], [5, 25], `exactly the 5 units left: ${rest.map((a) => a.status).join(',')}`);
      const report = await ledger(id);
      assert.deepEqual([report.token.used, report.totals.debit], [9, 9]);
    });
  });
}
