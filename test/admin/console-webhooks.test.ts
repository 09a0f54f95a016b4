/**
 * The console's Webhooks page in a real browser: an endpoint registered (its secret shown once and
 * verifying what the receiver gets), its delivery in the log, "Send again" sending the same
 * webhook-id, and the endpoint disabled from its row.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { browserMissing } from '../helpers/browser.js';
import { consoleSession } from '../helpers/console-session.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const missing = browserMissing();

describe('admin console: Webhooks', { skip: missing ?? false }, () => {
  const c = consoleSession({ GATEWAY_WEBHOOK_ALLOW_PRIVATE: '1', GATEWAY_WEBHOOK_POLL_MS: '50', GATEWAY_WEBHOOK_RETRY_BASE_MS: '100' });
  const receiver = new WebhookReceiver('/console');
  before(() => receiver.start());
  after(() => receiver.stop());

  test('Webhooks: register an endpoint (its secret shown once), see its delivery in the log, send it again, disable the endpoint', async () => {
    const { key } = await c.spender('hooked', 0);
    const page = await c.open('webhooks');
    await page.getByLabel('owner', { exact: true }).fill('hooked');
    await page.getByLabel('url').fill(receiver.url);
    await c.submit(page, 'Register');
    const secret = (await page.getByTestId('secret').textContent()) ?? '';
    assert.match(secret, /^whsec_/);
    receiver.secrets = [secret];
    const row = page.locator('[data-testid="endpoints"] tbody tr').filter({ hasText: receiver.url });
    await row.getByText('enabled').waitFor();

    const sub = await fetch(`${c.base}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'epsilon-video-3', prompt: 'a console clip', seconds: '4', size: '1280x720' }),
    });
    const task = ((await sub.json()) as { id: string }).id;
    await until('the delivery', () => receiver.unique().find((r) => r.event?.data.id === task), 20_000);
    // The receiver has it before the worker writes its answer; the page shows what is written when it is drawn.
    const recorded = `/admin/webhooks/deliveries?task=${task}&status=delivered`;
    await until('its answer recorded', async () => (await c.admin('GET', recorded)).json.deliveries.length === 1, 20_000);
    await row.getByRole('button', { name: 'Deliveries' }).click();
    // The task's id is shown short; its whole value is the code's data-id (and title).
    const delivery = page.locator('[data-testid="deliveries"] tbody tr').filter({ has: page.locator(`code[data-id="${task}"]`) });
    await delivery.getByTestId('delivery-status').getByText('delivered').waitFor();
    assert.equal(await page.getByTestId('secret').count(), 0, 'the secret is not shown again');
    await delivery.getByRole('button', { name: 'Send again' }).click();
    const id = receiver.unique().find((r) => r.event?.data.id === task)?.id;
    await until('the second send', () => receiver.received.filter((r) => r.id === id).length === 2, 20_000);
    assert.deepEqual(receiver.unverified(), []);

    await page.goto(`${c.base}/admin/#webhooks`);
    await page.locator('main[data-page="webhooks"][aria-busy="false"]').waitFor();
    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByText('disabled').waitFor();
    const listed = await c.admin('GET', '/admin/webhooks/endpoints');
    assert.equal(listed.json.endpoints[0].enabled, false);
    await c.shot(page, 'webhooks');
    await page.close();
  });
});
