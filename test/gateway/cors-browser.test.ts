/**
 * CORS in a real browser (docs/deploying.md, "CORS"): headless Chromium opens a page served by a
 * tiny server of another origin (port 0), and the page's script calls the gateway with fetch() and a
 * bearer key. From a listed origin it reads the answers, errors included, and the exposed
 * x-request-id; from an origin not listed the browser blocks the call after its preflight, so the
 * request itself never reaches the gateway.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { parseCorsOrigins } from '../../src/http/cors.js';
import { browserMissing, launchBrowser } from '../helpers/browser.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';

const missing = browserMissing();
const ALPHA = '/v1beta/models/alpha-3-pro-image-preview:generateContent';

/** The customer's web page: its script calls the gateway as a front end would. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>front end</title>
<script>
  async function callGateway(url, init) {
    try {
      const res = await fetch(url, init);
      return { status: res.status, requestId: res.headers.get('x-request-id'), body: await res.json() };
    } catch (err) {
      return { error: String(err) };
    }
  }
</script>`;

/** What the page's callGateway gives back. */
type Called = { status: number; requestId: string | null; body: any } | { error: string };

/** A log line as pino writes it. */
type Line = Record<string, unknown> & { msg: string };

describe('CORS in Chromium: a page of another origin calls the gateway', { skip: missing ?? false }, () => {
  const pages = [
    createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)),
    createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)),
  ];
  let allowed: string;
  let other: string;
  let h: Harness;
  let browser: Browser;
  const lines: Line[] = [];

  before(async () => {
    allowed = await listenLocal(pages[0]!);
    other = await listenLocal(pages[1]!);
    const log = pino(
      { level: 'info' },
      {
        write(chunk: string) {
          for (const l of chunk.split('\n')) if (l) lines.push(JSON.parse(l) as Line);
        },
      },
    );
    h = await startHarness({ network: { cors: parseCorsOrigins(allowed) }, log });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await h?.close();
    for (const p of pages) await closeLocal(p);
  });

  async function pageAt(origin: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    return page;
  }
  const call = (page: Page, path: string, init: Record<string, unknown>) =>
    page.evaluate(([url, i]) => (globalThis as unknown as { callGateway(u: string, i: unknown): Promise<Called> }).callGateway(url, i), [
      h.url + path,
      init,
    ] as const);

  test('from the listed origin: a preflighted POST with a bearer key, its answer and its exposed x-request-id', async () => {
    const page = await pageAt(allowed);
    try {
      const body = JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'a kite' }] }],
        generationConfig: { responseModalities: ['IMAGE'], imageConfig: {} },
      });
      const got = (await call(page, ALPHA, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json', 'x-request-id': 'from-the-browser-1' },
        body,
      })) as Exclude<Called, { error: string }>;
      assert.equal(got.status, 200, JSON.stringify(got));
      assert.equal(got.requestId, 'from-the-browser-1', 'the page reads the exposed x-request-id');
      assert.ok(
        got.body.candidates[0].content.parts.some((p: any) => p.inlineData?.data),
        'the page reads the image',
      );
      assert.ok(
        lines.some((l) => l.msg === 'request' && l.route === 'preflight'),
        'the browser asked first',
      );

      const models = (await call(page, '/v1/models', { headers: { authorization: `Bearer ${h.key}` } })) as Exclude<Called, { error: string }>;
      assert.equal(models.status, 200);
      assert.ok(models.body.data.length > 0);
      assert.ok(models.requestId);

      // An error of the catalogue is readable too: the page can tell the user what went wrong.
      const refused = (await call(page, '/v1/models', { headers: { authorization: 'Bearer not-a-key' } })) as Exclude<Called, { error: string }>;
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error.code, 'invalid_api_key');
      assert.ok(refused.requestId);
    } finally {
      await page.close();
    }
  });

  test('from an origin not listed: the browser blocks the call, and the request never reaches the gateway', async () => {
    const page = await pageAt(other);
    try {
      const listed = () => lines.filter((l) => l.msg === 'request' && l.route === 'models-list').length;
      const before = listed();
      const got = await call(page, '/v1/models', { headers: { authorization: `Bearer ${h.key}` } });
      assert.ok('error' in got, JSON.stringify(got));
      assert.match(got.error, /TypeError: Failed to fetch/);
      assert.equal(listed(), before, 'only the preflight came; the browser did not send the request');
      const simple = await call(page, `/v1/models?key=${h.key}`, {});
      assert.ok('error' in simple, 'a request with no preflight is sent, but its answer is kept from the page');
    } finally {
      await page.close();
    }
  });
});
