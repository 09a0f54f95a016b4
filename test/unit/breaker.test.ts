import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BreakerPolicy } from '../../src/config/snapshot.js';
import { Breaker } from '../../src/routing/breaker.js';

const policy = (p: Partial<BreakerPolicy> = {}): BreakerPolicy => ({ enabled: true, consecutiveFailures: 3, failureRate: null, cooldownMs: 1000, ...p });

describe('Breaker', () => {
  it('opens after consecutive failures; a success in between starts the count again', () => {
    const b = new Breaker();
    const p = policy();
    b.record(p, 'failure', 0, false);
    b.record(p, 'failure', 1, false);
    b.record(p, 'success', 2, false);
    b.record(p, 'failure', 3, false);
    b.record(p, 'failure', 4, false);
    assert.equal(b.state, 'closed');
    assert.equal(b.record(p, 'failure', 5, false), 'open');
    assert.equal(b.retryAt, 1005);
  });

  it('refuses while open, then admits exactly one probe', () => {
    const b = new Breaker();
    const p = policy({ consecutiveFailures: 1 });
    b.record(p, 'failure', 0, false);
    assert.deepEqual(b.admit(p, 999), { ok: false, retryAt: 1000 });
    assert.deepEqual(b.admit(p, 1000), { ok: true, probe: true });
    assert.equal(b.state, 'half_open');
    assert.equal(b.admit(p, 1001).ok, false, 'a second call waits for the probe');
    assert.equal(b.record(p, 'success', 1002, true), 'closed');
    assert.deepEqual(b.admit(p, 1003), { ok: true, probe: false });
  });

  it('peek answers what admit would, and takes neither the half-open state nor the probe', () => {
    const b = new Breaker();
    const p = policy({ consecutiveFailures: 1 });
    assert.deepEqual(b.peek(p, 0), { ok: true, probe: false });
    b.record(p, 'failure', 0, false);
    assert.deepEqual(b.peek(p, 999), { ok: false, retryAt: 1000 });
    assert.deepEqual(b.peek(p, 1000), { ok: true, probe: true });
    assert.deepEqual(b.peek(p, 1000), { ok: true, probe: true }, 'looked at twice: still one probe to give');
    assert.equal(b.state, 'open', 'a look does not half open it');
    assert.deepEqual(b.admit(p, 1000), { ok: true, probe: true }, 'the real call still gets the probe');
    assert.equal(b.peek(p, 1001).ok, false, 'then a look sees it taken');
  });

  it('a failed probe opens it for another cool-down; a neutral probe leaves room for the next', () => {
    const b = new Breaker();
    const p = policy({ consecutiveFailures: 1 });
    b.record(p, 'failure', 0, false);
    assert.ok(b.admit(p, 1000).ok);
    assert.equal(b.record(p, 'neutral', 1001, true), null);
    assert.deepEqual(b.admit(p, 1002), { ok: true, probe: true }, 'a rate-limited probe says nothing; the next call probes');
    assert.equal(b.record(p, 'failure', 1003, true), 'open');
    assert.equal(b.retryAt, 2003);
  });

  it('a late success of a call admitted before it opened does not close it', () => {
    const b = new Breaker();
    const p = policy({ consecutiveFailures: 1 });
    b.record(p, 'failure', 0, false);
    assert.equal(b.record(p, 'success', 1, false), null);
    assert.equal(b.state, 'open');
  });

  it('opens on a failure rate over the window once enough calls were seen', () => {
    const b = new Breaker();
    const p = policy({ consecutiveFailures: 1000, failureRate: { threshold: 0.5, windowMs: 10_000, minRequests: 10 } });
    // 4 failures in 8 calls: the share is there but not the volume.
    for (let i = 0; i < 8; i++) b.record(p, i % 2 ? 'failure' : 'success', i * 100, false);
    assert.equal(b.state, 'closed');
    b.record(p, 'success', 900, false);
    assert.equal(b.record(p, 'failure', 1000, false), 'open', '5 of 10');
  });

  it('forgets calls older than the window', () => {
    const b = new Breaker();
    const p = policy({ consecutiveFailures: 1000, failureRate: { threshold: 0.5, windowMs: 1000, minRequests: 4 } });
    for (let i = 0; i < 3; i++) b.record(p, 'failure', i, false);
    assert.deepEqual(b.window(p, 10), { calls: 3, failures: 3 });
    assert.deepEqual(b.window(p, 5000), { calls: 0, failures: 0 });
    assert.equal(b.record(p, 'failure', 5000, false), null, 'one fresh failure is below min_requests');
  });

  it('does nothing when disabled', () => {
    const b = new Breaker();
    const p = policy({ enabled: false, consecutiveFailures: 1 });
    b.record(p, 'failure', 0, false);
    assert.deepEqual(b.admit(p, 1), { ok: true, probe: false });
  });
});
