import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Store, WebhookEvent } from '../../src/store/store.js';
import { newSecret } from '../../src/webhooks/signature.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../src/webhooks/webhook-settings.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

/** Settings for loopback receivers and quick retries. */
const QUICK = { ...DEFAULT_WEBHOOK_SETTINGS, allowPrivate: true, pollMs: 25, retryBaseMs: 50, retryMaxMs: 200, timeoutMs: 2000 };
let n = 0;

/** Registers an endpoint of the harness's first token (straight in the store) for `receiver`, which learns its secret. */
async function endpointFor(store: Store, receiver: WebhookReceiver, events: WebhookEvent[]): Promise<string> {
  const [token] = await store.listTokens();
  assert.ok(token);
  const secret = newSecret();
  receiver.secrets = [secret];
  const e = await store.createWebhookEndpoint(
    {
      id: `we_gw${n++}`,
      tokenId: token.id,
      group: null,
      url: receiver.url,
      callbackOrigins: null,
      events,
      progressEverySeconds: 3600,
      enabled: true,
      description: null,
      secret,
      createdAt: Date.now(),
    },
    10,
  );
  assert.ok(e);
  return e.id;
}

describe('webhooks: deliveries from a gateway to a receiver', () => {
  let h: TaskHarness;
  const receiver = new WebhookReceiver();
  before(async () => {
    await receiver.start();
    h = await startTaskHarness({ finishMs: 200, webhooks: QUICK, publicUrl: 'https://gateway.example' });
  });
  after(async () => {
    await h.close();
    await receiver.stop();
  });

  test('a completed and a failed task are each delivered once, signed, with the task as GET /v1/videos/{id} shows it', async () => {
    await endpointFor(h.store, receiver, ['task.completed', 'task.failed']);
    const ok = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'a fox' });
    const bad = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'doomed [sim:fail=render_farm_on_fire]' });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal(bad.status, 200);
    const ids = [ok.json.id, bad.json.id];
    await until('both events delivered', () => receiver.unique().filter((r) => ids.includes(r.event?.data.id)).length === 2);
    const byTask = new Map(receiver.unique().map((r) => [r.event?.data.id, r]));
    const done = byTask.get(ok.json.id);
    const failed = byTask.get(bad.json.id);
    assert.equal(done?.event?.type, 'task.completed');
    assert.equal(failed?.event?.type, 'task.failed');
    assert.match(done?.id ?? '', /^msg_[0-9a-f]{32}$/);
    for (const r of [done, failed]) {
      const shown = await h.get(`/v1/videos/${r?.event?.data.id}`);
      assert.deepEqual(r?.event?.data, shown.json, 'the payload is the public query answer');
    }
    assert.equal(done?.event?.data.status, 'completed');
    // The result link is the gateway's, never the vendor's.
    const text = done?.body ?? '';
    assert.match(text, /https:\/\/gateway\.example\/v1\/videos\/task_[^/]+\/content/);
    for (const sim of Object.values(h.sims)) assert.ok(!text.includes(sim.url), `no vendor URL (${sim.url})`);
    assert.deepEqual(receiver.unverified(), []);
    const log = await h.store.listDeliveries({ taskId: ok.json.id, limit: 10 });
    assert.deepEqual(
      log.map((d) => [d.status, d.attempts, d.lastCode]),
      [['delivered', 1, 204]],
    );
  });

  test('a receiver answering 503 is tried again after a wait until it answers 2xx; the log keeps the attempts and last code', async () => {
    const flaky = new WebhookReceiver('/flaky');
    await flaky.start();
    try {
      await endpointFor(h.store, flaky, ['task.completed']);
      let calls = 0;
      flaky.answer = () => (++calls <= 2 ? 503 : 200);
      const sub = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'retry me' });
      const d = await until('the delivery to end', async () => {
        const [x] = await h.store
          .listDeliveries({ taskId: sub.json.id, endpointId: null, limit: 10, status: 'delivered' })
          .then((l) => l.filter((y) => y.url === flaky.url));
        return x;
      });
      assert.deepEqual([d.attempts, d.lastCode, d.lastError], [3, 200, null]);
      assert.equal(new Set(flaky.received.map((r) => r.id)).size, 1, 'every attempt carries the same webhook-id');
      const times = flaky.received.map((r) => r.timestamp);
      assert.ok(
        times.every((t, i) => i === 0 || t >= times[i - 1]!),
        'each attempt is signed at its own time',
      );
    } finally {
      await flaky.stop();
    }
  });
});

test('webhooks: a receiver killed mid-run and brought back on its port gets every event, none twice per webhook-id', async () => {
  const receiver = new WebhookReceiver('/crashy');
  await receiver.start();
  const h = await startTaskHarness({ finishMs: 150, webhooks: QUICK });
  try {
    await endpointFor(h.store, receiver, ['task.completed', 'task.failed']);
    const ids: string[] = [];
    const submit = async (i: number) => {
      const r = await h.post('/v1/videos', { model: 'eta_3_1', prompt: i % 5 === 0 ? `doomed ${i} [sim:fail=x]` : `clip ${i}` });
      assert.equal(r.status, 200, r.text);
      ids.push(r.json.id);
    };
    for (let i = 0; i < 10; i++) await submit(i);
    await until('the first deliveries', () => receiver.unique().length >= 3);
    await receiver.stop();
    for (let i = 10; i < 30; i++) await submit(i);
    // While it is away, attempts fail and are recorded for a retry.
    await until('attempts failing while the receiver is down', async () => {
      const pending = await h.store.listDeliveries({ status: 'pending', limit: 100 });
      return pending.filter((d) => d.attempts >= 1 && d.lastError !== null).length >= 5;
    });
    await receiver.start();
    await until('every event delivered', () => new Set(receiver.unique().map((r) => r.event?.data.id)).size === ids.length, 30_000);
    const unique = receiver.unique();
    assert.equal(unique.length, ids.length, 'one webhook-id per task event');
    assert.deepEqual(unique.map((r) => r.event?.data.id).sort(), [...ids].sort());
    for (const r of unique) assert.equal(r.event?.type, r.event?.data.status === 'completed' ? 'task.completed' : 'task.failed');
    assert.deepEqual(receiver.unverified(), [], 'every request verified');
    await until(
      'the log to show every delivery delivered',
      async () => (await h.store.listDeliveries({ status: 'delivered', limit: 100 })).length === ids.length,
    );
  } finally {
    await h.close();
    await receiver.stop();
  }
});

test('webhooks: task.progress is sent as a task moves on, at most once per the endpoint interval, and the completion after it', async () => {
  const receiver = new WebhookReceiver('/progress');
  await receiver.start();
  const h = await startTaskHarness({ finishMs: 1500, pollMs: 50, webhooks: QUICK });
  try {
    const [token] = await h.store.listTokens();
    const secret = newSecret();
    receiver.secrets = [secret];
    await h.store.createWebhookEndpoint(
      {
        id: 'we_progress',
        tokenId: token!.id,
        group: null,
        url: receiver.url,
        callbackOrigins: null,
        events: ['task.progress', 'task.completed'],
        progressEverySeconds: 3600,
        enabled: true,
        description: null,
        secret,
        createdAt: Date.now(),
      },
      10,
    );
    const sub = await h.post('/v1/videos', { model: 'epsilon-video-3', prompt: 'slowly', seconds: '4', size: '1280x720' });
    assert.equal(sub.status, 200, sub.text);
    await until('the completion', () => receiver.unique().find((r) => r.event?.type === 'task.completed'), 20_000);
    const progress = receiver.unique().filter((r) => r.event?.type === 'task.progress');
    assert.equal(progress.length, 1, 'one within the hour, however often the task moved');
    assert.equal(progress[0]?.event?.data.id, sub.json.id);
    assert.ok(['queued', 'in_progress'].includes(progress[0]?.event?.data.status), progress[0]?.event?.data.status);
    const history = await h.store.taskHistory(sub.json.id);
    assert.ok((history?.states.length ?? 0) >= 3, 'the task moved more than once');
  } finally {
    await h.close();
    await receiver.stop();
  }
});

test("webhooks: a submission's callback_url (body field or Gateway-Callback-Url header) is delivered within the token's origins; another origin is a 400", async () => {
  const receiver = new WebhookReceiver('/cb');
  await receiver.start();
  const h = await startTaskHarness({ finishMs: 100, webhooks: QUICK });
  try {
    const [token] = await h.store.listTokens();
    const secret = newSecret();
    receiver.secrets = [secret];
    const origin = new URL(receiver.url).origin;
    await h.store.createWebhookEndpoint(
      {
        id: 'we_callback',
        tokenId: token!.id,
        group: null,
        url: null,
        callbackOrigins: [origin],
        events: ['task.completed'],
        progressEverySeconds: 30,
        enabled: true,
        description: null,
        secret,
        createdAt: Date.now(),
      },
      10,
    );
    const viaBody = await h.post('/lambda/v1/videos/text2video', { model_name: 'lambda-3.0', prompt: 'a kite', callback_url: `${origin}/mine?job=1` });
    assert.equal(viaBody.status, 200, viaBody.text);
    const viaHeader = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'a boat' }, { 'gateway-callback-url': `${origin}/header` });
    assert.equal(viaHeader.status, 200, viaHeader.text);
    const bodyId = viaBody.json.data.task_id as string;
    const headerId = viaHeader.json.id as string;
    await until('both callbacks', () => receiver.unique().length === 2);
    const byPath = new Map(receiver.unique().map((r) => [r.path, r]));
    assert.equal(byPath.get('/mine?job=1')?.event?.data.data.task_id, bodyId, 'as the lambda query route shows it');
    assert.equal(byPath.get('/header')?.event?.data.id, headerId);
    for (const [body, header] of [
      [{ model_name: 'lambda-3.0', prompt: 'x', callback_url: 'https://elsewhere.example/hook' }, undefined],
      [{ model_name: 'lambda-3.0', prompt: 'x', callback_url: 'http://127.0.0.2:9/other-origin' }, undefined],
    ] as const) {
      const r = await h.post('/lambda/v1/videos/text2video', body, header);
      assert.equal(r.status, 400, r.text);
      assert.deepEqual([r.json.error?.code ?? r.json.code, r.json.error?.param], ['invalid_request', 'callback_url'], r.text);
    }
    const bad = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'x' }, { 'gateway-callback-url': 'not a url' });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.error.param, 'callback_url');
    // Nothing was charged or made for a refused callback.
    assert.equal((await h.store.listDeliveries({ limit: 10 })).length, 2);
  } finally {
    await h.close();
    await receiver.stop();
  }
});

test('webhooks: by default a loopback receiver is refused at delivery time, by address or by the name that resolves to it, and nothing is sent', async () => {
  const receiver = new WebhookReceiver();
  await receiver.start();
  const h = await startTaskHarness({ finishMs: 100, webhooks: { ...DEFAULT_WEBHOOK_SETTINGS, pollMs: 25 } });
  try {
    await endpointFor(h.store, receiver, ['task.completed']);
    const sub = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'nowhere' });
    const d = await until('an attempt to be recorded', async () =>
      (await h.store.listDeliveries({ taskId: sub.json.id, limit: 1 })).find((x) => x.attempts > 0),
    );
    assert.equal(d.status, 'pending', 'retried later, within the day');
    assert.match(d.lastError ?? '', /private address/);
    // A name is checked where it resolves when the socket connects (a registration check alone would miss a name that changed since).
    const [token] = await h.store.listTokens();
    await h.store.createWebhookEndpoint(
      {
        id: 'we_named',
        tokenId: token!.id,
        group: null,
        url: receiver.url.replace('127.0.0.1', 'localhost'),
        callbackOrigins: null,
        events: ['task.failed'],
        progressEverySeconds: 30,
        enabled: true,
        description: null,
        secret: newSecret(),
        createdAt: Date.now(),
      },
      10,
    );
    const doomed = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'doomed [sim:fail=x]' });
    const named = await until('the named attempt', async () =>
      (await h.store.listDeliveries({ taskId: doomed.json.id, limit: 1 })).find((x) => x.attempts > 0),
    );
    assert.match(named.lastError ?? '', /localhost resolves to (127\.0\.0\.1|::1), a private address/);
    assert.equal(receiver.received.length, 0);
  } finally {
    await h.close();
    await receiver.stop();
  }
});
