/**
 * `gateway tokens create --budget N --period P` and `gateway tokens set-budget` as operators run
 * them (docs/tokens-and-quota.md, "Budgets"): real processes on a store file, and on PostgreSQL
 * when DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import type { TokenView } from '../../src/tokens/manage-tokens.js';
import { runCli } from '../helpers/process.js';
import { pgSchemas, serviceUrl } from '../helpers/services.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-cli-budget-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const DAY = 86_400_000;
const nextMidnight = (now: number) => new Date(Math.floor(now / DAY) * DAY + DAY).toISOString();

async function budgetRoundTrip(env: NodeJS.ProcessEnv): Promise<void> {
  const cli = (args: string[]) => runCli(['tokens', ...args], env);
  const view = (id: string) => (JSON.parse(cli(['list', '--json']).stdout) as TokenView[]).find((t) => t.id === id)!;
  const created = cli(['create', '--group', 'default', '--name', 'budgeted', '--quota', '500', '--budget', '100', '--period', 'day']);
  assert.equal(created.status, 0, created.stderr);
  const [token] = JSON.parse(cli(['list', '--json']).stdout) as TokenView[];
  const id = token!.id;
  const day = Date.now();
  assert.deepEqual([token!.budget, token!.budget_period, token!.budget_used, token!.budget_remaining, token!.quota_remaining], [100, 'day', 0, 100, 500]);
  // Unless the test ran across midnight UTC.
  assert.ok([nextMidnight(day), nextMidnight(day + DAY)].includes(token!.budget_resets_at!), token!.budget_resets_at!);
  const listed = cli(['list']);
  assert.match(listed.stdout, /budget=100\/day {2}budget_used=0 {2}budget_resets=\d{4}-\d\d-\d\dT00:00:00\.000Z/);

  const raised = cli(['set-budget', id, '250']);
  assert.equal(raised.status, 0, raised.stderr);
  assert.match(raised.stdout, /budget=250\/day/, 'the amount alone keeps the period');
  const weekly = cli(['set-budget', id, '40', '--period', '7d']);
  assert.equal(weekly.status, 0, weekly.stderr);
  const seven = view(id);
  assert.deepEqual([seven.budget, seven.budget_period, seven.budget_used], [40, '7d', 0]);
  const resets = Date.parse(seven.budget_resets_at!);
  assert.ok(resets > Date.now() + 7 * DAY - 60_000 && resets <= Date.now() + 7 * DAY, `7 days from when it was set: ${seven.budget_resets_at}`);
  const removed = cli(['set-budget', id, 'unlimited']);
  assert.equal(removed.status, 0, removed.stderr);
  assert.deepEqual([view(id).budget, view(id).budget_period, view(id).budget_resets_at], [null, null, null]);

  const noPeriod = cli(['set-budget', id, '5']);
  assert.equal(noPeriod.status, 1, 'a token without a budget needs its period');
  assert.match(noPeriod.stderr, /give its period too/);
  const unknown = cli(['set-budget', 'no-such-token', '5', '--period', 'day']);
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /no token named "no-such-token"/);
  for (const [args, said] of [
    [['create', '--group', 'default', '--budget', '5'], /--budget needs --period/],
    [['create', '--group', 'default', '--period', 'day'], /--period needs --budget/],
    [['create', '--group', 'default', '--budget=-1', '--period', 'day'], /--budget takes a whole number/],
    [['create', '--group', 'default', '--budget', '5', '--period', '367d'], /--period takes day, week, month, or a number of days from 1 to 366/],
    [['set-budget', id, '5', '--period', 'year'], /--period takes day, week, month/],
    [['set-budget', id, 'unlimited', '--period', 'day'], /unlimited takes no --period/],
    [['set-budget', id], /missing <N\|unlimited>/],
  ] as [string[], RegExp][]) {
    const r = cli(args);
    assert.equal(r.status, 2, `tokens ${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, said);
  }
  assert.equal(view(id).budget, null, 'nothing changed');

  const audit = await openStore(env.GATEWAY_DB!);
  try {
    const records = (await audit.findAudit({ target: id, action: 'token.budget', before: null, limit: 50 })).reverse();
    assert.deepEqual(
      records.map((r) => [(r.before as TokenView).budget, (r.after as TokenView).budget, (r.after as TokenView).budget_period]),
      [
        [100, 250, 'day'],
        [250, 40, '7d'],
        [40, null, null],
      ],
    );
    assert.ok(records.every((r) => r.actor === 'cli'));
  } finally {
    await audit.close();
  }
}

test('tokens create --budget --period and set-budget on the embedded store: shown, changed, removed, audited; bad input is exit 2', () =>
  budgetRoundTrip({ GATEWAY_DB: join(dir, 'budget.db') }));

const databaseUrl = serviceUrl('DATABASE_URL', 'tokens budget commands on PostgreSQL');
if (databaseUrl) {
  const schemas = pgSchemas(databaseUrl);
  test('tokens budget: the same round trip on PostgreSQL', () => budgetRoundTrip({ GATEWAY_DB: schemas.url() }));
}
