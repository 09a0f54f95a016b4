/**
 * A console test's world: a real `gateway start` whose channels are served by simulators, headless
 * Chromium signed in with the admin key, and what the tests call on them. Call it inside a
 * `describe`: it registers the set-up and the tear-down, which also checks that no page called
 * anything outside the gateway.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Simulator } from '../../src/sim/http.js';
import { launchBrowser, SCREENSHOTS } from './browser.js';
import { simulatorsFor, startGatewayProcess } from './gateway-process.js';
import type { Running } from './process.js';

export const ADMIN_KEY = 'console-test-admin-key-0123456789';
export const ALPHA_PATH = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
export const ALPHA_BODY = {
  contents: [{ role: 'user', parts: [{ text: 'a red bicycle' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
};

export interface ConsoleSession {
  /** The gateway's base URL (once set up). */
  readonly base: string;
  readonly browser: Browser;
  /** The simulators serving the channels, by profile. */
  readonly sims: ReadonlyMap<string, Simulator>;
  /** A call of the admin API with the admin key; the answer's status and JSON. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  /** A token made through the admin API, and `n` priced alpha requests made with it. */
  spender(name: string, n: number): Promise<{ id: string; key: string }>;
  /** A page signed in, on `#<hash>`, once the page has drawn. */
  open(hash: string): Promise<Page>;
  /** A screenshot of the whole page in test-output/console/<name>.png. */
  shot(page: Page, name: string): Promise<Buffer>;
  /**
   * Clicks the button and waits for the page the action draws again: a field filled before that
   * redraw lands would be replaced by the old answer's (a race seen in CI).
   */
  submit(page: Page, button: string): Promise<void>;
}

/** `env`: more settings of the gateway process (webhooks allowed to reach loopback, an archive, say). */
export function consoleSession(env: NodeJS.ProcessEnv = {}): ConsoleSession {
  const dir = mkdtempSync(join(tmpdir(), 'gw-console-'));
  const sims = new Map<string, Simulator>();
  let gw: { proc: Running; base: string } | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  /** Requests the pages made to any origin but the gateway's (there must be none). */
  const foreign: string[] = [];
  const base = () => {
    if (!gw) throw new Error('the console session is not set up');
    return gw.base;
  };

  before(async () => {
    // Tasks finish in a fraction of a second, so the Tasks page can show them ended.
    const simEnv = await simulatorsFor(sims, { finishMs: 300 });
    gw = await startGatewayProcess({
      ...simEnv,
      GATEWAY_DB: join(dir, 'gateway.db'),
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_ADMIN_KEY: ADMIN_KEY,
      HOST: '127.0.0.1',
      PORT: '0',
      ...env,
    });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // Signed in once for the pages: the key in this origin's sessionStorage, as the form leaves it.
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

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(base() + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  return {
    get base() {
      return base();
    },
    get browser() {
      if (!browser) throw new Error('the console session is not set up');
      return browser;
    },
    sims,
    admin,
    async spender(name, n) {
      const { json } = await admin('POST', '/admin/tokens', { group: 'default', name });
      for (let i = 0; i < n; i++) {
        const res = await fetch(base() + ALPHA_PATH, {
          method: 'POST',
          headers: { authorization: `Bearer ${json.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(ALPHA_BODY),
        });
        assert.equal(res.status, 200, await res.text());
      }
      return { id: json.token.id, key: json.key };
    },
    async open(hash) {
      if (!context) throw new Error('the console session is not set up');
      const page = await context.newPage();
      page.on('request', (r) => {
        if (!r.url().startsWith(base()) && !r.url().startsWith('data:')) foreign.push(r.url());
      });
      await page.goto(`${base()}/admin/#${hash}`);
      await page.locator('main[aria-busy="false"]').waitFor();
      return page;
    },
    shot: (page, name) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true }),
    async submit(page, button) {
      // The heading is drawn anew with each page: the old one marked, a fresh one means the redraw landed.
      await page.locator('main > h1').evaluate((e) => e.setAttribute('data-drawn-before', ''));
      await page.getByRole('button', { name: button, exact: true }).click();
      await page.locator('main[aria-busy="false"] > h1:not([data-drawn-before])').waitFor();
    },
  };
}
