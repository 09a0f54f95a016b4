/**
 * A rotation with no grace and a change of a token's IP allow-list take effect on every one of
 * three real gateway processes at once, over one PostgreSQL schema (DATABASE_URL) and one Redis
 * (REDIS_URL). The replicas cache lookups for 10 minutes (GATEWAY_AUTH_CACHE_MS), so only the
 * replicas being told through Redis can explain it (docs/tokens-and-quota.md, "Names and rotation").
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli, type Running } from '../helpers/process.js';
import { pgSchemas, redisPrefixes, serviceUrl } from '../helpers/services.js';
import { until } from '../helpers/until.js';

/** fetch with a bound: no request may hang the test. */
const http = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
/** Far past the test's bounds: a replica that forgets a lookup was told to. */
const AUTH_CACHE_MS = '600000';
/** How long a replica may take to hear what Redis carried. */
const TOLD_WITHIN_MS = 5_000;

const databaseUrl = serviceUrl('DATABASE_URL', 'rotation and allow-lists across replicas over PostgreSQL and Redis');
const redisUrl = databaseUrl ? serviceUrl('REDIS_URL', 'rotation and allow-lists across replicas over PostgreSQL and Redis') : null;
if (databaseUrl && redisUrl) {
  describe('rotation and allow-lists across three replicas', { timeout: 180_000 }, () => {
    const storeUrl = pgSchemas(databaseUrl).url();
    const prefix = redisPrefixes(redisUrl).next();
    const adminKey = `admin-${randomBytes(8).toString('hex')}`;
    const running: Running[] = [];
    const bases: string[] = [];
    let env: NodeJS.ProcessEnv;

    before(async () => {
      env = {
        GATEWAY_DB: storeUrl,
        GATEWAY_REDIS: redisUrl,
        GATEWAY_REDIS_PREFIX: prefix,
        GATEWAY_AUTH_CACHE_MS: AUTH_CACHE_MS,
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
    });

    const status = async (base: string, key: string) => {
      const r = await http(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      await r.arrayBuffer();
      return r.status;
    };
    const everywhere = (key: string) => Promise.all(bases.map((b) => status(b, key)));
    const admin = async (base: string, path: string, body: unknown) => {
      const r = await http(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await r.json()) as Record<string, unknown>;
      assert.equal(r.status, 200, JSON.stringify(json));
      return json;
    };
    const create = (name: string) => {
      const created = runCli(['tokens', 'create', '--group', 'default', '--name', name], env);
      assert.equal(created.status, 0, created.stderr);
      return created.stdout.trim();
    };
    /** Polls until every replica answers `key` with `expected`; the bound is far below the replicas' cache time. */
    const settles = (what: string, key: string, expected: number) =>
      until(what, async () => (await everywhere(key)).every((s) => s === expected), TOLD_WITHIN_MS);

    test('rotate with no grace through one replica: the old key stops on all three, the new one works on all three', async () => {
      const old = create('rotated');
      assert.deepEqual(await everywhere(old), [200, 200, 200], 'each replica has the old key cached');
      const { key } = (await admin(bases[0]!, '/admin/tokens/rotated/rotate', { grace_seconds: 0 })) as { key: string };
      assert.equal(await status(bases[0]!, old), 401, 'at once on the replica that rotated');
      await settles('the old key refused on every replica', old, 401);
      assert.deepEqual(await everywhere(key), [200, 200, 200]);
      // The same through the CLI, a process that is no replica: it tells them through Redis too.
      const cli = runCli(['tokens', 'rotate', 'rotated'], env);
      assert.equal(cli.status, 0, cli.stderr);
      assert.match(cli.stderr, /the replicas were told through Redis/);
      await settles('the second key refused on every replica', key, 401);
      assert.deepEqual(await everywhere(cli.stdout.trim()), [200, 200, 200]);
    });

    test('an allow-list set through one replica refuses this address on all three; removed, the key works on all three', async () => {
      const key = create('fenced');
      assert.deepEqual(await everywhere(key), [200, 200, 200], 'each replica has the key cached');
      await admin(bases[1]!, '/admin/tokens/fenced/allowed-ips', { allowed_ips: ['203.0.113.0/24'] });
      await settles('the address refused on every replica', key, 403);
      await admin(bases[2]!, '/admin/tokens/fenced/allowed-ips', { allowed_ips: null });
      await settles('the key served on every replica again', key, 200);
    });
  });
}
