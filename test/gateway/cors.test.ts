/**
 * CORS (GATEWAY_CORS_ORIGINS; docs/deploying.md, "CORS") over real HTTP: preflights answered with the
 * methods of the path and the headers its routes read, answers (errors too) readable by an allowed
 * origin with the ids, wait and rate-limit headers exposed, nothing for an origin not allowed, `*`
 * only on routes that take a key, operator paths never, and with the setting unset nothing changes.
 * The browser's side of it: test/gateway/cors-browser.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseCorsOrigins } from '../../src/http/cors.js';
import { startHarness, type Harness } from '../helpers/harness.js';

const APP = 'https://app.example.com';
const ALPHA = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const ADMIN_KEY = 'cors-admin-key';
const alphaBody = JSON.stringify({
  contents: [{ role: 'user', parts: [{ text: 'a kite' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: {} },
});

/** A browser's preflight for `method` on `path` from `origin`. */
function preflight(h: Harness, path: string, origin: string, method = 'POST', headers = 'authorization, content-type') {
  return fetch(h.url + path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

/** The access-control-* headers of an answer, by name. */
function corsHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of res.headers) if (k.startsWith('access-control-')) out[k] = v;
  return out;
}

const list = (v: string | null) => (v ?? '').split(',').map((s) => s.trim());

describe('CORS with listed origins', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ network: { cors: parseCorsOrigins(`${APP}, http://localhost:5173`) }, adminKey: ADMIN_KEY });
  });
  after(() => h.close());

  test('a preflight from a listed origin: 204, the origin echoed, the methods of the path, the headers its routes read', async () => {
    const res = await preflight(h, ALPHA, APP);
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    assert.ok(list(res.headers.get('vary')).includes('origin'));
    assert.equal(res.headers.get('access-control-allow-methods'), 'POST');
    const allowed = list(res.headers.get('access-control-allow-headers'));
    for (const name of ['authorization', 'x-goog-api-key', 'content-type', 'content-encoding', 'x-request-id', 'traceparent', 'tracestate'])
      assert.ok(allowed.includes(name), name);
    assert.ok(!allowed.includes('range'), 'this route serves no file');
    assert.equal(res.headers.get('access-control-max-age'), '600');
    assert.equal(res.headers.get('access-control-allow-credentials'), null, 'no credentials mode');
    // A path of several routes offers each one's method; a file route allows Range and If-Range (a resume).
    const videos = await preflight(h, '/v1/videos/task_x', APP, 'DELETE');
    assert.deepEqual(list(videos.headers.get('access-control-allow-methods')).sort(), ['DELETE', 'GET']);
    const content = await preflight(h, '/v1/videos/task_x/content', APP, 'GET', 'range');
    assert.ok(list(content.headers.get('access-control-allow-headers')).includes('range'));
    assert.ok(list(content.headers.get('access-control-allow-headers')).includes('if-range'));
  });

  test("a preflight allows the headers the browser asks for (an official SDK's own), bounded and only header names", async () => {
    const asked = 'x-stainless-os, X-Stainless-Lang, x-goog-api-client, bad header, ' + Array.from({ length: 60 }, (_, i) => `x-extra-${i}`).join(', ');
    const res = await preflight(h, ALPHA, APP, 'POST', asked);
    assert.equal(res.status, 204);
    const allowed = list(res.headers.get('access-control-allow-headers'));
    for (const name of ['x-stainless-os', 'x-stainless-lang', 'x-goog-api-client', 'authorization', 'x-extra-0']) assert.ok(allowed.includes(name), name);
    assert.ok(!allowed.includes('bad header'), 'not a header name');
    assert.ok(!allowed.includes('x-extra-59'), 'at most 50 asked headers');
    assert.ok(list(res.headers.get('vary')).includes('access-control-request-headers'));
    // An origin not allowed is still told nothing.
    const stranger = await preflight(h, ALPHA, 'https://evil.example', 'POST', asked);
    assert.equal(stranger.headers.get('access-control-allow-headers'), null);
  });

  test('a preflight from an origin not listed: 204 with no CORS header, so the browser refuses', async () => {
    for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.example', 'http://app.example.com', 'null']) {
      const res = await preflight(h, ALPHA, origin);
      assert.equal(res.status, 204, origin);
      assert.deepEqual(corsHeaders(res), {}, origin);
    }
  });

  test('answers to a listed origin are readable, errors included, with the ids, wait and rate-limit headers exposed', async () => {
    const ok = await fetch(h.url + ALPHA, {
      method: 'POST',
      headers: { origin: APP, authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
      body: alphaBody,
    });
    assert.equal(ok.status, 200, await ok.text());
    assert.equal(ok.headers.get('access-control-allow-origin'), APP);
    const exposed = list(ok.headers.get('access-control-expose-headers'));
    for (const name of ['x-request-id', 'retry-after', 'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'])
      assert.ok(exposed.includes(name), name);
    // Errors of the catalogue: a missing key (401), a bad body (400), an unknown path (404), a wrong method (405).
    const answers = [
      await fetch(h.url + ALPHA, { method: 'POST', headers: { origin: APP, 'content-type': 'application/json' }, body: alphaBody }),
      await fetch(h.url + ALPHA, { method: 'POST', headers: { origin: APP, authorization: `Bearer ${h.key}`, 'content-type': 'application/json' }, body: '{' }),
      await fetch(`${h.url}/v1/nothing-here`, { headers: { origin: APP } }),
      await fetch(h.url + ALPHA, { method: 'PUT', headers: { origin: APP } }),
    ];
    assert.deepEqual(
      answers.map((r) => r.status),
      [401, 400, 404, 405],
    );
    for (const res of answers) {
      assert.equal(res.headers.get('access-control-allow-origin'), APP, String(res.status));
      assert.ok(list(res.headers.get('access-control-expose-headers')).includes('x-request-id'), String(res.status));
      assert.ok(res.headers.get('x-request-id'));
    }
    // The link route opens to a listed origin too (its URL is the credential; the origin is named).
    const link = await fetch(`${h.url}/v1/links/nonesuch`, { headers: { origin: APP } });
    assert.equal(link.status, 404);
    assert.equal(link.headers.get('access-control-allow-origin'), APP);
  });

  test('no CORS header for an origin not listed or a request with no Origin; the answer still varies by Origin', async () => {
    const other = await fetch(`${h.url}/v1/models`, { headers: { origin: 'https://evil.example.com', authorization: `Bearer ${h.key}` } });
    assert.equal(other.status, 200);
    assert.deepEqual(corsHeaders(other), {});
    assert.ok(list(other.headers.get('vary')).includes('origin'));
    const none = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${h.key}` } });
    assert.deepEqual(corsHeaders(none), {});
  });

  test('operator paths are never CORS-enabled: /admin/*, /metrics, the probes, the console', async () => {
    const auth = { authorization: `Bearer ${ADMIN_KEY}` };
    for (const path of ['/admin/tokens', '/metrics', '/healthz', '/readyz', '/admin/', '/openapi.json']) {
      const res = await fetch(h.url + path, { headers: { origin: APP, ...auth } });
      assert.ok(res.status < 500, `${path}: ${res.status}`);
      assert.deepEqual(corsHeaders(res), {}, path);
      const pre = await preflight(h, path, APP, 'GET');
      assert.deepEqual(corsHeaders(pre), {}, `preflight of ${path}`);
      assert.notEqual(pre.status, 204, `preflight of ${path}: answered as before, not as a preflight`);
    }
  });
});

describe('CORS with *', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ network: { cors: parseCorsOrigins('*') } });
  });
  after(() => h.close());

  test('routes that take a key allow any origin with *, and no credentials', async () => {
    const pre = await preflight(h, ALPHA, 'https://anyone.example');
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.equal(pre.headers.get('access-control-allow-credentials'), null);
    assert.ok(list(pre.headers.get('access-control-allow-headers')).includes('authorization'), '* does not cover Authorization: it is named');
    const res = await fetch(`${h.url}/v1/models`, { headers: { origin: 'https://anyone.example', authorization: `Bearer ${h.key}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.ok(list(res.headers.get('access-control-expose-headers')).includes('x-request-id'));
  });

  test('the link route, which takes no key, is not opened by *', async () => {
    const pre = await preflight(h, '/v1/links/nonesuch', 'https://anyone.example', 'GET', 'range');
    assert.equal(pre.status, 204);
    assert.deepEqual(corsHeaders(pre), {});
    const res = await fetch(`${h.url}/v1/links/nonesuch`, { headers: { origin: 'https://anyone.example' } });
    assert.equal(res.status, 404);
    assert.deepEqual(corsHeaders(res), {});
  });
});

describe('CORS unset', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  test('no CORS header anywhere, and a preflight is answered 405 as before', async () => {
    const pre = await preflight(h, ALPHA, APP);
    assert.equal(pre.status, 405);
    assert.equal(pre.headers.get('allow'), 'POST');
    assert.deepEqual(corsHeaders(pre), {});
    const res = await fetch(`${h.url}/v1/models`, { headers: { origin: APP, authorization: `Bearer ${h.key}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(corsHeaders(res), {});
    assert.equal(res.headers.get('vary'), null);
  });
});
