/**
 * The console's Tokens page (issue 29) in a real browser: each setting a token can have, made with
 * it and changed in its panel, and seen held by the gateway (a request made with the key).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserMissing } from '../helpers/browser.js';
import { ALPHA_BODY, ALPHA_PATH, consoleSession } from '../helpers/console-session.js';
import { until } from '../helpers/until.js';

const missing = browserMissing();

describe('admin console: Tokens', { skip: missing ?? false }, () => {
  const c = consoleSession();
  const { admin, open, shot, submit } = c;

  /** Tokens page on one token's panel, once drawn. */
  async function manage(page: Page, id: string): Promise<void> {
    await page.goto(`${c.base}/admin/#tokens?token=${encodeURIComponent(id)}`);
    await page.getByTestId('token-summary').getByText(id).waitFor();
  }
  const tokenNamed = async (name: string) => (await admin('GET', '/admin/tokens')).json.tokens.find((t: any) => t.name === name);
  const models = (k: string) => fetch(`${c.base}/v1/models`, { headers: { authorization: `Bearer ${k}` } });
  const alpha = (k: string) =>
    fetch(c.base + ALPHA_PATH, {
      method: 'POST',
      headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
      body: JSON.stringify(ALPHA_BODY),
    });

  test('Tokens: create one (its key shown once), disable it from the list and see its request refused, enable it, set its quota in its panel', async () => {
    const page = await open('tokens');
    await page.getByLabel('name').fill('console, "test"');
    await page.getByLabel('quota').first().fill('500');
    await page.getByRole('button', { name: 'Create token' }).click();
    const key = (await page.getByTestId('key').textContent()) ?? '';
    assert.match(key, /\S{20,}/);
    assert.equal((await models(key)).status, 200, 'the new key works');

    const token = await tokenNamed('console, "test"');
    assert.equal(token.quota, 500);
    const row = page.locator('[data-testid="tokens"] tbody tr').filter({ hasText: 'console, "test"' });
    await row.getByText('0 of 500 used, 500 left').waitFor();
    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByText('disabled').waitFor();
    assert.equal((await models(key)).status, 401, 'a disabled token is refused');
    await page.goto(`${c.base}/admin/#channels`);
    await page.goto(`${c.base}/admin/#tokens`);
    await page.locator('main[data-page="tokens"][aria-busy="false"]').waitFor();
    assert.equal(await page.getByTestId('key').count(), 0, 'the key is not shown again');
    await row.getByRole('button', { name: 'Enable' }).click();
    await row.getByText('enabled').waitFor();
    assert.equal((await models(key)).status, 200);
    await row.getByRole('link', { name: 'console, "test"' }).click();
    await page.getByTestId('token-summary').getByText(token.id).waitFor();
    await page.getByLabel(`quota of ${token.id}`).fill('750');
    await page.getByRole('button', { name: 'Set quota' }).click();
    await until('the quota to be set', async () => (await admin('GET', `/admin/tokens/${token.id}`)).json.quota === 750);
    await page.getByTestId('token-summary').getByText('0 of 750 used, 750 left').waitFor();
    await shot(page, 'tokens');
    await page.close();
  });

  test('Tokens: create one with rate limits, see them held, change them in its panel, and remove one', async () => {
    const page = await open('tokens');
    await page.getByLabel('name').fill('console limits');
    await page.getByLabel('requests per minute', { exact: true }).fill('2');
    await page.getByLabel('requests in flight', { exact: true }).fill('3');
    await page.getByRole('button', { name: 'Create token' }).click();
    const key = (await page.getByTestId('key').textContent()) ?? '';
    const token = await tokenNamed('console limits');
    assert.deepEqual([token.rpm_limit, token.max_parallel], [2, 3]);
    assert.equal((await models(key)).headers.get('x-ratelimit-limit-requests'), '2');
    assert.equal((await models(key)).status, 200);
    assert.equal((await models(key)).status, 429, 'the third of 2 a minute');
    await page.locator('[data-testid="tokens"] tbody tr').filter({ hasText: 'console limits' }).getByText('2/min, 3 at once').waitFor();
    await manage(page, token.id);
    assert.equal(await page.getByLabel(`requests per minute of ${token.id}`).inputValue(), '2', 'the panel shows the limits');
    await page.getByLabel(`requests per minute of ${token.id}`).fill('');
    await page.getByLabel(`requests in flight of ${token.id}`).fill('5');
    await page.getByRole('button', { name: 'Apply' }).click();
    await until('the limits to be set', async () => {
      const t = (await admin('GET', `/admin/tokens/${token.id}`)).json;
      return t.rpm_limit === null && t.max_parallel === 5;
    });
    const after = await models(key);
    assert.equal(after.status, 200, 'no rpm limit any more');
    assert.equal(after.headers.get('x-ratelimit-limit-requests'), '5', 'the headers describe the limit in flight now');
    await page.close();
  });

  test('Tokens: create one with an expiry, end it now from its panel (refused, shown expired), a bad time is said, and never again', async () => {
    const page = await open('tokens');
    await page.getByLabel('name').fill('console expiry');
    await page.getByLabel('expires at', { exact: true }).fill('2099-01-31T02:30:00+02:00');
    await page.getByRole('button', { name: 'Create token' }).click();
    const key = (await page.getByTestId('key').textContent()) ?? '';
    const token = await tokenNamed('console expiry');
    assert.equal(token.expires_at, '2099-01-31T00:30:00.000Z');
    assert.equal((await models(key)).status, 200);
    await manage(page, token.id);
    const field = page.getByLabel(`expiry of ${token.id}`);
    assert.equal(await field.inputValue(), '2099-01-31T00:30:00.000Z', 'the panel shows it in UTC');
    await field.fill('2020-01-01T00:00:00Z');
    await page.getByRole('button', { name: 'Set expiry' }).click();
    await page.getByTestId('token-summary').locator('[data-state="expired"]').waitFor();
    const refused = await models(key);
    assert.equal(refused.status, 401);
    assert.match(((await refused.json()) as any).error.message, /the API key expired at 2020-01-01T00:00:00\.000Z/);
    await page.getByLabel(`expiry of ${token.id}`).fill('next week');
    await page.getByRole('button', { name: 'Set expiry' }).click();
    await page
      .getByTestId('notice')
      .getByText(/expires_at must be an ISO 8601 time with a zone/)
      .waitFor();
    await page.getByLabel(`expiry of ${token.id}`).fill('');
    await page.getByRole('button', { name: 'Set expiry' }).click();
    await page.getByTestId('token-summary').locator('[data-state="enabled"]').waitFor();
    assert.equal((await admin('GET', `/admin/tokens/${token.id}`)).json.expires_at, null);
    assert.equal((await models(key)).status, 200, 'never: the key works again');
    await page.close();
  });

  test('Tokens: a daily budget made with the token, spent and shown left, refused when spent, raised from its panel', async () => {
    const page = await open('tokens');
    await page.getByLabel('name').fill('console budget');
    await page.getByLabel('budget', { exact: true }).fill('2');
    await page.getByLabel('budget period', { exact: true }).fill('day');
    await page.getByRole('button', { name: 'Create token' }).click();
    const key = (await page.getByTestId('key').textContent()) ?? '';
    const token = await tokenNamed('console budget');
    assert.deepEqual([token.budget, token.budget_period], [2, 'day']);
    assert.equal((await alpha(key)).status, 200);
    assert.equal((await alpha(key)).status, 200);
    const refused = await alpha(key);
    assert.equal(refused.status, 402, 'the third request of a budget of 2 a day');
    assert.match(((await refused.json()) as any).error.message, /budget/);
    await manage(page, token.id);
    await page
      .getByTestId('token-summary')
      .getByText(/2 of 2 a day, 0 left, renews/)
      .waitFor();
    await page.getByLabel(`budget of ${token.id}`).fill('3');
    await page.getByRole('button', { name: 'Set budget' }).click();
    await page
      .getByTestId('token-summary')
      .getByText(/2 of 3 a day, 1 left/)
      .waitFor();
    assert.equal((await alpha(key)).status, 200, 'the raised budget has room for one more');
    await page.close();
  });

  test('Tokens: rename one, rotate its key with a grace (both keys work) and then without (the old one is refused), limit it to addresses, delete it', async () => {
    const page = await open('tokens');
    await page.getByLabel('name').fill('console rotate');
    await page.getByRole('button', { name: 'Create token' }).click();
    const first = (await page.getByTestId('key').textContent()) ?? '';
    const token = await tokenNamed('console rotate');
    // Drawn before its first use: the use is written at the next tick of the last-use writer (every
    // 5 s), which could come before a panel drawn after the use.
    await manage(page, token.id);
    const lastUsed = page.getByTestId('token-summary').locator('.stat').filter({ hasText: 'last used' }).locator('.value');
    assert.equal(await lastUsed.textContent(), 'never', 'a token not used yet');
    assert.equal((await models(first)).status, 200);
    await until('its first use to be written', async () => (await admin('GET', `/admin/tokens/${token.id}`)).json.last_used_at !== null);

    await page.getByLabel(`name of ${token.id}`).fill('console renamed');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: 'Token console renamed' }).waitFor();
    assert.notEqual(await lastUsed.textContent(), 'never', 'the panel drawn again shows when it was last used');
    assert.equal((await admin('GET', `/admin/tokens/${token.id}`)).json.name, 'console renamed');

    await page.getByLabel(`grace of ${token.id}`).selectOption({ label: '24 hours' });
    await submit(page, 'Rotate');
    const second = (await page.getByTestId('key').textContent()) ?? '';
    assert.notEqual(second, first);
    await page
      .getByTestId('new-key')
      .getByText(/the old key works until/)
      .waitFor();
    assert.equal((await models(first)).status, 200, 'the old key works in its grace');
    assert.equal((await models(second)).status, 200, 'the new key works');

    await page.getByLabel(`grace of ${token.id}`).selectOption({ value: '0' });
    await submit(page, 'Rotate');
    await page
      .getByTestId('new-key')
      .getByText(/the old key no longer works/)
      .waitFor();
    const third = (await page.getByTestId('key').textContent()) ?? '';
    assert.equal((await models(second)).status, 401, 'without a grace the old key stops at once');
    assert.equal((await models(first)).status, 401, 'and the one before it too');
    assert.equal((await models(third)).status, 200);

    await page.getByLabel(`allowed addresses of ${token.id}`).fill('203.0.113.0/24, 2001:db8::/32');
    await submit(page, 'Set addresses');
    assert.equal((await admin('GET', `/admin/tokens/${token.id}`)).json.allowed_ips?.length, 2, 'the addresses are set');
    const elsewhere = await models(third);
    assert.equal(elsewhere.status, 403, 'a request from 127.0.0.1 is not from the allowed addresses');
    assert.equal(((await elsewhere.json()) as any).error.code, 'ip_not_allowed');
    await page.getByLabel(`allowed addresses of ${token.id}`).fill('127.0.0.1');
    await submit(page, 'Set addresses');
    assert.equal((await models(third)).status, 200, 'the loopback address is allowed');
    await shot(page, 'token-panel');

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Delete console renamed for good' }).click();
    await page.locator('main[data-page="tokens"][aria-busy="false"]').waitFor();
    await until('the token to be gone', async () => (await admin('GET', `/admin/tokens/${token.id}`)).status === 404);
    // The list is read again after the delete; its row leaves once that answer is drawn.
    await until(
      'the row to leave the list',
      async () => (await page.locator('[data-testid="tokens"] tbody tr').filter({ hasText: 'console renamed' }).count()) === 0,
    );
    assert.equal((await models(third)).status, 401, 'a deleted token is refused');
    await page.close();
  });
});
