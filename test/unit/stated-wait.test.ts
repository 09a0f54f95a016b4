/**
 * Vendor-stated waits (docs/client-api.md, "Errors" and the channels.yaml reference): what counts as a wait,
 * its bounds, and how an error mapping's `retry_after` and the vendor's Retry-After header combine.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CompiledOperation } from '../../src/config/snapshot.js';
import { compileMapping } from '../../src/mapping/mapping.js';
import { mapFailure } from '../../src/pipeline/map-response.js';
import { statedWait } from '../../src/pipeline/stated-wait.js';
import type { UpstreamResponse } from '../../src/upstream/upstream-request.js';

const NOW = Date.parse('2026-01-01T00:00:00.000Z');

test('a wait is seconds (a number or a numeric string) or a moment after now, at most an hour', () => {
  assert.equal(statedWait(7, NOW), 7);
  assert.equal(statedWait('7', NOW), 7);
  assert.equal(statedWait(' 12 ', NOW), 12, 'a header value may carry spaces');
  assert.equal(statedWait(1.5, NOW), 1.5, 'fractions are kept; the answer rounds up');
  assert.equal(statedWait(['9', '4'], NOW), 9, 'the first of a repeated header');
  assert.equal(statedWait('Thu, 01 Jan 2026 00:00:45 GMT', NOW), 45, 'an HTTP-date');
  assert.equal(statedWait('2026-01-01T00:02:00Z', NOW), 120, 'an ISO time with its zone');
  assert.equal(statedWait('2026-01-01T01:00:30+01:00', NOW), 30);
  assert.equal(statedWait('2026', NOW), 2026, 'a bare number is seconds, never a year (as Date.parse would read it)');
  assert.equal(statedWait(86_400, NOW), 3600, 'a day is passed on as an hour');
  assert.equal(statedWait('Fri, 02 Jan 2026 00:00:00 GMT', NOW), 3600);
});

test('nonsense states no wait, so the routing default applies', () => {
  for (const v of [0, '0', -5, '-5', Number.NaN, Infinity, '', '  ', 'soon', '37s', '1e3', '0x10', true, null, undefined, {}, [], { seconds: 5 }]) {
    assert.equal(statedWait(v, NOW), undefined, `${JSON.stringify(v)} states no wait`);
  }
  assert.equal(statedWait('Wed, 31 Dec 2025 23:59:00 GMT', NOW), undefined, 'a moment already past');
  assert.equal(statedWait('January 1, 2026 00:01', NOW), undefined, 'a loose date form is not guessed at');
  assert.equal(statedWait('2026-01-01T00:01:00', NOW), undefined, 'an ISO time without a zone names no moment');
});

/** An operation whose error mapping is `expr`, as mapFailure reads it. */
const op = (expr: string) => ({ error: compileMapping(expr, 'test:1') }) as unknown as CompiledOperation;
const answer = (status: number, body: unknown, headers: Record<string, string> = {}): UpstreamResponse => ({
  status,
  headers,
  body: Buffer.from(JSON.stringify(body)),
});
const ctx = { now: new Date(NOW).toISOString() };

test("an error mapping's retry_after becomes the error's wait, from the body or the lower-cased headers", async () => {
  const fromBody = await mapFailure(op('{ "code": "too_many_requests", "message": "slow down", "retry_after": body.wait }'), answer(429, { wait: 17 }), ctx);
  assert.equal(fromBody.code, 'too_many_requests');
  assert.equal(fromBody.details.retryAfter, 17);
  const fromHeader = await mapFailure(
    op('{ "code": "upstream_unavailable", "message": "busy", "retry_after": headers."x-vendor-wait" }'),
    answer(503, {}, { 'x-vendor-wait': '40' }),
    ctx,
  );
  assert.equal(fromHeader.details.retryAfter, 40);
  const date = await mapFailure(op('{ "code": "too_many_requests", "retry_after": body.until }'), answer(429, { until: '2026-01-01T00:00:10Z' }), ctx);
  assert.equal(date.details.retryAfter, 10, 'a moment counts from the request clock the mappings see as now');
});

test("the mapping's wait wins over the Retry-After header, which stands when the mapping states none it can use", async () => {
  const both = await mapFailure(op('{ "code": "too_many_requests", "retry_after": body.wait }'), answer(429, { wait: 20 }, { 'retry-after': '7' }), ctx);
  assert.equal(both.details.retryAfter, 20);
  const nonsense = await mapFailure(
    op('{ "code": "too_many_requests", "retry_after": body.wait }'),
    answer(429, { wait: 'soon' }, { 'retry-after': '7' }),
    ctx,
  );
  assert.equal(nonsense.details.retryAfter, 7);
  const none = await mapFailure(op('{ "code": "too_many_requests", "retry_after": body.wait }'), answer(429, { wait: -1 }), ctx);
  assert.equal(none.details.retryAfter, undefined);
  const noMapping = await mapFailure({ error: null } as unknown as CompiledOperation, answer(429, {}, { 'retry-after': 'Thu, 01 Jan 2026 00:01:00 GMT' }), ctx);
  assert.equal(noMapping.code, 'too_many_requests');
  assert.equal(noMapping.details.retryAfter, 60, 'a header HTTP-date, without any mapping');
});
