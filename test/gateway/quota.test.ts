/**
 * Quota, prices and the ledger (docs/tokens-and-quota.md, "Quota, prices and the ledger"), end to end: a real gateway
 * on port 0 in front of every simulator, prices compiled from the YAML below (the shipped config's
 * own prices are checked at the end), real HTTP. Every test ends by checking that the ledger of
 * the tokens it used balances: Σdebit − Σrefund − Σsettle = used.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { compilePrices } from '../../src/config/compile-prices.js';
import type { ConfigIssue } from '../../src/config/issues.js';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import { parseYaml } from '../../src/config/yaml-source.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { priceOf, quote } from '../../src/quota/price.js';
import type { Simulator } from '../../src/sim/http.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import { openStore } from '../../src/store/open-store.js';
import type { LedgerEntry, Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { postJson, type JsonAnswer, readAnswer } from '../helpers/harness.js';
import { startTaskHarness } from '../helpers/task-harness.js';

const ADMIN_KEY = 'quota-test-admin-key';
const UNIFIED = 'unified-passthrough';
const ALPHA_MODEL = 'alpha-3-pro-image-preview';

/** The prices these tests run under, as an operator would write them in channels.yaml. */
const PRICES_FILE = 'test-prices.yaml';
const PRICES = `
prices:
  default: 2
  models:
    GV-flat: 3
    "GV-*":
      per_second: 1
      default_seconds: 5
      resolution: body.size
      factors: { 1920x1080: 2 }
    "GV-pro-*": { per_second: 2, default_seconds: 5 }
    "GV-odd-*":
      per_second: 1
      default_seconds: 4
      seconds: "$number(body.metadata.len)"
    ${ALPHA_MODEL}: 4
`;

interface Rig {
  readonly url: string;
  readonly store: Store;
  readonly gateway: Gateway;
  readonly sims: Readonly<Record<string, Simulator>>;
  /** Log lines at warn and above, parsed. */
  readonly warnings: { msg: string; price?: string; where?: string }[];
  /** A token with this quota: its id and key. */
  token(quota: number | null): Promise<{ id: string; key: string }>;
  post(path: string, body: unknown, key: string): Promise<JsonAnswer>;
  get(path: string, key: string): Promise<JsonAnswer>;
  close(): Promise<void>;
}

/** Every simulator, a gateway in front of them with PRICES, an in-memory store. */
async function startRig(): Promise<Rig> {
  const sims: Record<string, Simulator> = {};
  for (const [profile, start] of Object.entries(SIMULATORS)) sims[profile] = await start({ finishMs: 300 });
  const store = await openStore(':memory:');
  const shipped = loadConfigOrThrow(PROJECT_ROOT, {
    overrideChannel: (c) => {
      const sim = sims[c.profile];
      return sim ? { base_url: sim.url, secrets: { ...sim.secrets }, polling: { interval_ms: 100, stale_ms: 0, deadline_ms: 60_000, concurrency: 16 } } : null;
    },
  });
  const parsed = parseYaml(PRICES_FILE, PRICES);
  const issues: ConfigIssue[] = [];
  const prices = compilePrices(parsed.source!, shipped.routes, issues);
  assert.deepEqual(issues, [], 'the test prices compile');
  const snapshot: Snapshot = Object.freeze({ ...shipped, prices });
  const warnings: Rig['warnings'] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) warnings.push(JSON.parse(line));
      done();
    },
  });
  const gateway = createGateway({ snapshot: () => snapshot, store, log: pino({ level: 'warn' }, sink), adminKey: ADMIN_KEY });
  await gateway.listen(0);
  const url = gateway.url();
  let n = 0;
  return {
    url,
    store,
    gateway,
    sims,
    warnings,
    async token(quota) {
      const key = generateKey();
      const t = await store.createToken({ name: `quota-${++n}`, keyHash: hashKey(key), group: 'default', models: null, quota });
      return { id: t.id, key };
    },
    post: (path, body, key) => postJson(url, path, body, { authorization: `Bearer ${key}` }),
    get: async (path, key) => readAnswer(await fetch(url + path, { headers: { authorization: `Bearer ${key}` } })),
    async close() {
      await gateway.close();
      await store.close();
      await Promise.all(Object.values(sims).map((s) => s.close()));
    },
  };
}

/** The whole ledger of a token through the admin route, page by page; asserts it balances. */
async function ledgerOf(rig: Rig, tokenId: string, pageSize = 30): Promise<{ rows: LedgerEntry[]; used: number; report: any }> {
  // A synchronous request's settlement or refund is written after its answer (src/quota/hold-endings.ts): those made are written first.
  await rig.gateway.holdEndings.flush();
  const rows: LedgerEntry[] = [];
  let after = '';
  let report: any;
  for (let page = 0; page < 1000; page++) {
    const r = await rig.get(`/admin/tokens/${tokenId}/ledger?limit=${pageSize}${after}`, ADMIN_KEY);
    assert.equal(r.status, 200, r.text);
    report = r.json;
    rows.push(...report.entries.map((e: any) => ({ ...e, tokenId })));
    if (report.next_after === null) break;
    after = `&after=${report.next_after}`;
  }
  const sum = (kind: string) => rows.filter((r) => r.kind === kind).reduce((s, r) => s + r.amount, 0);
  assert.deepEqual(report.totals, { debit: sum('debit'), refund: sum('refund'), settle: sum('settle') }, 'the sums are the rows');
  assert.equal(sum('debit') - sum('refund') - sum('settle'), report.token.used, `the ledger balances: ${JSON.stringify(rows)}`);
  assert.equal(report.balanced, true);
  assert.equal((await rig.store.getToken(tokenId))?.used, report.token.used);
  return { rows, used: report.token.used, report };
}

/** Polls a condition until it holds (bounded: 400 tries, 25 ms apart). */
async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} never happened`);
}

/** Runs `jobs` with at most `width` in flight at once; answers in job order. */
async function pool<T>(jobs: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, jobs.length) }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

const video = (model: string, extra: Record<string, unknown> = {}) => ({ model, prompt: 'a paper boat', ...extra });
const image = (prompt: string) => ({
  contents: [{ role: 'user', parts: [{ text: prompt }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: {} },
});
const submits = (rig: Rig) => rig.sims[UNIFIED]!.stats.submits ?? 0;

describe('quota, prices and the ledger', () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig();
  });
  after(() => rig.close());

  test('1,000 concurrent submissions against a quota for exactly 100: 100 accepted, 900 insufficient_user_quota, 100 vendor creates, a balanced ledger', {
    timeout: 120_000,
  }, async () => {
    const price = 5; // GV-* at 1 unit per second, 5 s by default
    const t = await rig.token(100 * price);
    const before = submits(rig);
    const debitsBefore = (await rig.gateway.metrics.quotaUnits.get()).values.find((v) => v.labels.kind === 'debit')?.value ?? 0;
    // 200 in flight at any moment, on loopback: every submission races for the same 500 units.
    const answers = await pool(
      Array.from({ length: 1000 }, (_, i) => () => rig.post('/v1/video/generations', video('GV-2.1', { prompt: `boat ${i}` }), t.key)),
      200,
    );
    const ok = answers.filter((a) => a.status === 200);
    const short = answers.filter((a) => a.status === 402);
    assert.equal(
      ok.length,
      100,
      `accepted: ${answers
        .filter((a) => a.status !== 402 && a.status !== 200)
        .map((a) => a.text)
        .slice(0, 3)}`,
    );
    assert.equal(short.length, 900);
    for (const a of short) {
      assert.equal(a.json.error.code, 'insufficient_user_quota', a.text);
      assert.equal(a.json.error.type, 'svc_api_error', 'shape A');
      assert.match(a.json.error.message, /this request costs 5 units/);
    }
    assert.equal(submits(rig) - before, 100, 'the vendor received exactly the 100 accepted creations');
    const { rows, used } = await ledgerOf(rig, t.id);
    assert.equal(used, 100 * price);
    assert.equal(rows.filter((r) => r.kind === 'debit' && r.amount === price).length, 100);
    assert.deepEqual(new Set(rows.map((r) => r.ref)), new Set(ok.map((a) => a.json.id)), 'one debit per accepted task, named by its id');
    const debits = (await rig.gateway.metrics.quotaUnits.get()).values.find((v) => v.labels.kind === 'debit')?.value ?? 0;
    assert.equal(debits - debitsBefore, 100 * price, 'gateway_quota_units_total{kind="debit"}');
  });

  test('a failing task is refunded exactly once while many queries and the poller race to see it fail', { timeout: 60_000 }, async () => {
    const t = await rig.token(50);
    const sub = await rig.post('/v1/video/generations', video('GV-2.1', { prompt: 'doomed [sim:fail=render_error] [sim:finish=400]', duration: 7 }), t.key);
    assert.equal(sub.status, 200, sub.text);
    const id = sub.json.id as string;
    const queriesBefore = rig.sims[UNIFIED]!.stats.queries ?? 0;
    // Rounds of 40 concurrent queries (the record is stale at once: stale_ms 0) until one sees the failure.
    let failedSeen = 0;
    for (let round = 0; round < 100 && failedSeen === 0; round++) {
      const looks = await Promise.all(Array.from({ length: 40 }, () => rig.get(`/v1/videos/${id}`, t.key)));
      for (const l of looks) assert.equal(l.status, 200, l.text);
      failedSeen = looks.filter((l) => l.json.status === 'failed').length;
    }
    assert.ok(failedSeen > 0, 'the task failed');
    assert.ok((rig.sims[UNIFIED]!.stats.queries ?? 0) > queriesBefore, 'the queries asked the vendor');
    // More racing looks after the failure change nothing.
    await Promise.all(Array.from({ length: 40 }, () => rig.get(`/v1/video/generations/${id}`, t.key)));
    const record = (await rig.store.getTask(id))!;
    assert.equal(record.status, 'failed');
    assert.equal(record.refunded, true);
    assert.equal(record.charged, 0);
    const { rows, used } = await ledgerOf(rig, t.id);
    assert.deepEqual(
      rows.map((r) => [r.kind, r.ref, r.amount]),
      [
        ['debit', id, 7],
        ['refund', id, 7],
      ],
      'exactly one refund',
    );
    assert.equal(used, 0);
  });

  describe('prices', () => {
    test('per model, per second, per resolution, pattern against exact name, and the default: the debit is the documented price', async () => {
      const t = await rig.token(null);
      const cases: [string, Record<string, unknown>, number][] = [
        ['GV-flat', {}, 3], // an exact name beats the GV-* pattern
        ['GV-2.1', {}, 5], // GV-*: 1 per second, 5 s when the request does not say
        ['GV-2.1', { duration: 7 }, 7],
        ['GV-2.1', { seconds: '8' }, 8],
        ['GV-2.1', { duration: 3, size: '1920x1080' }, 6], // resolution factor 2
        ['GV-2.1', { duration: 3, size: '1280x720' }, 3], // any other size: factor 1
        ['GV-pro-1', { seconds: 4 }, 8], // the longer pattern GV-pro-* wins: 2 per second
        ['JV-3', { duration: 9 }, 2], // no price of its own: prices.default
      ];
      for (const [model, extra, price] of cases) {
        const r = await rig.post('/v1/video/generations', video(model, extra), t.key);
        assert.equal(r.status, 200, `${model} ${JSON.stringify(extra)}: ${r.text}`);
        const record = (await rig.store.getTask(r.json.id))!;
        assert.equal(record.price, price, `${model} ${JSON.stringify(extra)}`);
        const debit = (await rig.store.ledger(t.id, null, 100)).find((e) => e.ref === r.json.id && e.kind === 'debit');
        assert.equal(debit?.amount, price, 'the debit row is the price');
        assert.equal(debit?.model, model);
      }
      const sync = await rig.post(`/v1beta/models/${ALPHA_MODEL}:generateContent`, image('a cup'), t.key);
      assert.equal(sync.status, 200, sync.text);
      const { rows, used } = await ledgerOf(rig, t.id);
      assert.deepEqual(
        rows.filter((r) => r.model === ALPHA_MODEL).map((r) => [r.kind, r.amount]),
        [['debit', 4]],
        'a synchronous request is debited its price and settled at once',
      );
      assert.ok(rows.filter((r) => r.model === ALPHA_MODEL)[0]!.ref.length > 0, 'named by its request id');
      assert.ok(used > 0);
    });

    test('settlement gives back the difference when the vendor reports fewer seconds than were held', async () => {
      const t = await rig.token(100);
      // Held: the larger of duration 10 and seconds 6. The vendor takes `seconds` and makes 6 s.
      const r = await rig.post('/v1/video/generations', video('GV-2.1', { duration: 10, seconds: '6' }), t.key);
      assert.equal(r.status, 200, r.text);
      const id = r.json.id as string;
      assert.equal((await rig.store.getTask(id))!.price, 10);
      const done = await until('completion', async () => {
        const rec = await rig.store.getTask(id);
        return rec?.status === 'completed' && rec;
      });
      assert.equal(done.seconds, '6');
      assert.equal(done.charged, 6);
      const { rows, used } = await ledgerOf(rig, t.id);
      assert.deepEqual(
        rows.map((e) => [e.kind, e.ref, e.amount]),
        [
          ['debit', id, 10],
          ['settle', id, 4],
        ],
      );
      assert.equal(used, 6);
      // Later looks at the completed task settle nothing more.
      await Promise.all(Array.from({ length: 10 }, () => rig.get(`/v1/videos/${id}`, t.key)));
      assert.equal((await ledgerOf(rig, t.id)).rows.length, 2);
    });

    test('a task charged what it held is settled without a movement', async () => {
      const t = await rig.token(100);
      const r = await rig.post('/v1/video/generations', video('GV-2.1', { duration: 6 }), t.key);
      assert.equal(r.status, 200, r.text);
      const done = await until('completion', async () => {
        const rec = await rig.store.getTask(r.json.id);
        return rec?.status === 'completed' && rec;
      });
      assert.equal(done.charged, 6);
      assert.deepEqual(
        (await ledgerOf(rig, t.id)).rows.map((e) => e.kind),
        ['debit'],
      );
    });

    test('a vendor rejection of a submission refunds the hold', async () => {
      const t = await rig.token(100);
      const before = submits(rig);
      const r = await rig.post('/v1/video/generations', video('GV-2.1', { prompt: 'x [sim:fault=400]', duration: 9 }), t.key);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.error.code, 'invalid_request');
      assert.equal(submits(rig) - before, 1, 'the vendor was asked and said no');
      const { rows, used } = await ledgerOf(rig, t.id);
      assert.deepEqual(
        rows.map((e) => [e.kind, e.amount]),
        [
          ['debit', 9],
          ['refund', 9],
        ],
      );
      assert.equal(rows[0]!.ref, rows[1]!.ref);
      assert.equal(await rig.store.getTask(rows[0]!.ref), null, 'the record is gone');
      assert.equal(used, 0);
    });

    test('a failed synchronous call refunds its price', async () => {
      const t = await rig.token(4);
      const r = await rig.post(`/v1beta/models/${ALPHA_MODEL}:generateContent`, image('a cup [sim:fault=500]'), t.key);
      assert.equal(r.status, 502, r.text);
      const { rows, used } = await ledgerOf(rig, t.id);
      assert.deepEqual(
        rows.map((e) => [e.kind, e.amount]),
        [
          ['debit', 4],
          ['refund', 4],
        ],
      );
      assert.equal(used, 0);
      const ok = await rig.post(`/v1beta/models/${ALPHA_MODEL}:generateContent`, image('a cup'), t.key);
      assert.equal(ok.status, 200, `the whole quota of 4 is there again: ${ok.text}`);
      assert.equal((await ledgerOf(rig, t.id)).used, 4);
    });

    test('a token with too little quota gets 402 and no vendor call', async () => {
      const t = await rig.token(2);
      const unifiedBefore = rig.sims[UNIFIED]!.stats.requests;
      const alphaBefore = rig.sims['alpha-native']!.stats.requests;
      const task = await rig.post('/v1/video/generations', video('GV-flat'), t.key);
      const sync = await rig.post(`/v1beta/models/${ALPHA_MODEL}:generateContent`, image('a cup'), t.key);
      for (const [r, price] of [
        [task, 3],
        [sync, 4],
      ] as const) {
        assert.equal(r.status, 402, r.text);
        assert.equal(r.json.error.code, 'insufficient_user_quota');
        assert.equal(r.json.error.message, `the quota of this API key is used up (this request costs ${price} units)`);
      }
      assert.equal(rig.sims[UNIFIED]!.stats.requests, unifiedBefore, 'no vendor call for the task');
      assert.equal(rig.sims['alpha-native']!.stats.requests, alphaBefore, 'no vendor call for the image');
      const { rows, used } = await ledgerOf(rig, t.id);
      assert.deepEqual(rows, [], 'nothing moved');
      assert.equal(used, 0);
      const fits = await rig.post('/v1/video/generations', video('JV-3'), t.key);
      assert.equal(fits.status, 200, `the default price of 2 fits: ${fits.text}`);
    });

    test('a token whose budget is short gets 402 naming its budget, what is left and when it renews; no vendor call; the ledger names the budget', async () => {
      const key = generateKey();
      const t = await rig.store.createToken({
        name: 'budget',
        keyHash: hashKey(key),
        group: 'default',
        models: null,
        quota: 1000,
        budget: 10,
        budgetPeriod: 'day',
      });
      const fits = await rig.post('/v1/video/generations', video('GV-flat'), key);
      assert.equal(fits.status, 200, fits.text);
      const unifiedBefore = rig.sims[UNIFIED]!.stats.requests;
      const alphaBefore = rig.sims['alpha-native']!.stats.requests;
      assert.equal((await rig.post(`/v1beta/models/${ALPHA_MODEL}:generateContent`, image('a cup'), key)).status, 200, 'then 4 more: 7 of 10');
      const task = await rig.post('/v1/video/generations', video('GV-pro-x'), key);
      const sync = await rig.post(`/v1beta/models/${ALPHA_MODEL}:generateContent`, image('a cup'), key);
      const renews = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000).toISOString();
      for (const [r, price] of [
        [task, 10],
        [sync, 4],
      ] as const) {
        assert.equal(r.status, 402, r.text);
        assert.deepEqual(Object.keys(r.json.error).sort(), ['code', 'message', 'param', 'type'], 'shape A');
        assert.equal(r.json.error.code, 'insufficient_user_quota');
        assert.equal(r.json.error.message, `this key's daily budget of 10 units has 3 left, the request costs ${price}; it renews at ${renews}`);
      }
      assert.equal(rig.sims[UNIFIED]!.stats.requests, unifiedBefore + 0, 'no vendor call for the refused task');
      assert.equal(rig.sims['alpha-native']!.stats.requests, alphaBefore + 1, 'none for the refused image');
      const { rows, used, report } = await ledgerOf(rig, t.id);
      assert.equal(used, 7);
      assert.deepEqual(
        report.entries.map((e: Record<string, unknown>) => [e.kind, e.amount, e.budget_period, e.budget_start]),
        [
          ['debit', 3, 'day', Date.parse(renews) - 86_400_000],
          ['debit', 4, 'day', Date.parse(renews) - 86_400_000],
        ],
        'the admin route names the budget of each debit',
      );
      assert.equal(rows.length, 2);
      assert.deepEqual([report.token.budget, report.token.budget_period], [10, 'day']);
      const key2 = generateKey();
      await rig.store.createToken({ name: 'both', keyHash: hashKey(key2), group: 'default', models: null, quota: 2, budget: 1, budgetPeriod: 'week' });
      const both = await rig.post(`/v1beta/models/${ALPHA_MODEL}:generateContent`, image('a cup'), key2);
      assert.equal(both.json.error?.message, 'the quota of this API key is used up (this request costs 4 units)', 'short of both: the lifetime quota is named');
    });

    test('a price expression that fails on a valid request prices it with default_seconds and logs a warning, never a 5xx', async () => {
      const t = await rig.token(null);
      const r = await rig.post('/v1/video/generations', video('GV-odd-1', { metadata: { len: 'long' } }), t.key);
      assert.equal(r.status, 200, r.text);
      assert.equal((await rig.store.getTask(r.json.id))!.price, 4, 'default_seconds 4 at 1 per second');
      const warning = rig.warnings.find((w) => w.price === 'GV-odd-*');
      assert.ok(warning, JSON.stringify(rig.warnings));
      assert.match(warning.where!, new RegExp(`^${PRICES_FILE}:\\d+$`));
      assert.match(warning.msg, /seconds expression .* failed: .*priced with default_seconds \(4\)/);
      // Nothing asked at all is the ordinary default, without a warning.
      const plain = await rig.post('/v1/video/generations', video('GV-odd-2'), t.key);
      assert.equal((await rig.store.getTask(plain.json.id))!.price, 4);
      assert.equal(rig.warnings.filter((w) => w.price === 'GV-odd-*').length, 1);
    });
  });

  describe('GET /admin/tokens/{token_id}/ledger', () => {
    test('answers the token, its sums and pages of rows; refuses strangers, unknown tokens and bad paging', async () => {
      const t = await rig.token(20);
      for (let i = 0; i < 5; i++) assert.equal((await rig.post('/v1/video/generations', video('GV-flat'), t.key)).status, 200);
      const all = await rig.get(`/admin/tokens/${t.id}/ledger`, ADMIN_KEY);
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(all.json.token, { id: t.id, name: all.json.token.name, group: 'default', quota: 20, used: 15, budget: null, budget_period: null });
      assert.deepEqual(all.json.totals, { debit: 15, refund: 0, settle: 0 });
      assert.equal(all.json.entries.length, 5);
      assert.equal(all.json.next_after, null);
      for (const e of all.json.entries)
        assert.deepEqual(Object.keys(e).sort(), ['amount', 'at', 'budget_period', 'budget_start', 'id', 'kind', 'model', 'ref']);
      const first = await rig.get(`/admin/tokens/${t.id}/ledger?limit=2`, ADMIN_KEY);
      assert.deepEqual(first.json.entries, all.json.entries.slice(0, 2));
      assert.equal(first.json.next_after, all.json.entries[1].id);
      const second = await rig.get(`/admin/tokens/${t.id}/ledger?limit=2&after=${first.json.next_after}`, ADMIN_KEY);
      assert.deepEqual(second.json.entries, all.json.entries.slice(2, 4));

      assert.equal((await rig.get(`/admin/tokens/${t.id}/ledger`, t.key)).status, 401, 'an API key is not the admin key');
      const unknown = await rig.get('/admin/tokens/no-such-token/ledger', ADMIN_KEY);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.json.error.code, 'not_found');
      for (const q of ['limit=0', 'limit=1001', 'limit=x', 'after=-1', 'after=1.5']) {
        const bad = await rig.get(`/admin/tokens/${t.id}/ledger?${q}`, ADMIN_KEY);
        assert.equal(bad.status, 400, q);
        assert.equal(bad.json.error.code, 'invalid_request');
        assert.equal(bad.json.error.param, q.split('=')[0]);
      }
    });
  });
});

describe('the shipped prices', () => {
  test('load from channels.yaml and its fragments, each price where it was written, with the documented figures', async () => {
    const h = await startTaskHarness({ finishMs: 200 });
    try {
      const prices = h.snapshot.prices;
      assert.equal(prices.default, 1);
      assert.match(priceOf(prices, 'theta-H3')!.where, /^channels\.d\/theta-native\.yaml:\d+$/, 'a fragment prices its own models');
      assert.match(priceOf(prices, 'epsilon-video-3')!.where, /^channels\.yaml:\d+$/);
      const documented: [string, unknown, number][] = [
        ['epsilon-video-3', {}, 1],
        ['epsilon-video-3', { seconds: '12', size: '1792x1024' }, 3],
        ['epsilon-video-3-pro', {}, 3],
        ['epsilon-video-3-max', {}, 8],
        [ALPHA_MODEL, image('x'), 1],
        [ALPHA_MODEL, { generationConfig: { imageConfig: { imageSize: '4K' } } }, 4],
        ['gamma-4.5', { resolution: '4k' }, 2],
        ['mu2.6-t2v:1920*1080', { duration: 10 }, 2],
        ['eta_3_1', { size: '1920x1080' }, 2],
        ['iota-v4.5', { prompt: 'x' }, 1],
      ];
      for (const [model, body, price] of documented) assert.equal((await quote(prices, model, body)).price, price, `${model} ${JSON.stringify(body)}`);

      // End to end: the debit is the documented price, and the task is settled at the seconds the vendor made.
      const key = await h.createKey(10);
      const r = await h.post('/v1/videos', { model: 'epsilon-video-3', prompt: 'x', seconds: '12', size: '1792x1024' }, { authorization: `Bearer ${key}` });
      assert.equal(r.status, 200, r.text);
      const done = await until('completion', async () => {
        const rec = await h.record(r.json.id);
        return rec?.status === 'completed' && rec;
      });
      assert.equal(done.price, 3);
      assert.equal(done.charged, 3);
      const token = (await h.store.listTokens()).find((t) => t.quota === 10)!;
      assert.deepEqual(
        (await h.store.ledger(token.id, null, 10)).map((e) => [e.kind, e.amount]),
        [['debit', 3]],
      );
      assert.deepEqual(await h.store.ledgerBalance(token.id), { used: 3, debit: 3, refund: 0, settle: 0 });
    } finally {
      await h.close();
    }
  });
});
