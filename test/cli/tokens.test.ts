/**
 * `gateway tokens …` as operators run it: real processes on a store file (and on PostgreSQL when
 * DATABASE_URL is set). Apart from test/cli/cli.test.ts because every command here loads the store
 * and the config: together they would pass the runner's two minutes per file on a loaded machine.
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

const dir = mkdtempSync(join(tmpdir(), 'gw-cli-tokens-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('tokens create: --flag=value and --flag value are the same; list --json shows what was stored', () => {
  const env = { GATEWAY_DB: join(dir, 'equals.db') };
  const joined = runCli(['tokens', 'create', '--group=default', '--quota=5', '--name=x', '--models=m1,m2'], env);
  assert.equal(joined.status, 0, joined.stderr);
  assert.match(joined.stderr, /\(x, group default, quota 5\)/);
  const spaced = runCli(['tokens', 'create', '--group', 'default', '--quota', '5', '--name', 'y', '--models', 'm1,m2'], env);
  assert.equal(spaced.status, 0, spaced.stderr);
  const listed = runCli(['tokens', 'list', '--json'], env);
  assert.equal(listed.status, 0, listed.stderr);
  const tokens = JSON.parse(listed.stdout) as TokenView[];
  assert.deepEqual(
    tokens.map(({ name, group, quota, models, used, disabled }) => ({ name, group, quota, models, used, disabled })),
    ['x', 'y'].map((name) => ({ name, group: 'default', quota: 5, models: ['m1', 'm2'], used: 0, disabled: false })),
  );
  for (const key of [joined.stdout.trim(), spaced.stdout.trim()]) assert.ok(!listed.stdout.includes(key.slice(3)), 'no key in the list');
  assert.ok(!/key_hash|keyHash|[0-9a-f]{64}/i.test(listed.stdout), 'nor its hash');
});

test('tokens create --rpm --max-parallel: stored on the token; a bad value, or set-limits naming no limit, is a usage error (exit 2)', () => {
  const env = { GATEWAY_DB: join(dir, 'limits.db') };
  const created = runCli(['tokens', 'create', '--group', 'default', '--name', 'lim', '--rpm', '120', '--max-parallel', '2'], env);
  assert.equal(created.status, 0, created.stderr);
  const [token] = JSON.parse(runCli(['tokens', 'list', '--json'], env).stdout) as TokenView[];
  assert.deepEqual([token!.rpm_limit, token!.max_parallel], [120, 2]);
  for (const [args, said] of [
    [['create', '--group', 'default', '--rpm', '0'], /--rpm takes a whole number from 1 to 1000000, not '0'/],
    [['create', '--group', 'default', '--max-parallel', 'unlimited'], /--max-parallel takes a whole number from 1 to 1000000, not 'unlimited'/],
    [['set-limits', token!.id], /name a limit to set: --rpm, --max-parallel, or both/],
    [['set-limits', token!.id, '--rpm', '-5'], /--rpm/],
  ] as [string[], RegExp][]) {
    const r = runCli(['tokens', ...args], env);
    assert.equal(r.status, 2, `tokens ${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, said);
  }
  const [after] = JSON.parse(runCli(['tokens', 'list', '--json'], env).stdout) as TokenView[];
  assert.deepEqual([after!.rpm_limit, after!.max_parallel], [120, 2], 'nothing changed');
});

test('tokens create --expires 1h, list shows it, set-expiry never removes it; a bad or past time is a usage error (exit 2)', () => {
  const env = { GATEWAY_DB: join(dir, 'expiry.db') };
  const before = Date.now();
  const created = runCli(['tokens', 'create', '--group', 'default', '--name', 'exp', '--expires', '1h'], env);
  assert.equal(created.status, 0, created.stderr);
  const after = Date.now();
  const [token] = JSON.parse(runCli(['tokens', 'list', '--json'], env).stdout) as TokenView[];
  const at = Date.parse(token!.expires_at ?? '');
  assert.ok(at >= before + 3_600_000 && at <= after + 3_600_000, `an hour from when it ran: ${token!.expires_at}`);
  assert.match(runCli(['tokens', 'list'], env).stdout, new RegExp(`^${token!.id} {2}exp .* expires=${token!.expires_at!.replace(/\./g, '\\.')}\n$`));
  for (const [args, said] of [
    [['create', '--group', 'default', '--expires', '2020-01-01T00:00:00Z'], /--expires must be in the future/],
    [['create', '--group', 'default', '--expires', '2099-01-01T00:00:00'], /--expires takes an ISO 8601 time with a zone .* not '2099-01-01T00:00:00'/],
    [['set-expiry', token!.id, 'soon'], /the expiry takes an ISO 8601 time with a zone/],
    [['set-expiry', token!.id], /usage: gateway tokens set-expiry <token> <T\|never>/],
  ] as [string[], RegExp][]) {
    const r = runCli(['tokens', ...args], env);
    assert.equal(r.status, 2, `tokens ${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, said);
  }
  const never = runCli(['tokens', 'set-expiry', token!.id, 'never'], env);
  assert.equal(never.status, 0, never.stderr);
  assert.ok(!never.stdout.includes('expires='), never.stdout);
  const listed = JSON.parse(runCli(['tokens', 'list', '--json'], env).stdout) as TokenView[];
  assert.deepEqual(
    listed.map((t) => t.expires_at),
    [null],
    'no expiry now, and the refused creations created nothing',
  );
});

/** The round trip of every tokens command on one store; each command is a real process. */
async function tokensRoundTrip(env: NodeJS.ProcessEnv): Promise<void> {
  const created = runCli(['tokens', 'create', '--group', 'default', '--name', 'trip'], env);
  assert.equal(created.status, 0, created.stderr);
  const [token] = JSON.parse(runCli(['tokens', 'list', '--json'], env).stdout) as TokenView[];
  assert.equal(token!.name, 'trip');
  const id = token!.id;
  const line = (args: string[]) => {
    const r = runCli(args, env);
    assert.equal(r.status, 0, `gateway ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  assert.match(line(['tokens', 'set-quota', id, '7']), /trip {2}group=default {2}quota=7 {2}used=0\n$/);
  assert.match(line(['tokens', 'disable', id]), /quota=7 {2}used=0 {2}disabled\n$/);
  assert.match(line(['tokens', 'enable', id]), /quota=7 {2}used=0\n$/);
  assert.match(line(['tokens', 'set-quota', id, 'unlimited']), /quota=unlimited/);
  assert.match(line(['tokens', 'set-limits', id, '--rpm', '60', '--max-parallel', '3']), /used=0 {2}rpm=60 {2}max_parallel=3\n$/);
  assert.match(line(['tokens', 'set-limits', id, '--max-parallel', 'unlimited']), /used=0 {2}rpm=60\n$/, 'a limit not named stays');
  const [limited] = JSON.parse(line(['tokens', 'list', '--json'])) as TokenView[];
  assert.deepEqual([limited!.rpm_limit, limited!.max_parallel], [60, null]);
  assert.match(line(['tokens', 'set-expiry', id, '2099-01-31T02:30:00+02:00']), /rpm=60 {2}expires=2099-01-31T00:30:00\.000Z\n$/);
  for (const args of [
    ['disable', 'no-such-token'],
    ['enable', 'no-such-token'],
    ['set-quota', 'no-such-token', '1'],
    ['set-limits', 'no-such-token', '--rpm', '1'],
    ['set-expiry', 'no-such-token', 'never'],
    ['delete', 'no-such-token'],
  ]) {
    const r = runCli(['tokens', ...args], env);
    assert.equal(r.status, 1, `tokens ${args.join(' ')}`);
    assert.equal(r.stderr, 'gateway: no token named "no-such-token"\n');
  }

  // A token with a task still running is not deleted: the task's refund or settlement needs it.
  const store = await openStore(env.GATEWAY_DB!);
  try {
    await store.createTask({
      id: 'task_cli',
      tokenId: id,
      kind: 'video',
      route: 'r',
      model: 'm',
      upstreamModel: 'm',
      channel: 'c',
      price: 1,
      createdAt: 1,
      deadlineAt: 2,
    });
    const busy = runCli(['tokens', 'delete', id], env);
    assert.equal(busy.status, 1);
    assert.match(busy.stderr, /still has 1 unfinished task\(s\), whose refund or settlement needs it; disable it now, and delete it once they have ended/);
    assert.ok(await store.getToken(id));
    await store.updateTask('task_cli', 1, { status: 'completed' });
  } finally {
    await store.close();
  }
  assert.match(line(['tokens', 'delete', id]), new RegExp(`^deleted ${id} {2}trip`));
  assert.equal(line(['tokens', 'list']), '');

  // Every change the commands made is in the audit log, by `cli`, with the token before and after
  // (never its key hash); the refused ones (unknown id, busy) changed nothing and are not.
  const audit = await openStore(env.GATEWAY_DB!);
  try {
    const records = await audit.findAudit({ target: id, before: null, limit: 50 });
    assert.deepEqual(records.map((r) => r.action).reverse(), [
      'token.create',
      'token.quota',
      'token.disable',
      'token.enable',
      'token.quota',
      'token.limits',
      'token.limits',
      'token.expiry',
      'token.delete',
    ]);
    assert.ok(records.every((r) => r.actor === 'cli'));
    const quota = records.filter((r) => r.action === 'token.quota').reverse();
    assert.deepEqual(
      quota.map((r) => [(r.before as TokenView).quota, (r.after as TokenView).quota]),
      [
        [null, 7],
        [7, null],
      ],
    );
    const expiry = records.find((r) => r.action === 'token.expiry');
    assert.ok(expiry, 'the change of expiry is audited');
    assert.deepEqual([(expiry.before as TokenView).expires_at, (expiry.after as TokenView).expires_at], [null, '2099-01-31T00:30:00.000Z']);
    assert.ok(!/key_hash|keyHash|gw-|[0-9a-f]{64}/.test(JSON.stringify(records)), 'no key nor key hash');
  } finally {
    await audit.close();
  }
}

test('tokens: set-quota, disable, enable and delete by id on the embedded store; an unknown id is exit 1', () =>
  tokensRoundTrip({ GATEWAY_DB: join(dir, 'trip.db') }));

const databaseUrl = serviceUrl('DATABASE_URL', 'tokens commands on PostgreSQL');
if (databaseUrl) {
  const schemas = pgSchemas(databaseUrl);
  test('tokens: the same round trip on PostgreSQL (GATEWAY_DB=postgres://…)', () => tokensRoundTrip({ GATEWAY_DB: schemas.url() }));
}
