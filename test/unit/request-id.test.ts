import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { formatUuid7, MAX_REQUEST_ID, newRequestUuid, parseTraceparent, requestIds } from '../../src/http/request-id.js';
import { addCallerHeaders, traceparentOf } from '../../src/upstream/trace-headers.js';
import type { UpstreamRequest } from '../../src/upstream/upstream-request.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('request ids and trace context', () => {
  test('a safe client id is kept, with a reference of our own; ours is its own reference', () => {
    const kept = requestIds({ 'x-request-id': 'abc-123' });
    assert.equal(kept.requestId, 'abc-123');
    assert.notEqual(kept.ref, 'abc-123');
    assert.notEqual(requestIds({ 'x-request-id': 'abc-123' }).ref, kept.ref, 'the same client id twice: two references');
    const made = requestIds({});
    assert.equal(made.ref, made.requestId);
    assert.equal(requestIds({ 'x-request-id': 'z'.repeat(MAX_REQUEST_ID) }).requestId.length, MAX_REQUEST_ID);
  });

  test('an unsafe client id is replaced', () => {
    for (const bad of ['', 'z'.repeat(MAX_REQUEST_ID + 1), 'a b', 'a\tb', 'a,b', 'a"b', 'caf\u00e9', 'a\u2028b']) {
      const ids = requestIds({ 'x-request-id': bad });
      assert.notEqual(ids.requestId, bad, JSON.stringify(bad));
      assert.equal(ids.ref, ids.requestId);
    }
  });

  test('traceparent parsing follows W3C', () => {
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${PARENT}-01`), { traceId: TRACE, parentId: PARENT, flags: '01' });
    assert.deepEqual(parseTraceparent(`cc-${TRACE}-${PARENT}-09-what-the-future-holds`), { traceId: TRACE, parentId: PARENT, flags: '09' });
    for (const bad of [
      undefined,
      ['a', 'b'],
      `00-${TRACE}-${PARENT}-01-x`,
      `ff-${TRACE}-${PARENT}-01`,
      `00-${'0'.repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
      `00-${TRACE}-${PARENT}-1`,
      `00_${TRACE}_${PARENT}_01`,
      `cc-${TRACE}-${PARENT}-01x`,
    ]) {
      assert.equal(parseTraceparent(bad as string), null, JSON.stringify(bad));
    }
  });

  test("a caller's trace is continued under a new span of ours; without one a new, unsampled trace starts", () => {
    const cont = requestIds({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'congo=t61rcWkgMzE' });
    assert.equal(cont.trace.traceId, TRACE);
    assert.match(cont.trace.spanId, /^[0-9a-f]{16}$/);
    assert.notEqual(cont.trace.spanId, PARENT);
    assert.equal(cont.trace.flags, '01');
    assert.equal(cont.trace.state, 'congo=t61rcWkgMzE');
    const fresh = requestIds({ tracestate: 'congo=t61rcWkgMzE' });
    assert.match(fresh.trace.traceId, /^[0-9a-f]{32}$/);
    assert.equal(fresh.trace.flags, '00');
    assert.equal(fresh.trace.state, null, 'a tracestate without its traceparent is meaningless');
    assert.equal(requestIds({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'k=v'.padEnd(513, 'v') }).trace.state, null, 'too long');
    assert.equal(requestIds({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'k=\u00e9' }).trace.state, null, 'not ASCII');
    assert.equal(traceparentOf(cont.trace), `00-${TRACE}-${cont.trace.spanId}-01`);
  });

  test('trace and span ids stay well formed and distinct across many requests (the random pool refills)', () => {
    const traces = new Set<string>();
    const spans = new Set<string>();
    // 1,000 requests draw 24,000 bytes: the 4 KB pool is refilled several times.
    for (let i = 0; i < 1000; i++) {
      const { trace } = requestIds({});
      assert.match(trace.traceId, /^[0-9a-f]{32}$/);
      assert.match(trace.spanId, /^[0-9a-f]{16}$/);
      traces.add(trace.traceId);
      spans.add(trace.spanId);
    }
    assert.equal(traces.size, 1000);
    assert.equal(spans.size, 1000);
  });

  test("vendor calls get the ids, unless the profile's mapping set a header of that name", () => {
    const ids = requestIds({ 'x-request-id': 'r-1', traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'a=b' });
    const req: UpstreamRequest = { method: 'POST', path: '/x', query: {}, headers: { 'X-Request-Id': 'the-vendors-own' }, body: null };
    addCallerHeaders(req, ids);
    assert.deepEqual(req.headers, { 'X-Request-Id': 'the-vendors-own', traceparent: traceparentOf(ids.trace), tracestate: 'a=b' });
    const none: UpstreamRequest = { method: 'GET', path: '/x', query: {}, headers: {}, body: null };
    addCallerHeaders(none, undefined);
    assert.deepEqual(none.headers, {}, 'a call for no request (the poller) carries none');
  });
});

test('the ids we make are UUIDs of version 7: their time first, so the store appends them to its indexes in order', () => {
  const shape = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const at = Date.UTC(2026, 10, 28, 14, 2, 0, 123);
  const id = newRequestUuid(at);
  assert.match(id, shape);
  assert.equal(Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16), at, 'the first 48 bits are the Unix milliseconds');
  const ids = Array.from({ length: 10_000 }, (_, i) => newRequestUuid(at + Math.floor(i / 100)));
  assert.equal(new Set(ids).size, ids.length, 'no two alike');
  for (let i = 100; i < ids.length; i += 100) assert.ok((ids[i - 1] ?? '') < (ids[i] ?? ''), 'a later millisecond sorts after an earlier one');
  const made = requestIds({});
  assert.match(made.requestId, shape);
  assert.equal(made.ref, made.requestId);
  const kept = requestIds({ 'x-request-id': 'client-id-1' });
  assert.equal(kept.requestId, 'client-id-1');
  assert.match(kept.ref, shape, 'our own reference beside a client id');
});

test('a UUID is written as the hex of its time and random bytes, as the string formula wrote it', () => {
  // The formula the ids were made with before they were written into bytes (issue 41).
  const formula = (ms: number, r: string) => {
    const t = ms.toString(16).padStart(12, '0').slice(-12);
    const variant = (0x8 | (Number.parseInt(r[4] ?? '0', 16) & 0x3)).toString(16);
    return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${r.slice(0, 3)}-${variant}${r.slice(5, 8)}-${r.slice(8, 20)}`;
  };
  const times = [0, 1, 15, 16, Date.UTC(2026, 10, 28), 2 ** 48 - 1, 2 ** 48, 2 ** 52 + 12345];
  for (let i = 0; i < 2000; i++) times.push(Math.floor(Math.random() * 2 ** 50));
  for (const ms of times) {
    const bytes = randomBytes(16);
    const at = ms % 7;
    assert.equal(formatUuid7(ms, bytes, at), formula(ms, bytes.toString('hex', at, at + 10)), String(ms));
  }
});
