/** The keys' rate limits in one process (no Redis): the sliding window, the slots in flight, and the reset text of the headers. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groupSubject, KeyLimiter, RPM_WINDOW_MS } from '../../src/live/key-limiter.js';
import { perProcess } from '../../src/live/shared-live.js';
import { resetText } from '../../src/pipeline/key-limits.js';

test('key limiter, per process: rpm admits N in a sliding minute, then says when the oldest leaves', async () => {
  let now = 1_000_000;
  const limiter = new KeyLimiter(perProcess, () => now);
  const limits = { rpm: 3, maxParallel: null };
  const first = await limiter.admit('k', limits);
  assert.ok(first.admitted);
  assert.deepEqual([first.limit, first.remaining, first.resetMs], [3, 2, RPM_WINDOW_MS]);
  now += 10_000;
  assert.equal((await limiter.admit('k', limits)).remaining, 1);
  now += 10_000;
  const third = await limiter.admit('k', limits);
  assert.ok(third.admitted);
  assert.equal(third.remaining, 0);
  const refused = await limiter.admit('k', limits);
  assert.ok(!refused.admitted);
  assert.equal(refused.refusedBy, 'rpm');
  assert.equal(refused.retryAfterMs, RPM_WINDOW_MS - 20_000, 'the first request leaves the window 40 s from now');
  assert.equal(refused.resetMs, RPM_WINDOW_MS, 'the last one in 60 s');
  assert.ok((await limiter.admit('other', limits)).admitted, 'each key has its own window');
  now += RPM_WINDOW_MS - 20_000;
  const later = await limiter.admit('k', limits);
  assert.ok(later.admitted, 'the oldest left the window');
  assert.equal(later.remaining, 0);
  assert.ok(!(await limiter.admit('k', limits)).admitted, 'a refused request was not counted, and no more than 3 fit');
});

test('key limiter, per process: max_parallel admits M at once; a slot comes back once, when released', async () => {
  const limiter = new KeyLimiter(perProcess);
  const limits = { rpm: null, maxParallel: 2 };
  const a = await limiter.admit('k', limits);
  const b = await limiter.admit('k', limits);
  assert.ok(a.admitted && b.admitted);
  assert.deepEqual([a.remaining, b.remaining], [1, 0]);
  const c = await limiter.admit('k', limits);
  assert.ok(!c.admitted);
  assert.deepEqual([c.refusedBy, c.retryAfterMs], ['max_parallel', 1_000]);
  a.release();
  a.release();
  const d = await limiter.admit('k', limits);
  assert.ok(d.admitted, 'the released slot');
  assert.ok(!(await limiter.admit('k', limits)).admitted, 'releasing twice gave back one slot');
});

test('key limiter, per process: a request refused by rpm gives its in-flight slot back', async () => {
  const limiter = new KeyLimiter(perProcess);
  const limits = { rpm: 1, maxParallel: 1 };
  const a = await limiter.admit('k', limits);
  assert.ok(a.admitted);
  assert.equal(a.limit, 1, 'the headers describe the rpm limit when there is one');
  a.release();
  const b = await limiter.admit('k', limits);
  assert.ok(!b.admitted);
  assert.equal(b.refusedBy, 'rpm');
  const c = await limiter.admit('k', { rpm: null, maxParallel: 1 });
  assert.ok(c.admitted, 'the slot b took was given back');
});

test('key limiter, per process: refund gives back the slot and the request counted; a group has its own window', async () => {
  const limiter = new KeyLimiter(perProcess);
  const limits = { rpm: 2, maxParallel: 1 };
  const a = await limiter.admit('k', limits);
  assert.ok(a.admitted);
  a.refund();
  a.refund();
  const b = await limiter.admit('k', limits);
  assert.ok(b.admitted, 'the slot came back');
  assert.equal(b.remaining, 1, 'and the window holds one request, not two: refunding twice took back one');
  b.release();
  assert.ok((await limiter.admit('k', limits)).admitted);
  assert.ok(!(await limiter.admit('k', { rpm: 2, maxParallel: null })).admitted, 'two counted, no more');
  assert.ok((await limiter.admit(groupSubject('k'), limits)).admitted, 'a group named like a key has windows and slots of its own');
});

test("reset text: OpenAI's duration form", () => {
  assert.deepEqual([0, 20, 999, 1_000, 1_500, 59_000, 60_000, 360_000, 61_250, 3_600_000].map(resetText), [
    '0s',
    '20ms',
    '999ms',
    '1s',
    '1.5s',
    '59s',
    '1m0s',
    '6m0s',
    '1m1.25s',
    '1h0m0s',
  ]);
});
