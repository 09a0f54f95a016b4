import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NewTask, Store, TaskPatch, TaskRecord, TaskWrite } from '../../src/store/store.js';

/**
 * The poller's batched store work, as every driver must do it (TaskStore.updateTasks,
 * renewLeases): a batch of writes is the same as the writes one by one, each a compare-and-set of
 * its own, its money moved once, whatever else the batch holds or races with. `open` takes the
 * clock the store counts budget periods by.
 */
export function taskBatchContract(driver: string, open: (clock: () => number) => Promise<Store>): void {
  let n = 0;
  const newTask = (tokenId: string, id: string, price = 1): NewTask => ({
    id,
    tokenId,
    kind: 'video',
    route: 'r',
    model: 'm',
    upstreamModel: 'um',
    channel: 'c',
    price,
    createdAt: 1000,
    deadlineAt: 9000,
  });
  const token = (store: Store, budget: number | null = 100) =>
    store.createToken({ name: `t${n}`, keyHash: `t${n++}`, group: 'default', models: null, quota: null, budget, budgetPeriod: budget === null ? null : 'day' });
  /** What a record says, its id left out, so twins written differently compare. */
  const facts = (t: TaskRecord | null) => {
    if (!t) return null;
    const { id: _, ...rest } = t;
    return rest;
  };
  const states = async (store: Store, id: string) => (await store.taskHistory(id))!.states.map((s) => [s.status, s.vendorStatus, s.progress]);

  /** Patches that together touch every patchable field, the null of each nullable one, and the states. */
  const patches: TaskPatch[] = [
    { upstreamId: 'up-1', status: 'queued', vendorStatus: 'PENDING', updatedAt: 1100 },
    { status: 'in_progress', progress: 30, vendorStatus: 'RUNNING', context: { kind: 't2v', n: [1, 2] }, seconds: '8', size: '1280x720', updatedAt: 1200 },
    { channel: 'c2', upstreamModel: 'um2', deadlineAt: 9500, context: null, vendorStatus: null, updatedAt: 1300 },
    { progress: 60, updatedAt: 1400 },
    { error: { code: 'x', message: 'y' }, updatedAt: 1450 },
    {
      status: 'completed',
      progress: 100,
      results: [{ url: 'http://v/x.mp4', type: 'video', meta: { clip: 'c1' } }],
      error: null,
      completedAt: 1500,
      updatedAt: 1500,
    },
  ];

  test(`${driver} store: a batch of writes makes each as updateTask makes it, fields, states and versions alike`, async () => {
    const store = await open(() => Date.now());
    try {
      const t = await token(store);
      const ids = ['a', 'b', 'c', 'd'];
      for (const id of ids) {
        await store.createTask(newTask(t.id, `task_one_${id}`));
        await store.createTask(newTask(t.id, `task_batch_${id}`));
      }
      // Each step writes the four tasks, each with the patch of its own turn: one by one, and as one batch.
      for (let step = 0; step < patches.length + 3; step++) {
        const patchOf = (i: number) => patches[(step + i) % patches.length]!;
        const one: (TaskRecord | null)[] = [];
        for (const [i, id] of ids.entries()) {
          const cur = (await store.getTask(`task_one_${id}`))!;
          one.push(await store.updateTask(cur.id, cur.version, patchOf(i)));
        }
        const current = await Promise.all(ids.map(async (id) => (await store.getTask(`task_batch_${id}`))!));
        const batch = await store.updateTasks(current.map((cur, i) => ({ id: cur.id, version: cur.version, patch: patchOf(i) })));
        assert.equal(batch.length, ids.length, 'one answer per write');
        assert.deepEqual(batch.map(facts), one.map(facts), `step ${step}: the batch wrote what the writes one by one wrote`);
        for (const [i, id] of ids.entries()) {
          assert.equal(batch[i]?.id, `task_batch_${id}`, 'answers in the order of the writes');
          assert.deepEqual(facts(await store.getTask(`task_batch_${id}`)), facts(batch[i]!), 'the answer is the record as stored');
        }
      }
      for (const id of ids) assert.deepEqual(await states(store, `task_batch_${id}`), await states(store, `task_one_${id}`), 'the same states seen');
      assert.deepEqual(await store.updateTasks([]), [], 'an empty batch');
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: in a batch, a write naming a stale version or a missing task changes nothing, and the others still apply`, async () => {
    const store = await open(() => Date.now());
    try {
      const t = await token(store);
      for (let i = 0; i < 5; i++) await store.createTask(newTask(t.id, `task_${i}`));
      const moved = (await store.updateTask('task_2', 1, { status: 'queued', upstreamId: 'other-writer' }))!;
      const writes: TaskWrite[] = [0, 1, 2, 3, 4].map((i) => ({ id: `task_${i}`, version: 1, patch: { status: 'in_progress', progress: 10 + i } }));
      writes.push({ id: 'task_missing', version: 1, patch: { status: 'failed' } });
      const out = await store.updateTasks(writes);
      assert.deepEqual(
        out.map((r) => r && [r.id, r.version, r.status, r.progress]),
        [['task_0', 2, 'in_progress', 10], ['task_1', 2, 'in_progress', 11], null, ['task_3', 2, 'in_progress', 13], ['task_4', 2, 'in_progress', 14], null],
      );
      assert.deepEqual(await store.getTask('task_2'), moved, 'the stale write did not overwrite what the other writer wrote');
      assert.equal(await store.getTask('task_missing'), null);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a task written twice in one batch takes the writes in order, each a compare-and-set of its own`, async () => {
    const store = await open(() => Date.now());
    try {
      const t = await token(store);
      await store.createTask(newTask(t.id, 'task_x', 4));
      await store.createTask(newTask(t.id, 'task_y', 4));
      const out = await store.updateTasks([
        { id: 'task_x', version: 1, patch: { status: 'queued', upstreamId: 'u' } },
        { id: 'task_y', version: 1, patch: { status: 'failed', refund: true } },
        { id: 'task_x', version: 1, patch: { status: 'failed', refund: true } },
        { id: 'task_y', version: 2, patch: { refund: true, progress: 5 } },
        { id: 'task_x', version: 2, patch: { status: 'in_progress', progress: 40 } },
      ]);
      assert.deepEqual(
        out.map((r) => r && [r.id, r.version, r.status, r.progress]),
        [['task_x', 2, 'queued', 0], ['task_y', 2, 'failed', 0], null, ['task_y', 3, 'failed', 5], ['task_x', 3, 'in_progress', 40]],
      );
      assert.equal((await store.getToken(t.id))?.used, 4, 'task_y refunded once, task_x not at all');
      assert.deepEqual(
        (await store.ledger(t.id, null, 10)).map((r) => [r.kind, r.ref, r.amount]),
        [
          ['debit', 'task_x', 4],
          ['debit', 'task_y', 4],
          ['refund', 'task_y', 4],
        ],
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: refunds and settlements in one batch move each task's money once, a token's summed, its budget lowered for its own period only`, async () => {
    const c = { now: Date.parse('2026-11-28T12:00:00.000Z') };
    const store = await open(() => c.now);
    try {
      const t = await token(store);
      const other = await token(store);
      for (const [id, price] of [
        ['task_r1', 5],
        ['task_r2', 3],
        ['task_s1', 10],
        ['task_done', 2],
        ['task_old', 4],
      ] as const)
        await store.createTask(newTask(t.id, id, price));
      await store.createTask(newTask(other.id, 'task_o', 7));
      assert.ok(await store.updateTask('task_done', 1, { status: 'failed', refund: true }), 'refunded before the batch');
      // A new day: task_old's debit was made yesterday, task_new's today.
      c.now = Date.parse('2026-11-29T09:00:00.000Z');
      await store.createTask(newTask(t.id, 'task_new', 6));
      assert.deepEqual([(await store.getToken(t.id))?.used, (await store.getToken(t.id))?.budgetUsed], [28, 6]);
      const fail: TaskPatch = { status: 'failed', error: { code: 'generation_failed', message: 'no' }, refund: true };
      const out = await store.updateTasks([
        { id: 'task_r1', version: 1, patch: fail },
        { id: 'task_o', version: 1, patch: fail },
        { id: 'task_s1', version: 1, patch: { status: 'completed', completedAt: 5, settle: 3.5 } },
        { id: 'task_r2', version: 1, patch: fail },
        { id: 'task_done', version: 2, patch: { refund: true, progress: 1 } },
        { id: 'task_old', version: 1, patch: fail },
        { id: 'task_new', version: 1, patch: fail },
        { id: 'task_r2', version: 1, patch: fail },
      ]);
      assert.deepEqual(
        out.map((r) => r && [r.id, r.status, r.charged, r.refunded]),
        [
          ['task_r1', 'failed', 0, true],
          ['task_o', 'failed', 0, true],
          ['task_s1', 'completed', 4, false],
          ['task_r2', 'failed', 0, true],
          ['task_done', 'failed', 0, true],
          ['task_old', 'failed', 0, true],
          ['task_new', 'failed', 0, true],
          null,
        ],
      );
      // 28 used: back 5 + 3 + 6 (settled at 4 of 10) + 4 + 6; task_done nothing again.
      const mine = await store.getToken(t.id);
      assert.deepEqual([mine?.used, mine?.budgetUsed], [4, 0], "the quota got everything back; today's use only what today's debit held");
      assert.equal((await store.getToken(other.id))?.used, 0);
      const rows = (await store.ledger(t.id, null, 100)).filter((r) => r.kind !== 'debit');
      assert.deepEqual(
        rows.map((r) => [r.kind, r.ref, r.amount, r.budgetStart]).sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
        [
          ['refund', 'task_done', 2, Date.parse('2026-11-28T00:00:00.000Z')],
          ['refund', 'task_new', 6, Date.parse('2026-11-29T00:00:00.000Z')],
          ['refund', 'task_old', 4, Date.parse('2026-11-28T00:00:00.000Z')],
          ['refund', 'task_r1', 5, Date.parse('2026-11-28T00:00:00.000Z')],
          ['refund', 'task_r2', 3, Date.parse('2026-11-28T00:00:00.000Z')],
          ['settle', 'task_s1', 6, Date.parse('2026-11-28T00:00:00.000Z')],
        ],
        'one row per task that got something back, naming the budget of its debit',
      );
      const balance = (await store.ledgerBalance(t.id))!;
      assert.equal(balance.debit - balance.refund - balance.settle, balance.used, 'the ledger balances');
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: batches racing each other and single writes on the same tasks: one write of each version wins, each refund paid once`, async () => {
    const store = await open(() => Date.now());
    try {
      const t = await token(store);
      const ids = Array.from({ length: 30 }, (_, i) => `task_${String(i).padStart(2, '0')}`);
      for (const id of ids) await store.createTask(newTask(t.id, id, 2));
      const fail: TaskPatch = { status: 'failed', refund: true };
      // Orders differ between racers, so two batches would lock the same rows in opposite orders if they took them as given.
      const shuffled = (k: number) => ids.map((_, i) => ids[(i * 7 + k) % ids.length]!);
      const answers = await Promise.all([
        store.updateTasks(shuffled(0).map((id) => ({ id, version: 1, patch: fail }))),
        store.updateTasks(shuffled(3).map((id) => ({ id, version: 1, patch: { status: 'in_progress', progress: 50 } }))),
        store.updateTasks([...shuffled(5)].reverse().map((id) => ({ id, version: 1, patch: { status: 'completed', settle: 1 } }))),
        ...ids.map((id) => store.updateTask(id, 1, fail).then((r) => [r])),
      ]);
      const winners = new Map<string, number>();
      for (const list of answers) for (const r of list) if (r) winners.set(r.id, (winners.get(r.id) ?? 0) + 1);
      assert.deepEqual(
        ids.map((id) => winners.get(id)),
        ids.map(() => 1),
        'exactly one write of version 1 won for each task',
      );
      const tasks = await store.getTasks(ids);
      assert.ok(tasks.every((x) => x.version === 2));
      const owed = tasks.reduce((sum, x) => sum + (x.status === 'failed' ? 0 : x.status === 'completed' ? 1 : 2), 0);
      assert.equal((await store.getToken(t.id))?.used, owed, 'what the winners left charged, no refund paid twice');
      const back = (await store.ledger(t.id, null, 200)).filter((r) => r.kind !== 'debit').map((r) => r.ref);
      assert.equal(new Set(back).size, back.length, 'one movement back per task at most');
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: one renewal of many leases renews those still held, and none another replica took or that finished`, async () => {
    const c = { now: 1_000 };
    const store = await open(() => c.now);
    try {
      const t = await token(store, null);
      const ids = Array.from({ length: 1_200 }, (_, i) => `task_${String(i).padStart(4, '0')}`);
      for (const id of ids) await store.createTask({ ...newTask(t.id, id), lease: { owner: 'a', until: 2_000 } });
      // One ran out and went to b (the oldest id is claimed first); one finished.
      assert.deepEqual(
        (await store.claimTasks('b', 2_000, 5_000, 1)).map((x) => x.id),
        ['task_0000'],
      );
      assert.ok(await store.updateTask('task_0500', 1, { status: 'completed' }));
      const held = await store.renewLeases('a', [...ids, 'task_nope'], 9_000);
      assert.equal(held.length, 1_198);
      assert.ok(!held.includes('task_0000') && !held.includes('task_0500') && !held.includes('task_nope'));
      assert.deepEqual(await store.claimTasks('c', 4_999, 10_000, 10), [], "every lease renewed runs to 9,000, b's to 5,000");
    } finally {
      await store.close();
    }
  });
}
