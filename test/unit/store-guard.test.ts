/**
 * The watch on a shared store's reachability (src/store/store-guard.ts): a failed call makes it
 * ping the store, a failed ping marks it away; while away every call is refused at once and the
 * calls in flight are failed; a call left unanswered makes it ping; a ping that answers brings it
 * back; each change is told once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import type { AvailabilityChange, Store } from '../../src/store/store.js';
import { StoreGuard, untilAvailable } from '../../src/store/store-guard.js';
import { isStoreUnavailable, storeUnavailable } from '../../src/store/unavailable.js';
import { until } from '../helpers/until.js';

/** A store whose ping the test answers, and whose getTask can be made to fail or hang. */
async function fakeStore() {
  const base = await openStore(':memory:');
  const state = { reachable: true, pings: 0, hang: false, fail: false };
  const hung: (() => void)[] = [];
  const store: Omit<Store, 'availability'> = {
    ...base,
    ping: async () => {
      state.pings++;
      if (!state.reachable) throw storeUnavailable(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    },
    getTask: (id: string) => {
      if (state.fail) return Promise.reject(storeUnavailable(new Error('Connection terminated unexpectedly')));
      if (state.hang) return new Promise((resolve) => hung.push(() => resolve(null)));
      return base.getTask(id);
    },
  };
  return { store, state, hung, base };
}

describe('store guard', () => {
  test('a call failing store_unavailable makes it ping; a failed ping marks the store away and is told once', async () => {
    const { store, state } = await fakeStore();
    const guard = new StoreGuard(store, { probeEveryMs: 10_000 });
    const guarded = guard.guarded();
    const changes: AvailabilityChange[] = [];
    guard.onChange((c) => changes.push(c));
    try {
      state.fail = true;
      state.reachable = false;
      await assert.rejects(guarded.getTask('x'), (err) => isStoreUnavailable(err));
      await until('the ping to find it away', () => !guard.up, 2_000);
      assert.deepEqual(changes, [{ up: false, reason: 'connect ECONNREFUSED 127.0.0.1:5432' }]);
      assert.equal(guard.reason, 'connect ECONNREFUSED 127.0.0.1:5432');
      // Away: refused at once, without reaching the store (which would now answer).
      state.fail = false;
      const pings = state.pings;
      const refused = await guarded.getTask('x').then(
        () => null,
        (err: unknown) => err,
      );
      assert.ok(isStoreUnavailable(refused));
      assert.match(String((refused as { details: { cause: Error } }).details.cause.message), /the store is unreachable \(connect ECONNREFUSED/);
      assert.equal(state.pings, pings, 'a refusal asks nothing of the store');
      assert.equal(changes.length, 1, 'refusals are not changes');
    } finally {
      await guarded.close();
    }
  });

  test('a reachable store stays up when a call fails: one broken connection is not an outage', async () => {
    const { store, state } = await fakeStore();
    const guard = new StoreGuard(store, { probeEveryMs: 10_000 });
    const guarded = guard.guarded();
    try {
      state.fail = true;
      await assert.rejects(guarded.getTask('x'), (err) => isStoreUnavailable(err));
      await until('the ping', () => state.pings > 0, 2_000);
      await guard.check();
      assert.equal(guard.up, true);
      state.fail = false;
      assert.equal(await guarded.getTask('x'), null);
    } finally {
      await guarded.close();
    }
  });

  test('a call left unanswered makes it ping; found away, the call in flight fails at once; back, calls go through and it says so', async () => {
    const { store, state, hung } = await fakeStore();
    const guard = new StoreGuard(store, { probeEveryMs: 20, slowCallMs: 100 });
    const guarded = guard.guarded();
    const changes: AvailabilityChange[] = [];
    guard.onChange((c) => changes.push(c));
    try {
      state.hang = true;
      state.reachable = false;
      const started = Date.now();
      let failed: unknown = null;
      guarded.getTask('x').catch((err: unknown) => (failed = err));
      // `until` polls on a timer of its own: the guard's timer alone would not keep this process running.
      await until('the call in flight to fail', () => failed !== null, 2_000);
      assert.ok(isStoreUnavailable(failed));
      assert.ok(Date.now() - started < 2_000, 'failed once found away, not after the call');
      assert.equal(guard.up, false);
      state.reachable = true;
      state.hang = false;
      let back: boolean | null = null;
      void untilAvailable(guard, 2_000).then((b) => (back = b));
      await until('the store to be found back', () => back !== null, 3_000);
      assert.equal(back, true);
      assert.equal(await guarded.getTask('x'), null);
      assert.equal(changes.length, 2);
      assert.equal(changes[1]!.up, true);
      assert.ok(changes[1]!.up && changes[1]!.downMs >= 0);
      // The call the store never answered: its late answer goes nowhere.
      for (const h of hung) h();
    } finally {
      await guarded.close();
    }
  });

  test('untilAvailable gives up after its time while the store stays away', async () => {
    const { store, state } = await fakeStore();
    const guard = new StoreGuard(store, { probeEveryMs: 20 });
    const guarded = guard.guarded();
    try {
      state.reachable = false;
      assert.equal(await guard.check(), false);
      const started = Date.now();
      let back: boolean | null = null;
      void untilAvailable(guard, 100).then((b) => (back = b));
      await until('the wait to end', () => back !== null, 2_000);
      assert.equal(back, false);
      assert.ok(Date.now() - started >= 90);
    } finally {
      await guarded.close();
    }
  });

  test("ping, close and onLedger are the store's own; availability is the guard", async () => {
    const { store } = await fakeStore();
    const guard = new StoreGuard(store, { probeEveryMs: 10_000 });
    const guarded = guard.guarded();
    assert.equal(guarded.availability, guard);
    assert.equal(guarded.onLedger, store.onLedger);
    await guarded.ping();
    await guarded.close();
  });
});
