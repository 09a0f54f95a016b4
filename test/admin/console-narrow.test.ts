/**
 * The console from a phone to a wide screen (issue 40, item 1), in headless Chromium against a real
 * `gateway start` seeded with rows (tokens with long names, one deleted; tasks, one failed;
 * requests, one refused; a webhook endpoint and its deliveries): every page, at 360, 768 and 1280
 * px, is no wider than the screen, its dark header band spans the width and holds every menu link,
 * and its tables scroll inside their cards. Ids are shown short with the whole value in the title and
 * on copy; tokens by name. Screenshots go to a temporary directory.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserMissing } from '../helpers/browser.js';
import { ADMIN_KEY, consoleSession } from '../helpers/console-session.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const missing = browserMissing();
const WIDTHS = [360, 768, 1280] as const;
/** A name as long as names go without a space to break it at (names are 1 to 100 characters). */
const LONG_NAME = 'acme-production-video-pipeline-for-the-marketing-department-in-europe-middle-east-and-africa';
const SPACED_NAME = 'Acme Studio nightly batch renders for the spring catalogue';

/** What the layout check measures on a page (browser code as a string: this project's Node types know no DOM). */
interface Layout {
  scrollWidth: number;
  innerWidth: number;
  header: { left: number; right: number; top: number; bottom: number } | null;
  /** Menu links and header buttons drawn outside the header's band. */
  outsideHeader: string[];
  /** Tables' boxes reaching past their card. */
  tablesOutside: string[];
  /** Elements reaching past the screen's right edge, outside a box that scrolls (for the message). */
  wide: string[];
}
const MEASURE = `(() => {
  const vw = window.innerWidth;
  const box = (e) => e.getBoundingClientRect();
  const name = (e) => e.tagName.toLowerCase() + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ').join('.') : '') + ' "' + (e.textContent || '').trim().slice(0, 40) + '"';
  const header = document.querySelector('header');
  const hr = header && box(header);
  const outsideHeader = hr ? [...header.querySelectorAll('nav a, button')].filter((e) => {
    const r = box(e);
    return r.left < hr.left - 0.5 || r.right > hr.right + 0.5 || r.top < hr.top - 0.5 || r.bottom > hr.bottom + 0.5;
  }).map(name) : [];
  const tablesOutside = [...document.querySelectorAll('.table-scroll')].filter((e) => {
    const card = e.closest('section') || document.body;
    return box(e).right > box(card).right + 0.5;
  }).map(name);
  const wide = [...document.querySelectorAll('body *')].filter((e) => box(e).right > vw + 0.5 && !e.parentElement.closest('.table-scroll, pre')).slice(0, 8).map(name);
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: vw,
    header: hr && { left: hr.left, right: hr.right, top: hr.top, bottom: hr.bottom },
    outsideHeader, tablesOutside, wide,
  };
})()`;

describe('admin console on narrow and wide screens', { skip: missing ?? false }, () => {
  const c = consoleSession({ GATEWAY_WEBHOOK_ALLOW_PRIVATE: '1', GATEWAY_WEBHOOK_POLL_MS: '50', GATEWAY_WEBHOOK_RETRY_BASE_MS: '100' });
  const receiver = new WebhookReceiver('/narrow');
  const shots = mkdtempSync(join(tmpdir(), 'gw-console-narrow-'));
  after(() => console.log(`screenshots in ${shots}`));
  before(() => receiver.start());
  after(() => receiver.stop());

  /** What the seeding made, for the pages' addresses and assertions. */
  const seeded = { longId: '', spacedId: '', goneId: '', task: '', failed: '' };

  /** A video task of the key; its id. */
  const submit = async (key: string, prompt: string) => {
    const res = await fetch(`${c.base}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'epsilon-video-3', prompt, seconds: '4', size: '1280x720' }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { id: string }).id;
  };

  before(async () => {
    const long = await c.spender(LONG_NAME, 3);
    const spaced = await c.spender(SPACED_NAME, 2);
    const gone = await c.spender('deleted-after-one-request', 1);
    Object.assign(seeded, { longId: long.id, spacedId: spaced.id, goneId: gone.id });
    const endpoint = await c.admin('POST', '/admin/webhooks/endpoints', {
      token: long.id,
      url: `${receiver.url}/a-rather-long-path/for/the/receiver/of/the/marketing/department`,
      events: ['task.completed', 'task.failed'],
    });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.json));
    receiver.secrets = [endpoint.json.secret];
    seeded.task = await submit(long.key, 'a lighthouse in a storm');
    seeded.failed = await submit(long.key, 'doomed [sim:fail=content_policy]');
    await submit(spaced.key, 'a catalogue page turning');
    // A refused request, with the client's own long request id.
    const refused = await fetch(`${c.base}/v1beta/models/no-such-model:generateContent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${long.key}`, 'content-type': 'application/json', 'x-request-id': 'client-request-0123456789abcdef0123456789' },
      body: '{}',
    });
    assert.ok(refused.status >= 400);
    assert.equal((await c.admin('DELETE', `/admin/tokens/${gone.id}`)).status, 200);
    await until(
      'the tasks to end and their deliveries to be recorded',
      async () => {
        const { json } = await c.admin('GET', '/admin/webhooks/deliveries');
        return json.deliveries.length >= 2 && json.deliveries.every((d: { status: string }) => d.status !== 'pending');
      },
      20_000,
    );
    await until('the request log to hold the refusal', async () => (await c.admin('GET', `/admin/requests?token=${long.id}`)).json.requests.length >= 6);
  });

  test('the admin answers name the token beside its id, null once it is deleted', async () => {
    const tasks = (await c.admin('GET', '/admin/tasks')).json.tasks as { token_id: string; token_name: string | null }[];
    assert.ok(tasks.length >= 3 && tasks.every((t) => t.token_name === (t.token_id === seeded.longId ? LONG_NAME : SPACED_NAME)));
    assert.equal((await c.admin('GET', `/admin/tasks/${seeded.task}`)).json.task.token_name, LONG_NAME);
    const requests = (await c.admin('GET', '/admin/requests?limit=500')).json.requests as { token_id: string | null; token_name: string | null }[];
    assert.ok(
      requests.some((r) => r.token_id === seeded.goneId && r.token_name === null),
      'a deleted token has no name',
    );
    assert.ok(requests.filter((r) => r.token_id === seeded.spacedId).every((r) => r.token_name === SPACED_NAME));
    const endpoints = (await c.admin('GET', '/admin/webhooks/endpoints')).json.endpoints;
    assert.equal(endpoints[0].token_name, LONG_NAME);
    const deliveries = (await c.admin('GET', '/admin/webhooks/deliveries')).json.deliveries as { token_name: string }[];
    assert.ok(deliveries.every((d) => d.token_name === LONG_NAME));
    const audit = (await c.admin('GET', `/admin/audit?target=${seeded.longId}`)).json.audit as { action: string; target_name: string | null }[];
    assert.ok(audit.some((a) => a.action === 'token.create' && a.target_name === LONG_NAME));
    const other = (await c.admin('GET', '/admin/audit?action=webhook.create')).json.audit as { target_name: string | null }[];
    assert.deepEqual(
      other.map((a) => a.target_name),
      [null],
      "an endpoint's id names no token",
    );
  });

  /** Sets the screen's width, lets the layout settle, measures it and takes a screenshot. */
  async function check(page: Page, label: string, width: number): Promise<void> {
    await page.setViewportSize({ width, height: 800 });
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    const m = (await page.evaluate(MEASURE)) as Layout;
    await page.screenshot({ path: join(shots, `${label}-${width}.png`), fullPage: true });
    const where = `${label} at ${width} px`;
    assert.equal(m.innerWidth, width);
    assert.ok(m.scrollWidth <= m.innerWidth, `${where}: the page is ${m.scrollWidth} px wide on a ${m.innerWidth} px screen; wide: ${m.wide.join('; ')}`);
    assert.deepEqual(m.wide, [], `${where}: nothing reaches past the screen's edge`);
    if (label !== 'sign-in') {
      assert.ok(m.header, `${where}: a header`);
      assert.ok(m.header.left <= 0 && m.header.right >= width, `${where}: the header band spans the screen (${m.header.left}..${m.header.right})`);
      assert.deepEqual(m.outsideHeader, [], `${where}: every menu link and header button lies on the band`);
    }
    assert.deepEqual(m.tablesOutside, [], `${where}: tables scroll inside their card`);
  }

  test('every page fits the screen at 360, 768 and 1280 px: no sideways scroll, the header band across it, tables inside their cards', async () => {
    const pages: [string, string][] = [
      ['channels', 'channels'],
      ['configuration', 'config'],
      ['tasks', 'tasks'],
      ['task', `tasks?id=${seeded.failed}`],
      ['usage', 'usage'],
      ['requests', 'requests'],
      ['tokens', 'tokens'],
      ['token', `tokens?token=${seeded.longId}`],
      ['webhooks', 'webhooks'],
      ['audit', 'audit'],
      ['playground', 'playground'],
    ];
    for (const [label, hash] of pages) {
      const page = await c.open(hash);
      if (label === 'playground') {
        await page.getByRole('button', { name: 'Show what the gateway would send' }).click();
        await page.getByTestId('upstream').waitFor();
      }
      // The task page and the token's panel hold facts, not tables; the others hold the seeded rows.
      if (!['configuration', 'task', 'token'].includes(label)) {
        assert.ok((await page.locator('main table tbody tr').count()) > 0, `${label}: the table has rows`);
      }
      for (const width of WIDTHS) await check(page, label, width);
      await page.close();
    }
  });

  test('the sign-in form, and the first page after signing in, fit a 360 px screen', async () => {
    const page = await c.browser.newPage({ viewport: { width: 360, height: 740 } });
    try {
      await page.goto(`${c.base}/admin/`);
      await page.getByLabel('admin key').waitFor();
      await check(page, 'sign-in', 360);
      await page.getByLabel('admin key').fill(ADMIN_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('main[data-page="channels"][aria-busy="false"]').waitFor();
      for (const width of [360, 420]) await check(page, 'signed-in', width);
    } finally {
      await page.close();
    }
  });

  test('ids are shown short, whole in their title and when copied; tokens are shown by name', async () => {
    const page = await c.open('tasks');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: c.base });
    const row = page.locator('[data-testid="tasks"] tbody tr').filter({ has: page.locator(`code[data-id="${seeded.task}"]`) });
    const id = row.locator('code.id');
    assert.equal(await id.getAttribute('title'), seeded.task);
    const shown = (await id.textContent()) ?? '';
    const [head = '', tail = ''] = shown.split('…');
    assert.ok(shown.length < seeded.task.length && seeded.task.startsWith(head) && seeded.task.endsWith(tail) && tail.length > 0, shown);
    assert.equal(await row.locator('.token-name').textContent(), LONG_NAME, 'the token by name');
    assert.equal(await row.locator('.token-name').getAttribute('title'), `${LONG_NAME}\n${seeded.longId}`, 'its whole name and its id on hover');
    assert.ok(!((await row.textContent()) ?? '').includes(seeded.longId.slice(0, 8)), 'no token id in the row');

    await row.getByRole('button', { name: `copy ${seeded.task}` }).click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), seeded.task, 'the copy button copies the whole id');
    await page.evaluate('navigator.clipboard.writeText("")');
    await id.selectText();
    await page.keyboard.press('Control+C');
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), seeded.task, 'copying the short text copies the whole id');
    await page.close();

    const requests = await c.open('requests');
    const rows = requests.locator('[data-testid="requests"] tbody tr');
    const names = await requests.locator('[data-testid="requests"] .token-name').allTextContents();
    assert.ok(names.includes(LONG_NAME) && names.includes(SPACED_NAME), names.join(', '));
    const gone = rows.filter({ has: requests.locator(`code[data-id="${seeded.goneId}"]`) });
    assert.match((await gone.first().textContent()) ?? '', /\(deleted\)/, 'a deleted token by its short id');
    const long = rows.filter({ has: requests.locator('code[data-id="client-request-0123456789abcdef0123456789"]') });
    assert.equal(await long.locator('code.id').first().textContent(), 'client-requ…6789', "the client's long request id, short");
    await requests.close();
  });
});
