/**
 * The delivery worker's give-up rule at the moment of sending (docs/webhooks.md, "Limits"): a
 * delivery claimed after its retry window ended (a backlog in its endpoint's line held it that
 * long) is failed without being sent, so a dead receiver's line empties rather than costing one
 * more attempt per delivery. A store of the test's own stands in for the driver; the receiver is real.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import type { Snapshot } from '../../src/config/snapshot.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics/metrics.js';
import type { Store } from '../../src/store/store.js';
import type { AttemptOutcome, WebhookDelivery } from '../../src/store/webhook-store.js';
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../src/webhooks/webhook-settings.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';

test('delivery worker: a delivery claimed after its retry window ended is failed unsent', async () => {
  let received = 0;
  const receiver = createServer((req, res) => {
    received++;
    req.resume();
    res.end();
  });
  const url = await listenLocal(receiver);
  const now = 1_000_000_000_000;
  const giveUpMs = 60_000;
  const delivery: WebhookDelivery = {
    id: 'msg_late',
    endpointId: 'we_1',
    url,
    taskId: 'task_1',
    tokenId: 'tok',
    event: 'task.completed',
    createdAt: now - giveUpMs - 1,
    status: 'pending',
    attempts: 3,
    nextAt: now - 10_000,
    windowStart: now - giveUpMs - 1,
    lastCode: null,
    lastError: 'no answer within 10000 ms',
    lastAt: now - 20_000,
    deliveredAt: null,
  };
  const written: { id: string; outcome: AttemptOutcome }[] = [];
  let claimed = false;
  const store = {
    claimDeliveries: async () => (claimed ? [] : ((claimed = true), [delivery])),
    getWebhookEndpoint: async () => ({
      id: 'we_1',
      url,
      enabled: true,
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      previousSecret: null,
      previousSecretUntil: null,
    }),
    getTask: async () => ({ id: 'task_1', status: 'completed' }),
    finishAttempt: async (id: string, _owner: string, outcome: AttemptOutcome) => {
      written.push({ id, outcome });
      return true;
    },
  } as unknown as Store;
  const worker = new DeliveryWorker({
    store,
    snapshot: () => ({}) as Snapshot,
    log: silentLogger(),
    metrics: new Metrics(),
    settings: { ...DEFAULT_WEBHOOK_SETTINGS, allowPrivate: true, giveUpMs },
    publicUrl: null,
    now: () => now,
  });
  try {
    await worker.tick();
    await worker.stop();
    assert.equal(received, 0, 'nothing was sent');
    assert.equal(written.length, 1);
    assert.equal(written[0]?.outcome.status, 'failed');
    assert.match(written[0]?.outcome.error ?? '', /retry window ended/);
  } finally {
    await closeLocal(receiver);
  }
});
