/**
 * Webhooks across three real gateway processes over one PostgreSQL schema (DATABASE_URL): the
 * tasks' events are delivered by whichever replica leases them, a replica SIGKILLed mid-run loses
 * none (its tasks and its leased deliveries are taken over), and the receiver, killed and brought
 * back on its port meanwhile, ends with every event once per webhook-id, each signature verified
 * with the standardwebhooks package.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Simulator } from '../../src/sim/http.js';
import { openStore } from '../../src/store/open-store.js';
import { simulatorsFor, startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli, type Running } from '../helpers/process.js';
import { pgSchemas, serviceUrl } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const http = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });

const databaseUrl = serviceUrl('DATABASE_URL', 'webhooks across replicas over PostgreSQL');
if (databaseUrl) {
  describe('webhooks across three replicas over one PostgreSQL', { timeout: 180_000 }, () => {
    const storeUrl = pgSchemas(databaseUrl).url();
    const adminKey = `admin-${randomBytes(8).toString('hex')}`;
    const sims = new Map<string, Simulator>();
    const replicas: { id: string; proc: Running; base: string }[] = [];
    const receiver = new WebhookReceiver('/replicas');
    let env: NodeJS.ProcessEnv;

    before(async () => {
      await receiver.start();
      env = {
        ...(await simulatorsFor(sims, { finishMs: 1500 })),
        GATEWAY_DB: storeUrl,
        GATEWAY_CONFIG_DIR: PROJECT_ROOT,
        GATEWAY_WATCH: '0',
        GATEWAY_ADMIN_KEY: adminKey,
        GATEWAY_TASK_LEASE_MS: '1000',
        GATEWAY_WEBHOOK_ALLOW_PRIVATE: '1',
        GATEWAY_WEBHOOK_POLL_MS: '50',
        GATEWAY_WEBHOOK_RETRY_BASE_MS: '100',
        GATEWAY_WEBHOOK_RETRY_MAX_MS: '500',
        // A delivery leased by a replica that dies is free again 2 × 1 s + 5 s later.
        GATEWAY_WEBHOOK_TIMEOUT_MS: '1000',
        HOST: '127.0.0.1',
        PORT: '0',
        // `webhook delivered` lines say which replica sent what.
        LOG_LEVEL: 'debug',
      };
      for (const id of ['r1', 'r2', 'r3']) replicas.push({ id, ...(await startGatewayProcess({ ...env, GATEWAY_REPLICA_ID: id })) });
    });
    after(async () => {
      for (const r of replicas) await r.proc.stop('SIGKILL');
      await receiver.stop();
      await Promise.all([...sims.values()].map((s) => s.close()));
    });

    test('a replica SIGKILLed and the receiver killed and brought back mid-run: every task event delivered, none twice per webhook-id', async () => {
      const created = runCli(['tokens', 'create', '--group', 'default'], env);
      assert.equal(created.status, 0, created.stderr);
      const key = created.stdout.trim();
      const tokenId = /created token (\S+)/.exec(created.stderr)![1]!;
      const [r1, , r3] = replicas as [(typeof replicas)[0], (typeof replicas)[0], (typeof replicas)[0]];
      const made = await http(`${r1.base}/admin/webhooks/endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ token: tokenId, url: receiver.url, events: ['task.completed', 'task.failed'] }),
      });
      const endpoint = (await made.json()) as { id: string; secret: string };
      assert.equal(made.status, 201, JSON.stringify(endpoint));
      receiver.secrets = [endpoint.secret];

      const ids: string[] = [];
      const submit = async (i: number) => {
        const via = replicas[i % 3]!;
        const res = await http(`${via.base}/v1/videos`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'eta_3_1', prompt: `replica clip ${i}` }),
        });
        const text = await res.text();
        assert.equal(res.status, 200, text);
        ids.push((JSON.parse(text) as { id: string }).id);
      };
      for (let i = 0; i < 18; i++) await submit(i);
      await until('the first deliveries', () => receiver.unique().length >= 3, 30_000);
      // r3 dies with tasks it follows (submitted through it, still running) and maybe deliveries leased.
      await r3.proc.stop('SIGKILL');
      assert.equal(r3.proc.child.signalCode, 'SIGKILL');
      await receiver.stop();
      // Through the survivors only.
      for (let i = 18; i < 30; i++) await submit(i % 3 === 2 ? 0 : i);
      const pendingWithFailures = async () => {
        const store = await openStore(storeUrl);
        try {
          return (await store.listDeliveries({ status: 'pending', limit: 200 })).filter((d) => d.attempts >= 1).length >= 3;
        } finally {
          await store.close();
        }
      };
      await until('attempts failing while the receiver is down', pendingWithFailures, 30_000);
      await receiver.start();
      await until('every task event delivered', () => new Set(receiver.unique().map((r) => r.event?.data.id)).size === ids.length, 90_000);

      const unique = receiver.unique();
      assert.equal(unique.length, ids.length, 'one webhook-id per task event');
      assert.deepEqual(unique.map((r) => r.event?.data.id).sort(), [...ids].sort());
      assert.deepEqual(receiver.unverified(), [], 'every signature verified');
      for (const r of unique) assert.equal(r.event?.type, 'task.completed');
      const senders = replicas.filter((r) => /"msg":"webhook delivered"/.test(r.proc.output())).map((r) => r.id);
      assert.ok(senders.length >= 2, `deliveries spread over the replicas (sent by ${senders.join(', ')})`);
      const store = await openStore(storeUrl);
      try {
        await until(
          'the log to show them delivered',
          async () => (await store.listDeliveries({ status: 'delivered', limit: 200 })).length === ids.length,
          20_000,
        );
        assert.equal((await store.listDeliveries({ status: 'failed', limit: 200 })).length, 0);
      } finally {
        await store.close();
      }
    });
  });
}
