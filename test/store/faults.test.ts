/**
 * When the store's network fails (docs/deploying.md, "When something fails"): three real gateway replicas
 * over a PostgreSQL cluster of the test's own, reached through a TCP proxy the test can cut and
 * silence, and a Redis of the test's own, under a steady load of task submissions and image
 * requests. The connections are reset ten times, PostgreSQL is stopped (fast, then immediate) and
 * started again, made silent, and Redis is stopped: no replica dies, every answer is 200 or a 503
 * `store_unavailable` with Retry-After (never a 500, never a client left waiting), service comes
 * back within seconds, and at the end every task has ended and every unit of quota is accounted
 * for. Also: `gateway start` against a store that refuses, or accepts and never answers, exits 2
 * within its connect timeout, naming GATEWAY_DB with its password masked.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { postgresBehindProxy, privatePostgresOrSkip } from '../helpers/private-postgres.js';
import { runCli, startCli, type Running } from '../helpers/process.js';
import { privateRedis, type PrivateRedis } from '../helpers/services.js';
import { until } from '../helpers/until.js';

const ALPHA = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const IMAGE = JSON.stringify({
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
});
/** The longest a client of the load waits for an answer: more is a request the gateway left hanging. */
const CLIENT_TIMEOUT_MS = 15_000;
/** Each load worker sends at most one request per this: a steady load, not a flood of fast 503s. */
const PACE_MS = 40;
const WORKERS = 8;
/** Connect timeout of the replicas in this test (the shipped default is 5 s): a silent store is found within about 2 s + this. */
const CONNECT_TIMEOUT_MS = 2_000;

/** One answer the load got. */
interface Outcome {
  readonly phase: string;
  readonly kind: 'task' | 'image' | 'look';
  /** 0: no answer (the connection failed or the client gave up after CLIENT_TIMEOUT_MS). */
  readonly status: number;
  readonly code: string | null;
  readonly retryAfter: string | null;
  readonly via: string;
  /** A task id the client was given. */
  readonly id?: string;
}

if (privatePostgresOrSkip('store faults')) {
  describe('gateway start against a store that is not there', { timeout: 60_000 }, () => {
    const cluster = postgresBehindProxy();

    const start = (url: string) => {
      const started = Date.now();
      const r = runCli(['start'], {
        GATEWAY_DB: url,
        GATEWAY_DB_CONNECT_TIMEOUT_MS: '1500',
        GATEWAY_CONFIG_DIR: PROJECT_ROOT,
        GATEWAY_WATCH: '0',
        PORT: '0',
        HOST: '127.0.0.1',
      });
      return { ...r, ms: Date.now() - started };
    };

    test('a store that accepts connections and never answers: exit 2 within the connect timeout, naming GATEWAY_DB with the password masked', () => {
      cluster.proxy.silence();
      try {
        const r = start(`postgres://postgres:s3cret-pw@127.0.0.1:${cluster.proxy.port}/postgres?schema=gw_silent`);
        assert.equal(r.status, 2, r.stderr);
        assert.match(
          r.stderr,
          /^gateway: GATEWAY_DB=postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres\?schema=gw_silent: the store could not be reached \(.*timeout.*\); connecting waits at most 1500 ms \(GATEWAY_DB_CONNECT_TIMEOUT_MS\)\n$/,
        );
        assert.doesNotMatch(r.stderr + r.stdout, /s3cret-pw/);
        // The process start, the config load and the timeout; nothing near the 30 s runCli allows.
        assert.ok(r.ms < 15_000, `exited after ${r.ms} ms`);
      } finally {
        cluster.proxy.speak();
      }
    });

    test('a store that refuses connections: exit 2 at once, naming GATEWAY_DB and the refusal', async () => {
      await cluster.server.stop('fast');
      try {
        const r = start(`${cluster.server.url}?schema=gw_refused`);
        assert.equal(r.status, 2, r.stderr);
        assert.match(
          r.stderr,
          /^gateway: GATEWAY_DB=postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\?schema=gw_refused: the store could not be reached \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)/,
        );
      } finally {
        await cluster.server.start();
      }
    });
  });

  describe('three replicas while PostgreSQL fails under load', { timeout: 300_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-store-faults-'));
    const adminKey = `admin-${randomBytes(8).toString('hex')}`;
    const running: Running[] = [];
    const replicas: { id: string; proc: Running; base: string }[] = [];
    const outcomes: Outcome[] = [];
    /** Task ids the test itself was given (checking that service is back), beside the load's. */
    const given: string[] = [];
    const cluster = postgresBehindProxy();
    let redis: PrivateRedis;
    const schema = `gw_faults_${randomBytes(3).toString('hex')}`;
    let env: NodeJS.ProcessEnv;
    /** The store as the test reads it: straight to the server, not through the proxy. */
    let direct: Store;
    let key = '';
    let tokenId = '';
    let phase = 'start';
    let loading: Promise<void> | null = null;
    let stopLoad = false;

    before(async () => {
      redis = await privateRedis();
      const sims = startCli(['sims', '--finish-ms', '1000'], { GATEWAY_CONFIG_DIR: PROJECT_ROOT });
      running.push(sims);
      await sims.waitFor(/ready \(SIGINT or SIGTERM stops them\)/);
      const simEnv = Object.fromEntries(
        sims
          .output()
          .split('\n')
          .filter((l) => /^[A-Z][A-Z0-9_]*=/.test(l))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      // Channels of their own with short timeouts and fast polling, so a submission cut off by the
      // store is settled within seconds (docs/deploying.md, "Tasks cut off by a crash"), not minutes.
      mkdirSync(join(dir, 'channels.d'), { recursive: true });
      writeFileSync(
        join(dir, 'channels.d', 'faults.yaml'),
        `version: 1
groups:
  faults:
    description: Tokens of the store-fault test; only its short-timeout channels serve them.
routing: { deadline_ms: 2000, backoff_max_ms: 200 }
channels:
  - name: epsilon-faults
    profile: zeta-openai
    base_url: \${EPSILON_BASE_URL}
    secrets: { key: "\${EPSILON_API_KEY}" }
    groups: [faults]
    models: [epsilon-video-3]
    timeouts: { connect_ms: 1000, headers_ms: 3000, body_ms: 3000 }
    polling: { interval_ms: 500 }
  - name: alpha-faults
    profile: alpha-native
    base_url: \${ALPHA_BASE_URL}
    secrets: { key: "\${ALPHA_API_KEY}" }
    groups: [faults]
    models: [alpha-3-pro-image-preview]
    timeouts: { connect_ms: 1000, headers_ms: 3000, body_ms: 3000 }
`,
      );
      env = {
        ...simEnv,
        GATEWAY_DB: `postgres://postgres@127.0.0.1:${cluster.proxy.port}/postgres?schema=${schema}`,
        GATEWAY_DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        GATEWAY_REDIS: redis.url,
        GATEWAY_CONFIG_DIR: PROJECT_ROOT,
        GATEWAY_CONFIG_EXTRA: dir,
        GATEWAY_WATCH: '0',
        GATEWAY_ADMIN_KEY: adminKey,
        GATEWAY_TASK_LEASE_MS: '1000',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
      };
      const started = await Promise.all(['f1', 'f2', 'f3'].map(async (id) => ({ id, ...(await startGatewayProcess({ ...env, GATEWAY_REPLICA_ID: id })) })));
      for (const r of started) {
        running.push(r.proc);
        replicas.push(r);
      }
      direct = await openStore(`${cluster.server.url}?schema=${schema}`);
      // Through the admin API, not the CLI: a synchronous child would stop this process, and the proxy in it.
      const created = await fetch(`${replicas[0]!.base}/admin/tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ group: 'faults', name: 'faults' }),
      });
      assert.equal(created.status, 201, await created.clone().text());
      const answer = (await created.json()) as { key: string; token: { id: string } };
      key = answer.key;
      tokenId = answer.token.id;
    });
    after(async () => {
      stopLoad = true;
      await loading;
      for (const r of running) await r.stop('SIGKILL');
      await direct?.close();
      await redis?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const bounded = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
    const admin = (base: string, path: string) => bounded(`${base}${path}`, { headers: { authorization: `Bearer ${adminKey}` } });
    const asClient = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

    /** One request of the load, recorded with the phase it was sent in. */
    async function send(kind: Outcome['kind'], via: { id: string; base: string }, ids: string[]): Promise<void> {
      const sentIn = phase;
      const look = kind === 'look' ? ids[Math.floor(Math.random() * ids.length)] : undefined;
      try {
        const res =
          kind === 'image'
            ? await bounded(`${via.base}${ALPHA}`, { method: 'POST', headers: asClient(), body: IMAGE })
            : kind === 'look'
              ? await bounded(`${via.base}/v1/videos/${look}`, { headers: asClient() })
              : await bounded(`${via.base}/v1/videos`, {
                  method: 'POST',
                  headers: asClient(),
                  body: JSON.stringify({ model: 'epsilon-video-3', prompt: `faults ${phase}`, seconds: '4', size: '1280x720' }),
                });
        const body = (await res.json()) as { id?: string; error?: { code?: string }; code?: string };
        const id = kind === 'task' && res.status === 200 ? body.id : undefined;
        if (id) ids.push(id);
        outcomes.push({
          phase: sentIn,
          kind,
          status: res.status,
          code: body.error?.code ?? body.code ?? null,
          retryAfter: res.headers.get('retry-after'),
          via: via.id,
          id,
        });
      } catch (err) {
        outcomes.push({ phase: sentIn, kind, status: 0, code: (err as Error).name, retryAfter: null, via: via.id });
      }
    }

    /** WORKERS clients, each sending a task submission, an image or a look at one of its tasks in turn, round robin over the replicas. */
    function startLoad(): void {
      loading = Promise.all(
        Array.from({ length: WORKERS }, async (_, w) => {
          const ids: string[] = [];
          for (let i = 0; !stopLoad; i++) {
            const kind = i % 4 === 3 ? 'image' : i % 4 === 2 && ids.length > 0 ? 'look' : 'task';
            const next = pause(PACE_MS);
            await send(kind, replicas[(w + i) % replicas.length]!, ids);
            await next;
          }
        }),
      ).then(() => undefined);
    }

    const during = (p: string) => outcomes.filter((o) => o.phase === p);
    const tally = (list: readonly Outcome[]) =>
      list.reduce<Record<string, number>>((m, o) => ((m[`${o.status} ${o.code ?? ''}`.trim()] = (m[`${o.status} ${o.code ?? ''}`.trim()] ?? 0) + 1), m), {});
    /** Every replica process still runs. */
    const allAlive = () => {
      for (const r of replicas) assert.equal(r.proc.child.exitCode ?? r.proc.child.signalCode, null, `${r.id} died:\n${r.proc.output().slice(-3000)}`);
    };
    /** Every answer of the phase was a 200 or a 503 store_unavailable with Retry-After: no 500, no client left without an answer. */
    const onlyServedOrUnavailable = (p: string) => {
      const list = during(p);
      assert.ok(list.length > 0, `load ran during ${p}`);
      const bad = list.filter((o) => !(o.status === 200 || (o.status === 503 && o.code === 'store_unavailable' && o.retryAfter === '2')));
      assert.deepEqual(bad, [], `${p}: ${JSON.stringify(tally(list))}`);
      return tally(list);
    };
    const readyz = async (base: string) => (await bounded(`${base}/readyz`)).status;
    /** Waits until every replica serves again (ready, and a submission answered 200); resolves with how long that took. */
    async function backOnAll(since: number): Promise<number> {
      for (const r of replicas) {
        await until(
          `${r.id} to serve again`,
          async () => {
            if ((await readyz(r.base)) !== 200) return false;
            const res = await bounded(`${r.base}/v1/videos`, {
              method: 'POST',
              headers: asClient(),
              body: JSON.stringify({ model: 'epsilon-video-3', prompt: 'back?', seconds: '4', size: '1280x720' }),
            });
            const id = ((await res.json()) as { id?: string }).id;
            if (res.status === 200 && id) given.push(id);
            return res.status === 200;
          },
          30_000,
        );
      }
      return Date.now() - since;
    }
    /** Waits until every replica says the store is away: /readyz 503 naming it. */
    async function awayOnAll(): Promise<void> {
      for (const r of replicas) {
        await until(
          `${r.id} to find the store away`,
          async () => {
            const res = await bounded(`${r.base}/readyz`);
            const body = (await res.json()) as { store: string };
            return res.status === 503 && body.store === 'unreachable';
          },
          20_000,
        );
      }
    }
    const figures: string[] = [];

    test('the load is served while the store is there', async () => {
      phase = 'baseline';
      startLoad();
      await until('a second of answers', () => during('baseline').length >= 40, 20_000);
      assert.ok(
        during('baseline').every((o) => o.status === 200),
        JSON.stringify(tally(during('baseline'))),
      );
    });

    test('connections reset ten times, 0.5 s apart: no replica dies, every answer is 200 or 503 store_unavailable', async () => {
      phase = 'resets';
      let cut = 0;
      for (let i = 0; i < 10; i++) {
        cut += cluster.proxy.reset();
        await pause(500);
      }
      allAlive();
      const t = onlyServedOrUnavailable('resets');
      figures.push(`resets: ${cut} connections cut; answers ${JSON.stringify(t)}`);
      assert.ok(cut >= 10, `connections were open to be cut (${cut})`);
    });

    for (const mode of ['fast', 'immediate'] as const) {
      test(`PostgreSQL stopped (${mode}) and started again: 503 store_unavailable meanwhile, /readyz 503, one log line each way, service back within seconds`, async () => {
        // The resets before may have left a replica counting the store away (its guard asks again
        // each second): the stop below is one outage only once every replica has said it is back.
        for (const r of replicas)
          await until(
            `${r.id} to count the store up before it stops`,
            async () =>
              /^gateway_store_up 1$/m.test(await (await admin(r.base, '/metrics')).text()) &&
              count(r.proc.output(), 'store unreachable') === count(r.proc.output(), 'store reachable again'),
            10_000,
          );
        phase = `stop-${mode}`;
        const downLines = replicas.map((r) => count(r.proc.output(), 'store unreachable'));
        await cluster.server.stop(mode);
        await awayOnAll();
        await until(
          '503 store_unavailable answered on every replica',
          () => replicas.every((r) => during(phase).some((o) => o.via === r.id && o.code === 'store_unavailable')),
          10_000,
        );
        for (const r of replicas) assert.match(await (await admin(r.base, '/metrics')).text(), /^gateway_store_up 0$/m);
        // A key looked up before the outage still lists the models: that needs no store.
        const models = await bounded(`${replicas[0]!.base}/v1/models`, { headers: asClient() });
        assert.equal(models.status, 200, await models.text());
        phase = `restart-${mode}`;
        const restarted = Date.now();
        await cluster.server.start();
        const ms = await backOnAll(restarted);
        figures.push(`stop ${mode}: back on all replicas ${ms} ms after the server accepted connections again`);
        assert.ok(ms < 10_000, `back after ${ms} ms`);
        allAlive();
        onlyServedOrUnavailable(`stop-${mode}`);
        onlyServedOrUnavailable(`restart-${mode}`);
        for (const [i, r] of replicas.entries()) {
          // The line that it is back is an info line: written with the next batch, within 100 ms (src/log.ts).
          await until(
            `${r.id}: one line when it came back`,
            () => count(r.proc.output(), 'store unreachable') === count(r.proc.output(), 'store reachable again'),
            5_000,
          );
          const out = r.proc.output();
          assert.equal(count(out, 'store unreachable') - downLines[i]!, 1, `${r.id}: one line when the store went`);
          assert.equal(count(out, 'store unreachable'), count(out, 'store reachable again'), `${r.id}: one line when it came back`);
          assert.match(await (await admin(r.base, '/metrics')).text(), /^gateway_store_up 1$/m);
        }
      });
    }

    test('PostgreSQL silent (accepts, never answers): 503 store_unavailable within seconds, no client left waiting; service back once it speaks', async () => {
      phase = 'silent';
      const silencedAt = Date.now();
      cluster.proxy.silence();
      try {
        await awayOnAll();
        await until(
          '503 store_unavailable answered on every replica',
          () => replicas.every((r) => during('silent').some((o) => o.via === r.id && o.code === 'store_unavailable')),
          15_000,
        );
        figures.push(`silent: every replica answering 503 store_unavailable ${Date.now() - silencedAt} ms after the store went silent`);
      } finally {
        phase = 'speaks';
        cluster.proxy.speak();
      }
      const ms = await backOnAll(Date.now());
      figures.push(`silent: back on all replicas ${ms} ms after the store spoke again`);
      assert.ok(ms < 10_000, `back after ${ms} ms`);
      allAlive();
      onlyServedOrUnavailable('silent');
      onlyServedOrUnavailable('speaks');
    });

    test('Redis stopped and started under the same load: every answer is 200', async () => {
      phase = 'redis-away';
      await redis.stop();
      for (const r of replicas)
        await until(`${r.id} to see Redis gone`, async () => /^gateway_redis_up 0$/m.test(await (await admin(r.base, '/metrics')).text()));
      const from = outcomes.length;
      await until('a second of answers without Redis', () => outcomes.length - from >= 40, 20_000);
      await redis.start();
      for (const r of replicas)
        await until(`${r.id} to reconnect to Redis`, async () => /^gateway_redis_up 1$/m.test(await (await admin(r.base, '/metrics')).text()), 20_000);
      phase = 'end';
      allAlive();
      const list = during('redis-away');
      assert.ok(
        list.every((o) => o.status === 200),
        JSON.stringify(tally(list)),
      );
    });

    test('nothing lost: every task ends, each id a client got completes charged once, every hold ends, and the ledger balances', async () => {
      stopLoad = true;
      await loading;
      allAlive();
      assert.deepEqual(
        outcomes.filter((o) => o.status === 0 || (o.status >= 500 && o.code !== 'store_unavailable')),
        [],
        'no 5xx but store_unavailable, no client left waiting',
      );
      // Submissions cut off by the store are settled as after a crash: within the cut-off time of the
      // short channels here (about 15 s), by whichever replica claims them.
      const tasks = await until(
        'every task of the token to end',
        async () => {
          const all = await direct.findTasks({ tokenId, before: null, limit: 5000 });
          return all.every((t) => t.status === 'completed' || t.status === 'failed') ? all : null;
        },
        60_000,
      );
      const visible = new Set([...outcomes.flatMap((o) => (o.id ? [o.id] : [])), ...given]);
      const byId = new Map(tasks.map((t) => [t.id, t]));
      for (const id of visible) assert.equal(byId.get(id)?.status, 'completed', `task ${id} a client was given completed`);
      // The holds of image requests cut off by the store go back once they expire: the replicas'
      // sweep runs every minute, so the test runs the same sweep itself.
      await until(
        'every hold to end',
        async () => {
          await direct.expireHolds(Date.now(), 1000);
          return (await holdsOf(tokenId)) === 0;
        },
        60_000,
      );
      const rows = await direct.ledger(tokenId, null, 100_000);
      const net = new Map<string, number>();
      for (const r of rows) net.set(r.ref, (net.get(r.ref) ?? 0) + (r.kind === 'debit' ? 1 : r.kind === 'refund' ? -1 : 0));
      for (const [ref, n] of net) assert.ok(n === 0 || n === 1, `${ref} charged at most once (net ${n})`);
      for (const t of tasks)
        assert.equal(net.get(t.id), t.status === 'completed' ? 1 : 0, `task ${t.id} (${t.status}) charged once if completed, refunded if failed`);
      const balance = (await direct.ledgerBalance(tokenId))!;
      assert.equal(balance.debit - balance.refund - balance.settle, balance.used, 'the ledger balances');
      const cutOff = tasks.filter((t) => !visible.has(t.id));
      figures.push(
        `books: ${tasks.length} tasks (${visible.size} given to clients, all completed; of the others, cut off by the store: ${cutOff.filter((t) => t.status === 'failed').length} failed and refunded, ${cutOff.filter((t) => t.status === 'completed').length} completed and charged), ${net.size} refs in ${rows.length} ledger rows, used ${balance.used}, no hold left`,
      );
      figures.push(`all answers: ${JSON.stringify(tally(outcomes))}`);
      console.log(figures.map((f) => `# ${f}`).join('\n'));
    });

    /** Holds of a token still in the store (the table itself: no store call lists them). */
    async function holdsOf(token: string): Promise<number> {
      const client = new pg.Client({ connectionString: cluster.server.url, options: `-c search_path=${schema}` });
      await client.connect();
      try {
        return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM holds WHERE token_id = $1', [token])).rows[0]!.n;
      } finally {
        await client.end();
      }
    }
  });
}

/** How many log lines of a process output carry this message. */
function count(output: string, msgStart: string): number {
  return output.split('\n').filter((l) => l.includes(`"msg":"${msgStart}`)).length;
}
