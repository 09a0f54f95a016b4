/**
 * The admin console (issue 15) in a real browser: headless Chromium against a real `gateway start`
 * whose channels are served by simulators. Each page is loaded, its content asserted against what
 * the admin API says, its actions clicked through, and a screenshot written to test-output/console/.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { browserMissing } from '../helpers/browser.js';
import { ADMIN_KEY, ALPHA_BODY, consoleSession } from '../helpers/console-session.js';
import { until } from '../helpers/until.js';

const missing = browserMissing();

describe('admin console', { skip: missing ?? false }, () => {
  const c = consoleSession();
  const { admin, spender, open, shot, sims } = c;

  test('is served at /admin/ without the key, under a strict Content-Security-Policy, with no inline script', async () => {
    const res = await fetch(`${c.base}/admin/`);
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/, 'scripts from the gateway only: no inline, no eval, no other origin');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const html = await res.text();
    assert.ok(!/<script(?![^>]*\bsrc=)/.test(html), 'every script is a file');
    assert.ok(!/\sstyle=|<style/.test(html), 'no inline style');
    const redirect = await fetch(`${c.base}/admin`, { redirect: 'manual' });
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.get('location'), '/admin/');
    assert.equal((await fetch(`${c.base}/admin/console/../../package.json`)).status, 404);
    assert.equal((await fetch(`${c.base}/admin/console/nope.js`)).status, 404);
    // The data is not open: the API behind the page still wants the key.
    assert.equal((await fetch(`${c.base}/admin/channels`)).status, 401);
  });

  test('signs in with the admin key, refuses a wrong one, and keeps the key for the tab only', async () => {
    const page = await c.browser.newPage();
    try {
      await page.goto(`${c.base}/admin/`);
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
    assert.match(await byToken.filter({ has: page.locator(`[data-token-id="${a.id}"]`) }).innerText(), new RegExp(`usage-a\\s+2\\s+${rowA.charged}\\b`));
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
      const res = await fetch(`${c.base}/v1/videos`, {
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
    assert.equal(await rows.nth(0).locator('code.id').getAttribute('data-id'), failed, 'newest first');
    assert.equal(await rows.nth(0).locator('.token-name').textContent(), 'tasks', 'the token by name');
    await shot(page, 'tasks');
    await page.getByLabel('status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await until('the failed task alone', async () =>
      (await rows.count()) === 1 && (await rows.locator(`code[data-id="${failed}"]`).count()) === 1 ? true : null,
    );
    await page.locator(`a[href="#tasks?id=${failed}"]`).click();
    await page.locator('[data-testid="timeline"] li[data-event="refund"]').waitFor();

    await page.goto(`${c.base}/admin/#tasks?id=${done}`);
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
    const refused = await fetch(`${c.base}/v1beta/models/no-such-model:generateContent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'console-refused-1' },
      body: JSON.stringify(ALPHA_BODY),
    });
    assert.ok(refused.status >= 400);
    const video = await fetch(`${c.base}/v1/videos`, {
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
    assert.equal(await its.first().locator(`code[data-id="${task}"]`).count(), 1);
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
