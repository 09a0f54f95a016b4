import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NewTask, Store } from '../../src/store/store.js';

/**
 * Budgets per period (docs/tokens-and-quota.md, "Budgets"), the part every store driver keeps: the
 * same atomic spend as the quota, exact under racing holds, debits and task creations; a new
 * period from 0; give-backs that lower only the period their debit was made in; ledger rows that
 * name the budget. `open` takes the clock the store counts periods by.
 */
export function budgetContract(driver: string, open: (clock: () => number) => Promise<Store>): void {
  const DAY = 86_400_000;
  /** A clock the test moves. */
  const clockAt = (iso: string) => {
    const c = { now: Date.parse(iso) };
    return { c, clock: () => c.now };
  };
  const req = (ref: string) => ({ ref, model: 'm' });
  const hold = (ref: string) => ({ ref, model: 'm', expiresAt: 10 });
  const task = (tokenId: string, id: string, price: number): NewTask => ({
    id,
    tokenId,
    kind: 'video',
    route: 'r',
    model: 'm',
    upstreamModel: 'm',
    channel: 'c',
    price,
    createdAt: 1,
    deadlineAt: 2,
  });
  let n = 0;
  const token = (store: Store, quota: number | null, budget: number | null, period: 'day' | 'week' | 'month' | `${number}d` | null) =>
    store.createToken({ name: `b${n}`, keyHash: `b${n++}`, group: 'default', models: null, quota, budget, budgetPeriod: period });
  const used = async (store: Store, id: string) => {
    const t = await store.getToken(id);
    return [t?.used, t?.budgetUsed];
  };

  test(`${driver} store: a budget refuses a debit, a hold or a task it cannot pay, and the quota still holds beside it`, async () => {
    const { clock } = clockAt('2026-11-28T10:00:00Z');
    const store = await open(clock);
    try {
      const t = await token(store, null, 10, 'day');
      assert.deepEqual([t.budget, t.budgetPeriod, t.budgetUsed, t.budgetStart], [10, 'day', 0, Date.parse('2026-11-28T00:00:00Z')]);
      assert.equal(await store.debit(t.id, 6, req('a')), true);
      assert.equal(await store.hold(t.id, 5, hold('b')), false, 'a hold the budget cannot pay');
      assert.equal(await store.debit(t.id, 5, req('c')), false, 'a debit the budget cannot pay');
      assert.equal(await store.createTask(task(t.id, 'task_short', 5)), null, 'a task the budget cannot pay');
      assert.equal(await store.getTask('task_short'), null);
      assert.ok(await store.createTask(task(t.id, 'task_fits', 4)));
      assert.deepEqual(await used(store, t.id), [10, 10]);
      assert.equal(await store.hold(t.id, 0, hold('free')), true, 'a free request passes a spent budget');
      const q = await token(store, 5, 100, 'month');
      assert.equal(await store.debit(q.id, 5, req('q1')), true);
      assert.equal(await store.debit(q.id, 1, req('q2')), false, 'the quota refuses what the budget would allow');
      assert.deepEqual(await used(store, q.id), [5, 5]);
      const none = await token(store, null, null, null);
      assert.equal(await store.debit(none.id, 1_000_000, req('n')), true, 'no budget, no limit');
      assert.deepEqual([(await store.getToken(none.id))?.budget, (await store.getToken(none.id))?.budgetUsed], [null, 0]);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: racing holds, debits and task creations never overspend a budget: exactly as many as it admits`, async () => {
    const { clock } = clockAt('2026-11-28T10:00:00Z');
    const store = await open(clock);
    try {
      const t = await token(store, 1000, 30, 'week');
      const racing = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          i % 3 === 0
            ? store.hold(t.id, 1, hold(`h${i}`))
            : i % 3 === 1
              ? store.debit(t.id, 1, req(`d${i}`))
              : store.createTask(task(t.id, `task_r${i}`, 1)).then((x) => x !== null),
        ),
      );
      assert.equal(racing.filter(Boolean).length, 30, 'of 120 racing spends of 1 unit, exactly 30 fit a budget of 30');
      assert.deepEqual(await used(store, t.id), [30, 30]);
      const rows = await store.ledger(t.id, null, 1000);
      assert.equal(rows.filter((r) => r.kind === 'debit').length, 30, 'one debit row each, none for the refused');
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a new period starts from 0; the ledger names the budget of each debit`, async () => {
    const { c, clock } = clockAt('2026-11-28T23:59:59.000Z');
    const store = await open(clock);
    try {
      const t = await token(store, null, 10, 'day');
      assert.equal(await store.debit(t.id, 10, req('late')), true);
      assert.equal(await store.debit(t.id, 1, req('over')), false, 'spent for today');
      c.now = Date.parse('2026-11-29T00:00:00.000Z');
      assert.equal((await store.getToken(t.id))?.budgetUsed, 10, 'a period rolls over on the next spend, not by itself');
      assert.equal(await store.debit(t.id, 7, req('new-day')), true, 'the new day has its own 10 units');
      assert.equal(await store.hold(t.id, 4, hold('too-much')), false);
      const after = await store.getToken(t.id);
      assert.deepEqual([after?.used, after?.budgetUsed, after?.budgetStart], [17, 7, Date.parse('2026-11-29T00:00:00.000Z')]);
      const rows = await store.ledger(t.id, null, 10);
      assert.deepEqual(
        rows.map((r) => [r.ref, r.budgetPeriod, r.budgetStart === null ? null : new Date(r.budgetStart).toISOString()]),
        [
          ['late', 'day', '2026-11-28T00:00:00.000Z'],
          ['new-day', 'day', '2026-11-29T00:00:00.000Z'],
        ],
      );
      const plain = await token(store, null, null, null);
      await store.debit(plain.id, 3, req('plain'));
      assert.deepEqual(
        (await store.ledger(plain.id, null, 10)).map((r) => [r.budgetPeriod, r.budgetStart]),
        [[null, null]],
        'no budget, none named',
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: an N-day budget renews every N days from when it was set`, async () => {
    const { c, clock } = clockAt('2026-11-28T15:30:00.000Z');
    const store = await open(clock);
    try {
      const t = await token(store, null, 5, '3d');
      const anchor = Date.parse('2026-11-28T15:30:00.000Z');
      assert.equal(await store.debit(t.id, 5, req('first')), true);
      c.now = anchor + 3 * DAY - 1;
      assert.equal(await store.debit(t.id, 1, req('still-first')), false, 'the first 3 days are not over');
      c.now = anchor + 3 * DAY;
      assert.equal(await store.debit(t.id, 5, req('second')), true, 'the second period starts 3 days after the anchor');
      c.now = anchor + 10 * DAY;
      assert.equal(await store.debit(t.id, 2, req('fourth')), true);
      assert.deepEqual(
        (await store.ledger(t.id, null, 10)).map((r) => r.budgetStart),
        [anchor, anchor + 3 * DAY, anchor + 9 * DAY],
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a give-back lowers the budget only while the period of its debit runs; after a rollover it leaves the new period alone`, async () => {
    const { c, clock } = clockAt('2026-11-28T12:00:00.000Z');
    const store = await open(clock);
    try {
      const t = await token(store, null, 10, 'day');
      // Made today: a refund, a released hold, a task refund, a settlement, an abort and an expired hold.
      await store.debit(t.id, 2, req('refund-today'));
      await store.hold(t.id, 2, hold('hold-today'));
      await store.createTask(task(t.id, 'task_today', 3));
      await store.createTask(task(t.id, 'task_abort', 1));
      await store.hold(t.id, 1, { ref: 'hold-expired', model: 'm', expiresAt: 5 });
      assert.deepEqual(await used(store, t.id), [9, 9]);
      await store.refund(t.id, 2, req('refund-today'));
      assert.deepEqual(await store.endHolds([{ ref: 'hold-today', outcome: 'refund', tokenId: t.id, model: 'm', amount: 2 }]), ['ended']);
      assert.ok(await store.updateTask('task_today', 1, { status: 'completed', settle: 1 }), 'settled: 2 of 3 go back');
      assert.equal(await store.abortTask('task_abort', 1), true);
      assert.equal((await store.expireHolds(100, 10)).length, 1);
      assert.deepEqual(await used(store, t.id), [1, 1], 'every give-back of today lowered today');
      assert.equal(await store.debit(t.id, 9, req('fills-today')), true, 'so the units can be spent again today');
      assert.equal(await store.debit(t.id, 1, req('over')), false);

      // Made today, given back tomorrow, after tomorrow's first spend.
      await store.refund(t.id, 9, req('fills-today'));
      assert.deepEqual(await used(store, t.id), [1, 1], 'the same day: back again');
      await store.debit(t.id, 4, req('late-today'));
      await store.createTask(task(t.id, 'task_late', 3));
      await store.hold(t.id, 2, hold('hold-late'));
      assert.deepEqual(await used(store, t.id), [10, 10]);
      c.now = Date.parse('2026-11-29T08:00:00.000Z');
      assert.equal(await store.debit(t.id, 6, req('tomorrow')), true);
      assert.deepEqual(await used(store, t.id), [16, 6]);
      await store.refund(t.id, 4, req('late-today'));
      assert.ok(await store.updateTask('task_late', 1, { status: 'failed', refund: true }));
      assert.deepEqual(await store.endHolds([{ ref: 'hold-late', outcome: 'refund', tokenId: t.id, model: 'm', amount: 2 }]), ['ended']);
      assert.deepEqual(await used(store, t.id), [7, 6], 'the quota got them back; tomorrow did not');
      assert.equal(await store.debit(t.id, 5, req('over-tomorrow')), false, 'tomorrow still has 4 left');
      await store.refund(t.id, 6, req('tomorrow'));
      assert.deepEqual(await used(store, t.id), [1, 0], 'a give-back of tomorrow lowers tomorrow');

      const refunds = (await store.ledger(t.id, null, 100)).filter((r) => r.kind !== 'debit');
      const late = refunds.find((r) => r.ref === 'late-today');
      assert.deepEqual([late?.budgetPeriod, late?.budgetStart], ['day', Date.parse('2026-11-28T00:00:00.000Z')], 'a refund names the budget of its debit');
      const balance = await store.ledgerBalance(t.id);
      assert.equal(balance && balance.debit - balance.refund - balance.settle, balance?.used, 'the ledger balances');
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a budget set anew: the amount alone keeps its period and use; a new period starts from 0; null removes it`, async () => {
    const { c, clock } = clockAt('2026-11-28T12:00:00.000Z');
    const store = await open(clock);
    try {
      const t = await token(store, null, null, null);
      const set = await store.setTokenBudget(t.id, 10, 'day');
      assert.deepEqual([set?.budget, set?.budgetPeriod, set?.budgetUsed, set?.budgetAnchor], [10, 'day', 0, c.now]);
      await store.debit(t.id, 8, req('a'));
      c.now += 1000;
      const raised = await store.setTokenBudget(t.id, 20, 'day');
      assert.deepEqual([raised?.budget, raised?.budgetUsed, raised?.budgetAnchor], [20, 8, c.now - 1000], 'the amount alone: the period and its use stay');
      const lowered = await store.setTokenBudget(t.id, 5, 'day');
      assert.equal(lowered?.budgetUsed, 8, 'even below what it used');
      assert.equal(await store.debit(t.id, 1, req('b')), false);
      await store.refund(t.id, 8, req('a'));
      assert.equal((await store.getToken(t.id))?.budgetUsed, 0, 'the period kept is the period of its debits');
      await store.debit(t.id, 4, req('c'));
      const weekly = await store.setTokenBudget(t.id, 5, 'week');
      assert.deepEqual(
        [weekly?.budgetPeriod, weekly?.budgetUsed, weekly?.budgetStart],
        ['week', 0, Date.parse('2026-11-23T00:00:00.000Z')],
        'a new period: nothing used in it',
      );
      await store.refund(t.id, 4, req('c'));
      assert.equal((await store.getToken(t.id))?.budgetUsed, 0, 'a give-back of a debit of the old budget leaves the new one alone');
      const gone = await store.setTokenBudget(t.id, null, null);
      assert.deepEqual([gone?.budget, gone?.budgetPeriod, gone?.budgetUsed, gone?.budgetStart], [null, null, 0, null]);
      assert.equal(await store.debit(t.id, 1000, req('d')), true);
      assert.equal(await store.setTokenBudget('no-such-token', 1, 'day'), null);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a spend by a clock a little behind another replica's never moves the period back`, async () => {
    const { c, clock } = clockAt('2026-11-29T00:00:01.000Z');
    const store = await open(clock);
    try {
      const t = await token(store, null, 10, 'day');
      assert.equal(await store.debit(t.id, 6, req('ahead')), true);
      c.now = Date.parse('2026-11-28T23:59:59.000Z');
      assert.equal(await store.debit(t.id, 5, req('behind')), false, 'counted in the period already started, which has 4 left');
      assert.equal(await store.debit(t.id, 4, req('fits')), true);
      const after = await store.getToken(t.id);
      assert.deepEqual([after?.budgetUsed, after?.budgetStart], [10, Date.parse('2026-11-29T00:00:00.000Z')]);
    } finally {
      await store.close();
    }
  });
}
