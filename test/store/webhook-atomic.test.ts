/**
 * A task's terminal state and its webhook deliveries are one write: when the deliveries cannot be
 * written, the task does not end either (and is refunded or settled only when it does), on SQLite
 * and on PostgreSQL. The deliveries table is taken away under the store by another connection,
 * then given back.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'libsql';
import pg from 'pg';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { pgSchemas, serviceUrl } from '../helpers/services.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-webhook-atomic-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A token with an endpoint and an accepted task; the task's version. */
async function setUp(store: Store): Promise<{ tokenId: string; version: number }> {
  const t = await store.createToken({ name: 'atomic', keyHash: 'atomic', group: 'default', models: null, quota: 10 });
  await store.createWebhookEndpoint(
    {
      id: 'we_atomic',
      tokenId: t.id,
      group: null,
      url: 'https://hooks.example/in',
      callbackOrigins: null,
      events: ['task.failed'],
      progressEverySeconds: 30,
      enabled: true,
      description: null,
      secret: 'whsec_c2VjcmV0',
      createdAt: 1,
    },
    10,
  );
  await store.createTask({
    id: 'task_atomic',
    tokenId: t.id,
    kind: 'video',
    route: 'r',
    model: 'm',
    upstreamModel: 'm',
    channel: 'c',
    price: 4,
    createdAt: 1,
    deadlineAt: 9e12,
  });
  const queued = await store.updateTask('task_atomic', 1, { status: 'queued', upstreamId: 'u', updatedAt: 2 });
  assert.ok(queued);
  return { tokenId: t.id, version: queued.version };
}

/** The failure whose deliveries cannot be written is not written either; with the table back, it is, with its delivery. */
async function check(store: Store, hide: () => Promise<void>, restore: () => Promise<void>): Promise<void> {
  const { tokenId, version } = await setUp(store);
  const fail = () =>
    store.updateTask('task_atomic', version, { status: 'failed', error: { code: 'x', message: 'x' }, completedAt: 3, updatedAt: 3, refund: true });
  await hide();
  await assert.rejects(fail());
  const still = await store.getTask('task_atomic');
  assert.deepEqual([still?.status, still?.version, still?.refunded], ['queued', version, false], 'the task did not end');
  assert.equal((await store.getToken(tokenId))?.used, 4, 'nor was it refunded');
  await restore();
  assert.equal((await store.listDeliveries({ limit: 10 })).length, 0);
  const failed = await fail();
  assert.equal(failed?.status, 'failed');
  assert.equal((await store.getToken(tokenId))?.used, 0, 'refunded once it ended');
  assert.deepEqual(
    (await store.listDeliveries({ limit: 10 })).map((d) => [d.taskId, d.event]),
    [['task_atomic', 'task.failed']],
  );
}

test('sqlite store: a terminal write whose webhook deliveries cannot be written is not written either', async () => {
  const path = join(dir, 'atomic.db');
  const store = await openStore(path);
  const other = new Database(path);
  try {
    await check(
      store,
      async () => void other.exec('ALTER TABLE webhook_deliveries RENAME TO webhook_deliveries_away'),
      async () => void other.exec('ALTER TABLE webhook_deliveries_away RENAME TO webhook_deliveries'),
    );
  } finally {
    other.close();
    await store.close();
  }
});

const databaseUrl = serviceUrl('DATABASE_URL', 'postgres store: a terminal write and its webhook deliveries are one transaction');
if (databaseUrl) {
  const schemas = pgSchemas(databaseUrl);
  test('postgres store: a terminal write whose webhook deliveries cannot be written is not written either', async () => {
    const url = schemas.url();
    const store = await openStore(url);
    const schema = new URL(url).searchParams.get('schema');
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await check(
        store,
        async () => void (await client.query(`ALTER TABLE "${schema}".webhook_deliveries RENAME TO webhook_deliveries_away`)),
        async () => void (await client.query(`ALTER TABLE "${schema}".webhook_deliveries_away RENAME TO webhook_deliveries`)),
      );
    } finally {
      await client.end();
      await store.close();
    }
  });
}
