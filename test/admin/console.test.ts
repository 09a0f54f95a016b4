/**
 * The admin console (issue 15) in a real browser: headless Chromium against a real `gateway start`
 * whose channels are served by simulators. Each page is loaded, its content asserted against what
 * the admin API says, its actions clicked through, and a screenshot written to test-output/console/.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Simulator } from '../../src/sim/http.js';
import { browserMissing, launchBrowser, SCREENSHOTS } from '../helpers/browser.js';
import { simulatorsFor, startGatewayProcess } from '../helpers/gateway-process.js';
import type { Running } from '../helpers/process.js';
import { until } from '../helpers/until.js';

const ADMIN_KEY = 'console-test-admin-key-0123456789';
const ALPHA_PATH = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const ALPHA_BODY = {
  contents: [{ role: 'user', parts: [{ text: 'a red bicycle' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
};
const missing = browserMissing();

describe('admin console', { skip: missing ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-console-'));
  const sims = new Map<string, Simulator>();
  let gw: { proc: Running; base: string };
  let browser: Browser;
  let context: BrowserContext;
  /** Requests the pages made to any origin but the gateway's (there must be none). */
  const foreign: string[] = [];

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(gw.base + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  /** A token made through the admin API, and `n` priced alpha requests made with it. */
  async function spender(name: string, n: number): Promise<{ id: string; key: string }> {
    const { json } = await admin('POST', '/admin/tokens', { group: 'default', name });
    for (let i = 0; i < n; i++) {
      const res = await fetch(gw.base + ALPHA_PATH, {
        method: 'POST',
        headers: { authorization: `Bearer ${json.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(ALPHA_BODY),
      });
      assert.equal(res.status, 200, await res.text());
    }
    return { id: json.token.id, key: json.key };
  }

  /** A page signed in, on `#<hash>`, once the page has drawn. */
  async function open(hash: string): Promise<Page> {
    const page = await context.newPage();
    page.on('request', (r) => {
      if (!r.url().startsWith(gw.base) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    await page.goto(`${gw.base}/admin/#${hash}`);
    await page.locator('main[aria-busy="false"]').waitFor();
    return page;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

  before(async () => {
    // Tasks finish in a fraction of a second, so the Tasks page can show them ended.
    const env = await simulatorsFor(sims, { finishMs: 300 });
    gw = await startGatewayProcess({
      ...env,
      GATEWAY_DB: join(dir, 'gateway.db'),
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_ADMIN_KEY: ADMIN_KEY,
      HOST: '127.0.0.1',
      PORT: '0',
    });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // Signed in once for the pages below: the key in this origin's sessionStorage, as the form leaves it.
    // (Browser code as strings: this project's Node types know no DOM.)
    await context.addInitScript(`sessionStorage.setItem('gateway-admin-key', ${JSON.stringify(ADMIN_KEY)})`);
  });

  after(async () => {
    await browser?.close();
    await gw?.proc.stop();
    await Promise.all([...sims.values()].map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(foreign, [], 'the console loads and calls nothing outside the gateway');
  });

  test('is served at /admin/ without the key, under a strict Content-Security-Policy, with no inline script', async () => {
    const res = await fetch(`${gw.base}/admin/`);
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/, 'scripts from the gateway only: no inline, no eval, no other origin');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const html = await res.text();
    assert.ok(!/<script(?![^>]*\bsrc=)/.test(html), 'every script is a file');
    assert.ok(!/\sstyle=|<style/.test(html), 'no inline style');
    const redirect = await fetch(`${gw.base}/admin`, { redirect: 'manual' });
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.get('location'), '/admin/');
    assert.equal((await fetch(`${gw.base}/admin/console/../../package.json`)).status, 404);
    assert.equal((await fetch(`${gw.base}/admin/console/nope.js`)).status, 404);
    // The data is not open: the API behind the page still wants the key.
    assert.equal((await fetch(`${gw.base}/admin/channels`)).status, 401);
  });

  test('signs in with the admin key, refuses a wrong one, and keeps the key for the tab only', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${gw.base}/admin/`);
      await page.getByLabel('admin key').fill('not-the-key');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('The gateway refused this key.').waitFor();
      await shot(page, 'sign-in');
      await page.getByLabel('admin key').fill(ADMIN_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('main[data-page="channels"]').waitFor();
      assert.equal(await page.evaluate("sessionStorage.getItem('gateway-admin-key')"), ADMIN_KEY);
      assert.equal(await page.evaluate('localStorage.length + document.cookie.length'), 0, 'nothing kept beyond the tab');
      assert.ok(!page.url().includes(ADMIN_KEY));
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('admin key').waitFor();
      assert.equal(await page.evaluate("sessionStorage.getItem('gateway-admin-key')"), null);
    } finally {
      await page.close();
    }
  });

  test('Channels: every serving channel with its profile, breaker and in-flight count, and the groups', async () => {
    const { json } = await admin('GET', '/admin/channels');
    const page = await open('channels');
    const rows = page.locator('[data-testid="channels"] tbody tr');
    assert.equal(await rows.count(), json.channels.length);
    const alpha = json.channels.find((c: any) => c.name === 'alpha-primary');
    const row = rows.filter({ hasText: 'alpha-primary' });
    const text = (await row.textContent()) ?? '';
    assert.match(text, new RegExp(alpha.profile));
    assert.match(text, /closed/);
    assert.match(text, new RegExp(`0 / ${alpha.max_concurrency ?? '∞'}`));
    // The groups, from GET /admin/groups: the limits their keys share (none in the project's config) and their tokens.
    const { json: g } = await admin('GET', '/admin/groups');
    const groupRows = page.locator('[data-testid="groups"] tbody tr');
    assert.equal(await groupRows.count(), g.groups.length);
    const def = g.groups.find((x: any) => x.name === 'default');
    const defText = (await groupRows.filter({ hasText: 'default' }).textContent()) ?? '';
    assert.ok(defText.includes(`${def.tokens.total} (${def.tokens.active})`), defText);
    assert.ok(defText.includes(def.limits === null ? '—' : `${def.limits.rpm} / min`), defText);
    await shot(page, 'channels');
    await page.close();
  });

  test('Configuration: the version serving, and a reload clicked through shows its outcome and the last reload', async () => {
    const before = (await admin('GET', '/admin/config')).json;
    const page = await open('config');
    assert.equal(await page.getByTestId('version').textContent(), before.version);
    await page.getByRole('button', { name: 'Reload now' }).click();
    await page
      .getByTestId('reload-outcome')
      .getByText(`Generation ${before.generation + 1} serving`)
      .waitFor();
    await page.getByTestId('last-reload').getByText('admin').waitFor();
    const after = (await admin('GET', '/admin/config')).json;
    assert.equal(after.last_reload.reason, 'admin');
    await shot(page, 'configuration');
    await page.close();
  });

  /** Tokens page on one token's panel, once drawn. */
  async function manage(page: Page, id: string): Promise<void> {
    await page.locator('[data-testid="tokens"] tbody tr').filter({ hasText: id }).first().waitFor();
    await page.goto(`${gw.base}/admin/#tokens?token=${encodeURIComponent(id)}`);
    await page.locator('main[data-page="tokens"][aria-busy="false"]').waitFor();
    await page.getByTestId('token-summary').getByText(id).waitFor();
  }
  const tokenNamed = async (name: string) => (await admin('GET', '/admin/tokens')).json.tokens.find((t: any) => t.name === name);
  const models = (k: string) => fetch(`${gw.base}/v1/models`, { headers: { authorization: `Bearer ${k}` } });
  const alpha = (k: string) =>
    fetch(gw.base + ALPHA_PATH, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify(ALPHA_BODY) });

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
    await page.goto(`${gw.base}/admin/#channels`);
    await page.goto(`${gw.base}/admin/#tokens`);
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

  test("Tokens: a daily budget made with the token, spent and shown left, refused when spent, raised from its panel", async () => {
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
    await page.getByTestId('token-summary').getByText(/2 of 2 a day, 0 left, renews/).waitFor();
    await page.getByLabel(`budget of ${token.id}`).fill('3');
    await page.getByRole('button', { name: 'Set budget' }).click();
    await page.getByTestId('token-summary').getByText(/2 of 3 a day, 1 left/).waitFor();
    assert.equal((await alpha(key)).status, 200, 'the raised budget has room for one more');
    await page.close();
  });

  test('Tokens: rename one, rotate its key with a grace (both keys work) and then without (the old one is refused), limit it to addresses, delete it', async () => {
    const page = await open('tokens');
    await page.getByLabel('name').fill('console rotate');
    await page.getByRole('button', { name: 'Create token' }).click();
    const first = (await page.getByTestId('key').textContent()) ?? '';
    const token = await tokenNamed('console rotate');
    assert.equal((await models(first)).status, 200);
    await manage(page, token.id);

    await page.getByLabel(`name of ${token.id}`).fill('console renamed');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: 'Token console renamed' }).waitFor();
    assert.equal((await admin('GET', `/admin/tokens/${token.id}`)).json.name, 'console renamed');

    await page.getByLabel(`grace of ${token.id}`).selectOption({ label: '24 hours' });
    await page.getByRole('button', { name: 'Rotate' }).click();
    const second = (await page.getByTestId('key').textContent()) ?? '';
    assert.notEqual(second, first);
    await page.getByTestId('new-key').getByText(/the old key works until/).waitFor();
    assert.equal((await models(first)).status, 200, 'the old key works in its grace');
    assert.equal((await models(second)).status, 200, 'the new key works');

    await page.getByLabel(`grace of ${token.id}`).selectOption({ value: '0' });
    await page.getByRole('button', { name: 'Rotate' }).click();
    await page.getByTestId('new-key').getByText(/the old key no longer works/).waitFor();
    const third = (await page.getByTestId('key').textContent()) ?? '';
    assert.equal((await models(second)).status, 401, 'without a grace the old key stops at once');
    assert.equal((await models(first)).status, 401, 'and the one before it too');
    assert.equal((await models(third)).status, 200);

    await page.getByLabel(`allowed addresses of ${token.id}`).fill('203.0.113.0/24, 2001:db8::/32');
    await page.getByRole('button', { name: 'Set addresses' }).click();
    await until('the addresses to be set', async () => (await admin('GET', `/admin/tokens/${token.id}`)).json.allowed_ips?.length === 2);
    const elsewhere = await models(third);
    assert.equal(elsewhere.status, 403, 'a request from 127.0.0.1 is not from the allowed addresses');
    assert.equal(((await elsewhere.json()) as any).error.code, 'ip_not_allowed');
    await page.getByLabel(`allowed addresses of ${token.id}`).fill('127.0.0.1');
    await page.getByRole('button', { name: 'Set addresses' }).click();
    await until('the loopback address to be allowed', async () => (await models(third)).status === 200);
    await shot(page, 'token-panel');

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Delete console renamed for good' }).click();
    await page.locator('main[data-page="tokens"][aria-busy="false"]').waitFor();
    await until('the token to be gone', async () => (await admin('GET', `/admin/tokens/${token.id}`)).status === 404);
    assert.equal(await page.locator('[data-testid="tokens"] tbody tr').filter({ hasText: 'console renamed' }).count(), 0);
    assert.equal((await models(third)).status, 401, 'a deleted token is refused');
    await page.close();
  });

  test('Usage: spend by token, model and day as the ledger has it, a chart, filters, and the CSV export', async () => {
    const a = await spender('usage-a', 2);
    const b = await spender('usage-b', 1);
    const { json: usage } = await admin('GET', '/admin/usage');
    const page = await open('usage');
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the rendered text, with whitespace between the cells that this pattern reads; textContent runs them together.
    const totals = await page.getByTestId('totals').innerText();
    assert.match(totals, new RegExp(`charged\\s+${usage.totals.charged}\\b`));
    const byToken = page.locator('[data-testid="by-token"] tbody tr');
    const rowA = usage.by_token.find((t: any) => t.token_id === a.id);
    assert.ok(rowA && rowA.requests === 2, "the ledger has token a's two requests");
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the rendered text, with whitespace between the cells that this pattern reads; textContent runs them together.
    assert.match(await byToken.filter({ hasText: a.id }).innerText(), new RegExp(`usage-a\\s+2\\s+${rowA.charged}\\b`));
    assert.equal(await page.locator('[data-testid="by-day-chart"] rect').count(), usage.by_day.length, 'a bar per day of the range');
    assert.equal(await page.locator('[data-testid="by-token-chart"] rect').count(), Math.min(12, usage.by_token.length), 'a bar per token');
    assert.equal(await page.locator('[data-testid="by-model-chart"] rect').count(), Math.min(12, usage.by_model.length), 'a bar per model');
    await shot(page, 'usage');

    await page.getByLabel('token', { exact: true }).fill(b.id);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(new RegExp(`token=${b.id}`));
    await page.locator('main[aria-busy="false"]').waitFor();
    await until('the filtered table', async () => ((await byToken.count()) === 1 && (await byToken.textContent())?.includes('usage-b') ? true : null));

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    assert.equal(csv[0], 'day,token_id,token_name,model,requests,charged,refunded,settled');
    assert.ok(csv.slice(1).length >= 1 && csv.slice(1).every((l) => l.includes(b.id)), 'the file holds the filtered token only');
    await page.close();
  });

  test("Tasks: newest first, filtered by status, and one task's timeline from submission to settlement or refund, with no vendor address", async () => {
    const { json } = await admin('POST', '/admin/tokens', { group: 'default', name: 'tasks' });
    const auth = { authorization: `Bearer ${json.key}`, 'content-type': 'application/json' };
    const submit = async (prompt: string) => {
      const res = await fetch(`${gw.base}/v1/videos`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ model: 'epsilon-video-3', prompt, seconds: '12', size: '1792x1024' }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      return ((await res.json()) as { id: string }).id;
    };
    const done = await submit('a paper boat');
    const failed = await submit('doomed [sim:fail=content_policy]');
    await until('both tasks to end', async () => {
      const { json: list } = await admin('GET', `/admin/tasks?token=${json.token.id}`);
      return list.tasks.length === 2 && list.tasks.every((t: any) => t.status === 'completed' || t.status === 'failed') ? true : null;
    });

    const page = await open(`tasks?token=${json.token.id}`);
    const rows = page.locator('[data-testid="tasks"] tbody tr');
    assert.equal(await rows.count(), 2);
    assert.match((await rows.nth(0).textContent()) ?? '', new RegExp(failed), 'newest first');
    await shot(page, 'tasks');
    await page.getByLabel('status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await until('the failed task alone', async () => ((await rows.count()) === 1 && (await rows.textContent())?.includes(failed) ? true : null));
    await page.getByRole('link', { name: failed }).click();
    await page.locator('[data-testid="timeline"] li[data-event="refund"]').waitFor();

    await page.goto(`${gw.base}/admin/#tasks?id=${done}`);
    const events = page.locator('[data-testid="timeline"] li');
    await page.locator('[data-testid="timeline"] li[data-event="completed"]').waitFor();
    const seen = await events.evaluateAll((els) => els.map((e) => e.getAttribute('data-event')));
    assert.equal(seen[0], 'submitted');
    assert.ok(seen.includes('debit') && seen.includes('vendor_state') && seen.includes('completed'), `timeline: ${seen.join(', ')}`);
    const text = (await page.locator('main').textContent()) ?? '';
    for (const sim of sims.values()) assert.ok(!text.includes(sim.url), 'no vendor address on the page');
    await shot(page, 'task');
    await page.close();
  });

  test("Requests: a token's requests as the request log has them, filtered by status, and a task's requests from its timeline", async () => {
    const { id, key } = await spender('requests', 1);
    const refused = await fetch(`${gw.base}/v1beta/models/no-such-model:generateContent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'console-refused-1' },
      body: JSON.stringify(ALPHA_BODY),
    });
    assert.ok(refused.status >= 400);
    const video = await fetch(`${gw.base}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'epsilon-video-3', prompt: 'a kite', seconds: '12', size: '1792x1024' }),
    });
    assert.equal(video.status, 200);
    const task = ((await video.json()) as { id: string }).id;
    // Written within a second (GATEWAY_REQUEST_LOG_DAYS default, batches every second).
    const logged = await until('the three records', async () => {
      const { json } = await admin('GET', `/admin/requests?token=${id}`);
      return json.requests.length === 3 && json.requests;
    });
    const page = await open(`requests?token=${id}`);
    const rows = page.locator('[data-testid="requests"] tbody tr');
    assert.equal(await rows.count(), 3);
    assert.match((await rows.nth(1).textContent()) ?? '', /console-refused-1/, 'newest first: the task, then the refusal');
    assert.match((await rows.nth(1).textContent()) ?? '', new RegExp(logged[1].error));
    await shot(page, 'requests');
    await page.getByLabel('status').fill('200');
    await page.getByRole('button', { name: 'Filter' }).click();
    await until('the two that succeeded', async () => ((await rows.count()) === 2 ? true : null));
    assert.ok(!((await page.locator('[data-testid="requests"]').textContent()) ?? '').includes('console-refused-1'));
    await page.close();

    const timeline = await open(`tasks?id=${task}`);
    await timeline.getByTestId('task-requests').click();
    await timeline.waitForURL(new RegExp(`requests\\?task=${task}`));
    await timeline.locator('main[data-page="requests"][aria-busy="false"]').waitFor();
    const its = timeline.locator('[data-testid="requests"] tbody tr');
    await until("the task's submission", async () => ((await its.count()) >= 1 ? true : null));
    assert.match((await its.first().textContent()) ?? '', new RegExp(task));
    await timeline.close();
  });

  test('Audit: who changed which token, from what to what, filtered by action', async () => {
    const { json } = await admin('POST', '/admin/tokens', { group: 'default', name: 'audited', quota: 5 });
    assert.equal((await admin('POST', `/admin/tokens/${json.token.id}/quota`, { quota: 9 })).status, 200);
    const page = await open(`audit?target=${json.token.id}`);
    const rows = page.locator('[data-testid="audit"] tbody tr');
    assert.equal(await rows.count(), 2);
    const text = (await rows.nth(0).textContent()) ?? '';
    assert.match(text, /token\.quota/);
    assert.match(text, /quota: 5 → 9/);
    assert.match(text, /admin:[0-9a-f]{12}/);
    assert.ok(!((await page.locator('main').textContent()) ?? '').includes(json.key), 'never the key');
    await shot(page, 'audit');
    await page.getByLabel('action').fill('token.create');
    await page.getByRole('button', { name: 'Filter' }).click();
    await until('the creation alone', async () => ((await rows.count()) === 1 && (await rows.textContent())?.includes('token.create') ? true : null));
    await page.close();
  });

  test('Playground: a client body shows the route, the checks, the channel chosen and the upstream request with its secrets masked; no vendor is called', async () => {
    const alphaSim = sims.get('alpha-native')!;
    const before = alphaSim.stats.requests;
    const page = await open('playground');
    await page.getByRole('button', { name: 'Show what the gateway would send' }).click();
    const upstream = page.getByTestId('upstream');
    await upstream.waitFor();
    assert.match((await upstream.locator('p code').textContent()) ?? '', /^POST http:\/\/127\.0\.0\.1:\d+\/.*:generateContent/);
    assert.match((await page.getByTestId('chosen').textContent()) ?? '', /alpha-primary/);
    assert.equal(await page.getByTestId('outcome').textContent(), 'the gateway would send it');
    const text = (await page.locator('main').textContent()) ?? '';
    assert.match(text, /\*\*\*/, 'the key the vendor takes is shown masked');
    for (const secret of Object.values(alphaSim.secrets)) assert.ok(!text.includes(secret), 'no secret of the channel on the page');
    assert.equal(alphaSim.stats.requests, before, 'the vendor was not called');
    await shot(page, 'playground');

    const body = page.getByLabel('client body');
    await body.fill(JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'x' }] }], generationConfig: { imageConfig: { imageSize: '3K' } } }));
    await page.getByRole('button', { name: 'Show what the gateway would send' }).click();
    await page.getByTestId('client-error').waitFor();
    assert.match((await page.getByTestId('client-error').textContent()) ?? '', /HTTP 400/);
    await body.fill('{ not json');
    await page.getByRole('button', { name: 'Show what the gateway would send' }).click();
    assert.match((await page.getByTestId('playground-error').textContent()) ?? '', /not JSON/);
    assert.equal(alphaSim.stats.requests, before);
    await page.close();
  });
});
