/**
 * GATEWAY_CORS_ORIGINS (src/http/cors.ts): its grammar, and the headers a route's preflight allows,
 * derived from what the route reads.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { parseCorsOrigins, requestHeadersOf } from '../../src/http/cors.js';

test('the grammar: unset, *, or exact origins as browsers send them', () => {
  for (const off of [undefined, '', '  ']) assert.equal(parseCorsOrigins(off), null);
  assert.deepEqual(parseCorsOrigins('*'), { any: true, origins: new Set() });
  const listed = parseCorsOrigins(' https://app.example.com, http://localhost:5173 ,HTTPS://Shop.Example.COM:8443');
  assert.deepEqual(listed, { any: false, origins: new Set(['https://app.example.com', 'http://localhost:5173', 'https://shop.example.com:8443']) });
  const refused: [string, RegExp][] = [
    ['https://app.example.com/', /is not an origin \(no path, no trailing slash, no default port\); did you mean https:\/\/app\.example\.com\?/],
    ['https://app.example.com/ui', /did you mean https:\/\/app\.example\.com\?/],
    ['https://app.example.com:443', /did you mean https:\/\/app\.example\.com\?/],
    ['app.example.com', /is not an origin; write each as scheme:\/\/host\[:port\]/],
    ['ftp://files.example.com', /is not an origin; write each as scheme:\/\/host\[:port\]/],
    ['null', /is not an origin/],
    ['*, https://app.example.com', /\* allows every origin; give it alone/],
  ];
  for (const [raw, message] of refused)
    assert.throws(
      () => parseCorsOrigins(raw),
      (err: Error) => err.message.startsWith('GATEWAY_CORS_ORIGINS') && message.test(err.message),
      raw,
    );
  assert.throws(() => parseCorsOrigins(Array.from({ length: 101 }, (_, i) => `https://a${i}.example`).join(',')), /more than 100 origins/);
});

test("a route's allowed request headers are what it reads: its key's header, the body's type, ids, range for files", () => {
  const snapshot = loadConfigOrThrow(PROJECT_ROOT, { env: {} });
  const every = new Set(snapshot.routes.flatMap(requestHeadersOf));
  // Nothing beyond the headers some stage of the gateway reads (src/pipeline/authenticate.ts,
  // src/http/read-json.ts, src/http/request-id.ts, src/operations/vendor-file.ts) and the key headers routes.yaml names.
  const keyHeaders = snapshot.routes.flatMap((r) => r.keySources.flatMap((s) => (s.from === 'header' ? [s.name.toLowerCase()] : [])));
  const read = new Set(['authorization', 'content-type', 'content-encoding', 'x-request-id', 'traceparent', 'tracestate', 'range', 'if-range', ...keyHeaders]);
  for (const h of every) assert.ok(read.has(h), `${h} is read by the gateway`);
  assert.ok(keyHeaders.length > 0, 'the shipped routes take a key in a header of their own (x-goog-api-key)');
  for (const route of snapshot.routes) {
    const headers = requestHeadersOf(route);
    assert.equal(
      headers.includes('authorization'),
      route.keySources.some((s) => s.from === 'bearer'),
      route.id,
    );
    assert.equal(headers.includes('content-type'), route.body !== null, route.id);
    assert.equal(headers.includes('range'), route.kind === 'task-content' || route.kind === 'link-content', route.id);
    assert.ok(headers.includes('x-request-id'), route.id);
  }
});
