/**
 * Three real gateway processes over one PostgreSQL schema (DATABASE_URL) and one Redis (a
 * redis-server of the test's own, so the test can stop it), in front of one `gateway sims`
 * process: limits held across replicas, a token disabled on one refused by all, a reload asked
 * of all, one quota spent exactly, Redis going away without a client noticing, and a replica
 * killed mid-burst whose tasks the others finish.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { listen } from '../../src/sim/http.js';
import { openStore } from '../../src/store/open-store.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli, startCli, type Running } from '../helpers/process.js';
import { pgSchemas, privateRedis, serviceUrl, type PrivateRedis } from '../helpers/services.js';
import { until } from '../helpers/until.js';

const ALPHA = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const image = (text: string) => ({
  contents: [{ role: 'user', parts: [{ text }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
});
/** fetch with a bound: no request may hang the test. */
const http = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });

const databaseUrl = serviceUrl('DATABASE_URL', 'several replicas over PostgreSQL and Redis');
if (databaseUrl) {
  describe('three gateway replicas over one PostgreSQL and one Redis', { timeout: 240_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-replicas-'));
    const extra = join(dir, 'extra');
    const storeUrl = pgSchemas(databaseUrl).url();
    const adminKey = `admin-${randomBytes(8).toString('hex')}`;
    const running: Running[] = [];
    const replicas: { id: string; proc: Running; base: string }[] = [];
    let sims: Running;
    let redis: PrivateRedis;
    let env: NodeJS.ProcessEnv;
    // The gated channel's vendor: holds every call until the test opens it, then answers for the alpha simulator.
    let gate: { url: string; close(): Promise<void> };
    let arrived = 0;
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));

    before(async () => {
      sims = startCli(['sims', '--finish-ms', '300'], { GATEWAY_CONFIG_DIR: PROJECT_ROOT });
      running.push(sims);
      await sims.waitFor(/ready \(SIGINT or SIGTERM stops them\)/);
      const simEnv = Object.fromEntries(
        sims
          .output()
          .split('\n')
          .filter((l) => /^[A-Z][A-Z0-9_]*=/.test(l))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      gate = await listen(async (req, res, body, url) => {
        arrived++;
        await opened;
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k))) as Record<
          string,
          string
        >;
        const answer = await fetch(`${simEnv.ALPHA_BASE_URL}${url.pathname}${url.search}`, { method: req.method, headers, body });
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
      mkdirSync(join(extra, 'channels.d'), { recursive: true });
      writeFileSync(
        join(extra, 'channels.d', 'gated.yaml'),
        `version: 1
groups:
  gated:
    description: Tokens of the saturation test; only the gated channel serves them.
channels:
  - name: alpha-gated
    profile: alpha-native
    base_url: ${gate.url}
    secrets: { key: "${simEnv.ALPHA_API_KEY}" }
    groups: [gated]
    models: [alpha-3-pro-image-preview]
    max_concurrency: 2
    queue: { max_waiting: 0 }
`,
      );
      redis = await privateRedis();
      env = {
        ...simEnv,
        GATEWAY_DB: storeUrl,
        GATEWAY_REDIS: redis.url,
        GATEWAY_CONFIG_DIR: PROJECT_ROOT,
        GATEWAY_CONFIG_EXTRA: extra,
        GATEWAY_WATCH: '0',
        GATEWAY_ADMIN_KEY: adminKey,
        GATEWAY_TASK_LEASE_MS: '1000',
        // A key's lookup is trusted for ten minutes: only the broadcast can make another replica refuse it sooner.
        GATEWAY_AUTH_CACHE_MS: '600000',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
      };
      const started = await Promise.all(['r1', 'r2', 'r3'].map(async (id) => ({ id, ...(await startGatewayProcess({ ...env, GATEWAY_REPLICA_ID: id })) })));
      for (const r of started) {
        running.push(r.proc);
        replicas.push(r);
      }
    });
    after(async () => {
      open();
      for (const r of running) await r.stop('SIGKILL');
      await redis?.stop();
      await gate?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const token = (args: string[]) => {
      const created = runCli(['tokens', 'create', ...args], env);
      assert.equal(created.status, 0, created.stderr);
      const id = /created token (\S+)/.exec(created.stderr)![1]!;
      return { key: created.stdout.trim(), id };
    };
    const admin = (base: string, path: string, method = 'GET') => http(`${base}${path}`, { method, headers: { authorization: `Bearer ${adminKey}` } });
    const generate = (base: string, key: string, text = 'a lighthouse') =>
      http(`${base}${ALPHA}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(image(text)),
      });
    const submit = (base: string, key: string, prompt: string) =>
      http(`${base}/v1/videos`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'epsilon-video-3', prompt, seconds: '4', size: '1280x720' }),
      });
    /** The token's ledger read from the shared store: used, balance, and the refs of its rows by kind. */
    async function books(tokenId: string) {
      const store = await openStore(storeUrl);
      try {
        const balance = (await store.ledgerBalance(tokenId))!;
        const rows = await store.ledger(tokenId, null, 1000);
        const refs = (kind: string) => rows.filter((r) => r.kind === kind).map((r) => r.ref);
        return { balance, debits: refs('debit'), refunds: refs('refund') };
      } finally {
        await store.close();
      }
    }

    test('max_concurrency 2 holds across the replicas: two calls reach the vendor, the rest are refused 429 (no queue)', async () => {
      const { key } = token(['--group', 'gated']);
      const answers: Response[] = [];
      const all = replicas.flatMap((r) => [0, 1].map(() => generate(r.base, key).then((res) => (answers.push(res), res))));
      await until('two calls at the vendor and four refusals', () => arrived >= 2 && answers.length >= 4, 20_000);
      assert.equal(arrived, 2, 'exactly max_concurrency calls reached the vendor');
      for (const res of answers) assert.equal(res.status, 429, await res.clone().text());
      open();
      const done = await Promise.all(all);
      assert.deepEqual(done.map((r) => r.status).sort(), [200, 200, 429, 429, 429, 429]);
    });

    test('a token disabled on one replica is refused by the others at once; enabled, it works again', async () => {
      const { key, id } = token(['--group', 'default']);
      for (const r of replicas) assert.equal((await generate(r.base, key)).status, 200, `${r.id} serves (and caches) the key`);
      const disabled = await admin(replicas[0]!.base, `/admin/tokens/${id}/disable`, 'POST');
      assert.equal(disabled.status, 200);
      assert.equal(((await disabled.json()) as { disabled: boolean }).disabled, true);
      for (const r of replicas) await until(`${r.id} to refuse the disabled token`, async () => (await generate(r.base, key)).status === 401, 5_000);
      assert.equal((await admin(replicas[1]!.base, `/admin/tokens/${id}/enable`, 'POST')).status, 200);
      for (const r of replicas) await until(`${r.id} to accept it again`, async () => (await generate(r.base, key)).status === 200, 5_000);
      assert.equal((await admin(replicas[1]!.base, '/admin/tokens/no-such-token/disable', 'POST')).status, 404);
    });

    test('POST /admin/reload on one replica reloads all; GET /admin/config shows every replica and its version', async () => {
      const before = (await (await admin(replicas[2]!.base, '/admin/config')).json()) as { version: string; replicas: { replica: string; version: string }[] };
      assert.deepEqual(
        before.replicas.map((r) => r.replica),
        ['r1', 'r2', 'r3'],
      );
      assert.ok(
        before.replicas.every((r) => r.version === before.version),
        'one version everywhere',
      );
      writeFileSync(join(extra, 'channels.d', 'note.yaml'), 'version: 1\ngroups:\n  noted:\n    description: Added to change the version.\n');
      const reload = await admin(replicas[0]!.base, '/admin/reload', 'POST');
      const answer = (await reload.json()) as { ok: boolean; version: string; replicas_told: boolean };
      assert.equal(reload.status, 200, JSON.stringify(answer));
      assert.equal(answer.replicas_told, true);
      assert.notEqual(answer.version, before.version);
      const seen = await until('every replica to serve the new version', async () => {
        const c = (await (await admin(replicas[2]!.base, '/admin/config')).json()) as { version: string; replicas: { replica: string; version: string }[] };
        return c.version === answer.version && c.replicas.length === 3 && c.replicas.every((r) => r.version === answer.version) ? c : null;
      });
      assert.equal(seen.replicas.length, 3);
    });

    test('1,000 concurrent submissions over the three replicas against a quota of 100: exactly 100 tasks, one debit each', async () => {
      const { key, id } = token(['--group', 'default', '--quota', '100']);
      const statuses = await Promise.all(
        Array.from({ length: 1000 }, async (_, i) => {
          const res = await submit(replicas[i % 3]!.base, key, `quota burst ${i}`);
          const body = (await res.json()) as { id?: string; error?: { code?: string } };
          return res.status === 200 ? 'ok' : `${res.status} ${body.error?.code}`;
        }),
      );
      const counts = statuses.reduce<Record<string, number>>((m, s) => ((m[s] = (m[s] ?? 0) + 1), m), {});
      assert.deepEqual(counts, { ok: 100, '402 insufficient_user_quota': 900 });
      const { balance, debits } = await books(id);
      assert.equal(balance.used, 100);
      assert.equal(debits.length, 100);
      assert.equal(new Set(debits).size, 100, 'one debit per task');
    });

    test('Redis stopped mid-run: every replica keeps serving with per-process limits and says so; back, they share again', async () => {
      const { key } = token(['--group', 'default']);
      await redis.stop();
      for (const r of replicas) {
        await until(`${r.id} to see Redis gone`, async () => /^gateway_redis_up 0$/m.test(await (await admin(r.base, '/metrics')).text()));
        assert.equal((await generate(r.base, key)).status, 200, `${r.id} serves without Redis`);
        assert.equal((await admin(r.base, '/admin/config')).status, 200, `${r.id} reports its config without Redis`);
      }
      const warned = replicas[0]!.proc.output();
      assert.match(warned, /"msg":"Redis unreachable: limits, breakers and reloads are per process until it is back"/);
      await redis.start();
      for (const r of replicas)
        await until(`${r.id} to reconnect`, async () => /^gateway_redis_up 1$/m.test(await (await admin(r.base, '/metrics')).text()), 20_000);
    });

    test('a replica killed mid-burst: every task a client was answered ends completed through the others, charged once', async () => {
      const { key, id } = token(['--group', 'default']);
      const victim = replicas[2]!;
      let victimAnswered = 0;
      let killed: Promise<number | null> | null = null;
      const visible: { id: string; via: string }[] = [];
      await Promise.all(
        Array.from({ length: 60 }, async (_, i) => {
          const r = replicas[i % 3]!;
          try {
            const res = await submit(r.base, key, `kill burst ${i} [sim:finish=3000]`);
            if (res.status !== 200) return;
            visible.push({ id: ((await res.json()) as { id: string }).id, via: r.id });
            // Mid-burst: once a few of its answers are out, the victim dies with the rest in flight.
            if (r === victim && ++victimAnswered === 5) killed = victim.proc.stop('SIGKILL');
          } catch {
            // A request the killed replica never answered: the client holds no id for it.
          }
        }),
      );
      await killed;
      assert.equal(victim.proc.child.signalCode, 'SIGKILL');
      assert.ok(visible.filter((v) => v.via === 'r3').length >= 5, 'the victim answered some before it died');
      // The survivors' pollers alone end them (no client asks meanwhile): the victim's leases run
      // out (1 s here) and the others claim its tasks.
      const ids = visible.map((v) => v.id);
      const ended = await until(
        'every visible task to end',
        async () => {
          const store = await openStore(storeUrl);
          try {
            const tasks = await store.getTasks(ids);
            return tasks.length === ids.length && tasks.every((t) => t.status === 'completed' || t.status === 'failed') ? tasks : null;
          } finally {
            await store.close();
          }
        },
        60_000,
      );
      assert.deepEqual(
        ended.filter((t) => t.status !== 'completed').map((t) => t.id),
        [],
        'all completed',
      );
      const asked = await http(`${replicas[0]!.base}/v1/videos/${visible.find((v) => v.via === 'r3')!.id}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(((await asked.json()) as { status: string }).status, 'completed', "a survivor answers for the victim's task");
      const { balance, debits, refunds } = await books(id);
      assert.equal(balance.debit - balance.refund - balance.settle, balance.used, 'the ledger balances');
      assert.equal(new Set(debits).size, debits.length, 'no task debited twice');
      for (const v of visible) assert.ok(debits.includes(v.id), `task ${v.id} was debited`);
      assert.equal(refunds.filter((r) => visible.some((v) => v.id === r)).length, 0, 'no completed task refunded');
    });
  });
}
