import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentCalls } from '../../src/routing/recent-calls.js';

const S = 1000;

describe('RecentCalls', () => {
  it('counts calls and failures of the last five minutes, and forgets older ones bucket by bucket', () => {
    const r = new RecentCalls();
    const t0 = 1_000_000 * 30 * S; // the start of a 30 s period
    r.record(t0, false);
    r.record(t0 + 10 * S, true);
    r.record(t0 + 60 * S, true);
    assert.deepEqual(r.totals(t0 + 60 * S), { calls: 3, failures: 2 });
    // five minutes after the first period ended, its two calls are gone; the third stays
    assert.deepEqual(r.totals(t0 + 300 * S), { calls: 1, failures: 1 });
    assert.deepEqual(r.totals(t0 + 390 * S), { calls: 0, failures: 0 });
  });

  it('a long silence empties every bucket, and counting starts again', () => {
    const r = new RecentCalls();
    r.record(0, true);
    r.record(5 * S, false);
    assert.deepEqual(r.totals(3_600 * S), { calls: 0, failures: 0 });
    r.record(3_600 * S, true);
    assert.deepEqual(r.totals(3_601 * S), { calls: 1, failures: 1 });
  });
});
