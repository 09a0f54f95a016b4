import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../src/webhooks/webhook-settings.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const ADMIN_KEY = 'admin-webhooks-test-admin-key';
const QUICK = { ...DEFAULT_WEBHOOK_SETTINGS, allowPrivate: true, pollMs: 25, retryBaseMs: 50, retryMaxMs: 200, timeoutMs: 2000 };

/** An admin call: method, path, body (JSON) → status and parsed answer. */
async function admin(h: TaskHarness, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(h.url + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, text };
}

describe('admin webhooks: endpoints and the delivery log', () => {
  let h: TaskHarness;
  let tokenName: string;
  const receiver = new WebhookReceiver();
  before(async () => {
    await receiver.start();
    h = await startTaskHarness({ adminKey: ADMIN_KEY, finishMs: 150, webhooks: QUICK });
    const [t] = await h.store.listTokens();
    tokenName = t!.name;
  });
  after(async () => {
    await h.close();
    await receiver.stop();
  });

  test('an endpoint is registered for a token by name, its secret shown once; read, listed, changed, rotated with a grace, deleted', async () => {
    const made = await admin(h, 'POST', '/admin/webhooks/endpoints', { token: tokenName, url: receiver.url, events: ['task.completed'], description: 'ci' });
    assert.equal(made.status, 201, made.text);
    assert.match(made.json.secret, /^whsec_/);
    assert.match(made.json.id, /^we_[0-9a-f]{24}$/);
    const id = made.json.id as string;
    const read = await admin(h, 'GET', `/admin/webhooks/endpoints/${id}`);
    assert.equal(read.status, 200);
    assert.equal(read.json.secret, undefined, 'never shown again');
    assert.ok(!read.text.includes(made.json.secret));
    assert.deepEqual(
      [read.json.url, read.json.events, read.json.enabled, read.json.description, read.json.progress_interval_seconds],
      [receiver.url, ['task.completed'], true, 'ci', 30],
    );
    const listed = await admin(h, 'GET', `/admin/webhooks/endpoints?token=${encodeURIComponent(tokenName)}`);
    assert.ok(listed.json.endpoints.some((e: { id: string }) => e.id === id));
    const changed = await admin(h, 'POST', `/admin/webhooks/endpoints/${id}`, { events: ['task.completed', 'task.failed'], enabled: false });
    assert.deepEqual([changed.status, changed.json.events, changed.json.enabled], [200, ['task.completed', 'task.failed'], false]);
    await admin(h, 'POST', `/admin/webhooks/endpoints/${id}`, { enabled: true });

    // A rotation with a grace: a receiver still holding the old secret verifies the next delivery.
    const rotated = await admin(h, 'POST', `/admin/webhooks/endpoints/${id}/rotate`, { grace_seconds: 3600 });
    assert.equal(rotated.status, 200, rotated.text);
    assert.notEqual(rotated.json.secret, made.json.secret);
    assert.ok(rotated.json.previous_secret_expires_at);
    receiver.secrets = [made.json.secret];
    const sub = await h.post('/v1/videos', { model: 'eta_3_1', prompt: 'rotated' });
    await until('the delivery', () => receiver.unique().find((r) => r.event?.data.id === sub.json.id));
    const got = receiver.received.find((r) => r.event?.data.id === sub.json.id);
    assert.equal(got?.signature.split(' ').length, 2, 'signed with both secrets');
    receiver.secrets = [rotated.json.secret];
    assert.ok(receiver.unverified().length === 0);

    const gone = await admin(h, 'DELETE', `/admin/webhooks/endpoints/${id}`);
    assert.deepEqual([gone.status, gone.json.deleted], [200, true]);
    assert.equal((await admin(h, 'GET', `/admin/webhooks/endpoints/${id}`)).status, 404);
    assert.equal((await admin(h, 'DELETE', `/admin/webhooks/endpoints/${id}`)).status, 404);
    const audit = await admin(h, 'GET', '/admin/audit');
    const actions = audit.json.audit.filter((r: { target: string }) => r.target === id).map((r: { action: string }) => r.action);
    for (const a of ['webhook.create', 'webhook.update', 'webhook.rotate', 'webhook.delete']) assert.ok(actions.includes(a), a);
  });

  test('bad endpoint input is a 400 invalid_request naming the field, never a 5xx', async () => {
    const cases: [unknown, string][] = [
      [{ token: tokenName, group: 'default', url: receiver.url, events: ['task.completed'] }, 'token'],
      [{ url: receiver.url, events: ['task.completed'] }, 'token'],
      [{ token: 'no-such-token', url: receiver.url, events: ['task.completed'] }, 'token'],
      [{ group: 'no-such-group', url: receiver.url, events: ['task.completed'] }, 'group'],
      [{ token: tokenName, url: receiver.url, events: ['task.exploded'] }, 'events[0]'],
      [{ token: tokenName, url: receiver.url, events: [] }, 'events'],
      [{ token: tokenName, events: ['task.completed'] }, 'url'],
      [{ token: tokenName, url: 'ftp://x.example/', events: ['task.completed'] }, 'url'],
      [{ token: tokenName, url: receiver.url, events: ['task.completed'], progress_interval_seconds: 0 }, 'progress_interval_seconds'],
      [{ group: 'default', callback_origins: ['https://a.example'], events: ['task.completed'] }, 'callback_origins'],
      [{ token: tokenName, callback_origins: ['https://a.example/path'], events: ['task.completed'] }, 'callback_origins'],
      [{ token: tokenName, url: receiver.url, events: ['task.completed'], secret: 'mine' }, 'secret'],
    ];
    for (const [body, param] of cases) {
      const r = await admin(h, 'POST', '/admin/webhooks/endpoints', body);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      assert.deepEqual([r.json.error.code, r.json.error.param], ['invalid_request', param], JSON.stringify(body));
    }
    // One callback endpoint per token.
    const cb = await admin(h, 'POST', '/admin/webhooks/endpoints', { token: tokenName, callback_origins: ['http://127.0.0.1:9'], events: ['task.completed'] });
    assert.equal(cb.status, 201, cb.text);
    const twice = await admin(h, 'POST', '/admin/webhooks/endpoints', {
      token: tokenName,
      callback_origins: ['http://127.0.0.1:10'],
      events: ['task.completed'],
    });
    assert.deepEqual([twice.status, twice.json.error.param], [400, 'callback_origins'], twice.text);
    const wrong = await admin(h, 'POST', `/admin/webhooks/endpoints/${cb.json.id}`, { url: receiver.url });
    assert.deepEqual([wrong.status, wrong.json.error.param], [400, 'url'], wrong.text);
    await admin(h, 'DELETE', `/admin/webhooks/endpoints/${cb.json.id}`);
    // The bound on endpoints per owner.
    const made: string[] = [];
    let last: { status: number; json: any } | null = null;
    for (let i = 0; i < 25; i++) {
      last = await admin(h, 'POST', '/admin/webhooks/endpoints', {
        group: 'default',
        url: `${receiver.url}?n=${i}`,
        events: ['task.progress'],
        enabled: false,
      });
      if (last.status !== 201) break;
      made.push(last.json.id);
    }
    assert.equal(made.length, 20);
    assert.deepEqual([last?.status, last?.json.error.param], [400, 'group']);
    for (const id of made) await admin(h, 'DELETE', `/admin/webhooks/endpoints/${id}`);
    for (const [q, param] of [
      ['status=lost', 'status'],
      ['limit=0', 'limit'],
      ['before=xyz!', 'before'],
    ]) {
      const r = await admin(h, 'GET', `/admin/webhooks/deliveries?${q}`);
      assert.deepEqual([r.status, r.json.error.param], [400, param], r.text);
    }
    assert.equal((await admin(h, 'POST', '/admin/webhooks/deliveries/msg_none/resend')).status, 404);
  });

  test('the delivery log is filtered and paged; "send again" sends the same webhook-id again; the metrics count the outcomes', async () => {
    const r2 = new WebhookReceiver('/log');
    await r2.start();
    try {
      const made = await admin(h, 'POST', '/admin/webhooks/endpoints', { token: tokenName, url: r2.url, events: ['task.completed', 'task.failed'] });
      r2.secrets = [made.json.secret];
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await h.post('/v1/videos', { model: 'eta_3_1', prompt: `log ${i}` })).json.id);
      await until('three deliveries', () => r2.unique().length === 3);
      // The receiver has them before the worker has written their answers: wait for the log to say so.
      const delivered = `/admin/webhooks/deliveries?endpoint=${made.json.id}&status=delivered`;
      await until('three answers recorded', async () => (await admin(h, 'GET', delivered)).json.deliveries.length === 3);
      const first = await admin(h, 'GET', `/admin/webhooks/deliveries?endpoint=${made.json.id}&limit=2`);
      assert.equal(first.json.deliveries.length, 2);
      assert.ok(first.json.next);
      const rest = await admin(h, 'GET', `/admin/webhooks/deliveries?endpoint=${made.json.id}&limit=2&before=${first.json.next}`);
      assert.equal(rest.json.deliveries.length, 1);
      assert.equal(rest.json.next, null);
      const all = [...first.json.deliveries, ...rest.json.deliveries];
      assert.deepEqual(all.map((d) => d.task_id).sort(), [...ids].sort());
      for (const d of all) assert.deepEqual([d.status, d.attempts, d.last_status_code, d.event], ['delivered', 1, 204, 'task.completed']);
      const one = await admin(h, 'GET', `/admin/webhooks/deliveries?task=${ids[0]}&status=delivered`);
      assert.equal(one.json.deliveries.length, 1);
      assert.equal((await admin(h, 'GET', `/admin/webhooks/deliveries?task=${ids[0]}&status=failed`)).json.deliveries.length, 0);
      const id = one.json.deliveries[0].id as string;
      const again = await admin(h, 'POST', `/admin/webhooks/deliveries/${id}/resend`);
      assert.deepEqual([again.status, again.json.status], [200, 'pending']);
      await until('the second send', () => r2.received.filter((r) => r.id === id).length === 2);
      await until('the second answer recorded', async () => (await admin(h, 'GET', `/admin/webhooks/deliveries/${id}`)).json.attempts === 2);
      const after = await admin(h, 'GET', `/admin/webhooks/deliveries/${id}`);
      assert.deepEqual([after.json.status, after.json.attempts], ['delivered', 2]);
      const metrics = await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.text());
      assert.match(metrics, /gateway_webhook_attempts_total\{outcome="delivered"\} [1-9]/);
      assert.match(metrics, /gateway_webhook_deliveries_pending \d+/);
      assert.match(metrics, /gateway_webhook_oldest_pending_seconds \d/);
    } finally {
      await r2.stop();
    }
  });
});

test('admin webhooks: by default a loopback or http:// endpoint is refused at registration', async () => {
  const h = await startTaskHarness({ adminKey: ADMIN_KEY, finishMs: 100 });
  try {
    const [t] = await h.store.listTokens();
    for (const url of [
      'http://127.0.0.1:9/x',
      'https://127.0.0.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/x',
      'https://localhost/x',
      'http://hooks.example.com/x',
    ]) {
      const r = await admin(h, 'POST', '/admin/webhooks/endpoints', { token: t!.name, url, events: ['task.completed'] });
      assert.deepEqual([r.status, r.json.error.code, r.json.error.param], [400, 'invalid_request', 'url'], `${url}: ${r.text}`);
    }
  } finally {
    await h.close();
  }
});
