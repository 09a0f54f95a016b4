import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { recordsContract } from './records-contract.js';
import { tokenKeysContract } from './token-keys-contract.js';
import { webhookContract } from './webhook-contract.js';
import type { LedgerEntry, NewTask, Store, TaskPatch, TaskQuery, UsageGroup } from '../../src/store/store.js';

/**
 * The contract every store driver passes. A driver's test file calls this with a factory that
 * returns a fresh, empty store.
 */
export function storeContract(driver: string, open: () => Promise<Store>): void {
  const req = (ref: string) => ({ ref, model: 'm' });

  test(`${driver} store: tokens are found by key hash only`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'a', keyHash: 'h1', group: 'default', models: ['m1', 'm2'], quota: 5 });
      assert.equal(t.used, 0);
      assert.equal(t.disabled, false);
      const found = await store.findTokenByHash('h1');
      assert.deepEqual(found, t);
      assert.equal(await store.findTokenByHash('h2'), null);
      assert.deepEqual(found?.models, ['m1', 'm2']);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a key hash is unique`, async () => {
    const store = await open();
    try {
      await store.createToken({ name: 'a', keyHash: 'dup', group: 'default', models: null, quota: null });
      await assert.rejects(store.createToken({ name: 'b', keyHash: 'dup', group: 'default', models: null, quota: null }));
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: concurrent debits never overspend and refunds give back`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'q', keyHash: 'q', group: 'default', models: null, quota: 10 });
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.debit(t.id, 1, req(`r${i}`))));
      assert.equal(results.filter(Boolean).length, 10);
      assert.equal((await store.findTokenByHash('q'))?.used, 10);
      await store.refund(t.id, 3, req('r0'));
      assert.equal((await store.findTokenByHash('q'))?.used, 7);
      assert.equal(await store.debit(t.id, 4, req('big')), false, 'a debit larger than what is left is refused whole');
      assert.equal(await store.debit(t.id, 3, req('fits')), true);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: an unlimited token always debits`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'u', keyHash: 'u', group: 'default', models: null, quota: null });
      for (let i = 0; i < 20; i++) assert.equal(await store.debit(t.id, 1000, req(`u${i}`)), true);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a token is disabled and enabled by id, and found as it is`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'd', keyHash: 'dis', group: 'default', models: null, quota: null });
      assert.equal((await store.setTokenDisabled(t.id, true))?.disabled, true);
      assert.equal((await store.findTokenByHash('dis'))?.disabled, true);
      assert.equal((await store.setTokenDisabled(t.id, false))?.disabled, false);
      assert.equal((await store.findTokenByHash('dis'))?.disabled, false);
      assert.equal(await store.setTokenDisabled('no-such-token', true), null);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: tokens are listed and deleted by name`, async () => {
    const store = await open();
    try {
      await store.createToken({ name: 'demo', keyHash: 'd1', group: 'default', models: null, quota: null });
      await store.createToken({ name: 'keep', keyHash: 'k1', group: 'default', models: null, quota: null });
      assert.equal((await store.listTokens()).length, 2);
      assert.equal(await store.deleteTokensNamed('demo'), 1);
      assert.equal(await store.deleteTokensNamed('demo'), 0, 'names are unique: there was one');
      assert.deepEqual(
        (await store.listTokens()).map((t) => t.name),
        ['keep'],
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a token's quota is set by id, even below what it used; null makes it unlimited`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'sq', keyHash: 'sq', group: 'default', models: null, quota: 5 });
      assert.equal(await store.debit(t.id, 3, req('a')), true);
      const lowered = await store.setTokenQuota(t.id, 2);
      assert.deepEqual([lowered?.quota, lowered?.used], [2, 3], 'what was used stays used');
      assert.equal((await store.findTokenByHash('sq'))?.quota, 2);
      assert.equal(await store.debit(t.id, 1, req('b')), false, 'nothing more is spent over the new quota');
      assert.equal((await store.setTokenQuota(t.id, null))?.quota, null);
      assert.equal(await store.debit(t.id, 1000, req('c')), true, 'unlimited');
      assert.equal((await store.setTokenQuota(t.id, 1003))?.quota, 1003);
      assert.equal(await store.debit(t.id, 1, req('d')), false, 'the quota holds again');
      assert.equal(await store.setTokenQuota('no-such-token', 1), null);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a token's rate limits are kept from creation, changed one at a time, and removed by null`, async () => {
    const store = await open();
    try {
      const plain = await store.createToken({ name: 'nl', keyHash: 'nl', group: 'default', models: null, quota: null });
      assert.deepEqual([plain.rpmLimit, plain.maxParallel], [null, null], 'no limit unless one is given');
      const t = await store.createToken({ name: 'rl', keyHash: 'rl', group: 'default', models: null, quota: null, rpmLimit: 60, maxParallel: 2 });
      assert.deepEqual([t.rpmLimit, t.maxParallel], [60, 2]);
      const found = await store.findTokenByHash('rl');
      assert.deepEqual([found?.rpmLimit, found?.maxParallel], [60, 2], 'the lookup the authenticator caches carries them');
      const rpmOnly = await store.setTokenLimits(t.id, { rpmLimit: 5 });
      assert.deepEqual([rpmOnly?.rpmLimit, rpmOnly?.maxParallel], [5, 2], 'a limit left out stays');
      const noParallel = await store.setTokenLimits(t.id, { maxParallel: null });
      assert.deepEqual([noParallel?.rpmLimit, noParallel?.maxParallel], [5, null], 'null removes one');
      const listed = (await store.listTokens()).find((x) => x.id === t.id);
      assert.deepEqual([listed?.rpmLimit, listed?.maxParallel], [5, null]);
      assert.equal(await store.setTokenLimits('no-such-token', { rpmLimit: 1 }), null);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a token's expiry is kept from creation to the millisecond, moved, set in the past, and removed by null`, async () => {
    const store = await open();
    try {
      const plain = await store.createToken({ name: 'nx', keyHash: 'nx', group: 'default', models: null, quota: null });
      assert.equal(plain.expiresAt, null, 'never, unless one is given');
      // Past 2038 and with milliseconds: the column holds Unix ms whole.
      const at = Date.parse('2040-05-06T07:08:09.123Z');
      const t = await store.createToken({ name: 'ex', keyHash: 'ex', group: 'default', models: null, quota: null, expiresAt: at });
      assert.equal(t.expiresAt, at);
      assert.equal((await store.findTokenByHash('ex'))?.expiresAt, at, 'the lookup the authenticator caches carries it');
      assert.equal((await store.setTokenExpiry(t.id, 1000))?.expiresAt, 1000, 'a past time is kept: it ends the key now');
      assert.equal((await store.getToken(t.id))?.expiresAt, 1000);
      assert.equal((await store.setTokenExpiry(t.id, null))?.expiresAt, null);
      assert.equal((await store.listTokens()).find((x) => x.id === t.id)?.expiresAt, null);
      assert.equal(await store.setTokenExpiry('no-such-token', at), null);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a token is deleted by id once nothing it started still runs; its ledger and finished tasks stay`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'del', keyHash: 'del', group: 'default', models: null, quota: 10 });
      const other = await store.createToken({ name: 'other', keyHash: 'other', group: 'default', models: null, quota: null });
      assert.ok(
        await store.createTask({
          id: 'task_del',
          tokenId: t.id,
          kind: 'video',
          route: 'r',
          model: 'm',
          upstreamModel: 'um',
          channel: 'c',
          price: 2,
          createdAt: 1,
          deadlineAt: 9,
        }),
      );
      assert.deepEqual(await store.deleteToken(t.id), { outcome: 'busy', unfinishedTasks: 1, holds: 0 });
      assert.equal(await store.hold(t.id, 1, { ...req('sync-1'), expiresAt: Date.now() + 60_000 }), true);
      assert.deepEqual(await store.deleteToken(t.id), { outcome: 'busy', unfinishedTasks: 1, holds: 1 });
      assert.ok(await store.getToken(t.id), 'a busy token is kept');
      await store.updateTask('task_del', 1, { status: 'completed', completedAt: 5 });
      assert.deepEqual(await store.deleteToken(t.id), { outcome: 'busy', unfinishedTasks: 0, holds: 1 }, 'a request in flight holds it too');
      assert.deepEqual(await store.endHolds([{ ref: 'sync-1', outcome: 'settle', tokenId: t.id, model: 'm', amount: 1 }]), ['ended']);

      const deleted = await store.deleteToken(t.id);
      assert.equal(deleted.outcome, 'deleted');
      assert.equal(deleted.outcome === 'deleted' && deleted.token.keyHash, 'del', 'the deleted token is answered, so its key can be forgotten');
      assert.equal(await store.getToken(t.id), null);
      assert.equal(await store.findTokenByHash('del'), null);
      assert.deepEqual(await store.deleteToken(t.id), { outcome: 'unknown' });
      assert.deepEqual(await store.deleteToken('no-such-token'), { outcome: 'unknown' });
      assert.deepEqual(
        (await store.listTokens()).map((x) => x.id),
        [other.id],
      );
      assert.deepEqual(
        (await store.ledger(t.id, null, 10)).map((r) => [r.kind, r.ref, r.amount]),
        [
          ['debit', 'task_del', 2],
          ['debit', 'sync-1', 1],
        ],
      );
      assert.equal((await store.getTask('task_del'))?.status, 'completed');
      // Nothing new can start for it: no task, no debit, no hold, nothing written.
      assert.equal(
        await store.createTask({
          id: 'task_del2',
          tokenId: t.id,
          kind: 'video',
          route: 'r',
          model: 'm',
          upstreamModel: 'um',
          channel: 'c',
          price: 0,
          createdAt: 1,
          deadlineAt: 9,
        }),
        null,
      );
      assert.equal(await store.getTask('task_del2'), null);
      assert.equal(await store.debit(t.id, 1, req('late')), false);
      assert.equal(await store.hold(t.id, 1, { ...req('late-hold'), expiresAt: Date.now() + 60_000 }), false);
      assert.equal((await store.ledger(t.id, null, 10)).length, 2);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a delete racing task creation never leaves a task without its token`, async () => {
    const store = await open();
    try {
      for (let i = 0; i < 20; i++) {
        const t = await store.createToken({ name: `race-${i}`, keyHash: `race-${i}`, group: 'default', models: null, quota: null });
        const task = {
          id: `task_race_${i}`,
          tokenId: t.id,
          kind: 'video',
          route: 'r',
          model: 'm',
          upstreamModel: 'um',
          channel: 'c',
          price: i % 2,
          createdAt: 1,
          deadlineAt: 9,
        };
        const [created, deletion] = await Promise.all([store.createTask(task), store.deleteToken(t.id)]);
        if (deletion.outcome === 'deleted') {
          assert.equal(created, null, `round ${i}: the task was created for a token deleted at the same time`);
          assert.equal(await store.getTask(task.id), null);
        } else {
          assert.deepEqual([deletion, created?.id], [{ outcome: 'busy', unfinishedTasks: 1, holds: 0 }, task.id], `round ${i}`);
          assert.ok(await store.getToken(t.id));
        }
      }
    } finally {
      await store.close();
    }
  });

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

  test(`${driver} store: creating a task debits its price in the same step, and refuses when the quota is short`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 't', keyHash: 't', group: 'default', models: null, quota: 3 });
      const made = await Promise.all(['a', 'b', 'c', 'd'].map((id) => store.createTask(newTask(t.id, `task_${id}`))));
      assert.equal(made.filter(Boolean).length, 3);
      assert.equal((await store.findTokenByHash('t'))?.used, 3);
      const ids = ['task_a', 'task_b', 'task_c', 'task_d'];
      const stored = await store.getTasks(ids);
      assert.equal(stored.length, 3, 'the refused task was not written');
      // What createTask answers is what the store holds.
      for (const m of made)
        if (m)
          assert.deepEqual(
            m,
            stored.find((s) => s.id === m.id),
          );
      const one = stored[0]!;
      assert.equal(one.status, 'submitting');
      assert.equal(one.version, 1);
      assert.equal(one.upstreamId, null);
      assert.deepEqual(one.results, []);
      assert.equal(one.refunded, false);
      assert.equal(await store.getTask('task_missing'), null);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: task updates are compare-and-set, and every field round-trips`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 't', keyHash: 't', group: 'default', models: null, quota: null });
      await store.createTask(newTask(t.id, 'task_x'));
      const patch: TaskPatch = {
        upstreamId: 'up-1',
        status: 'in_progress',
        progress: 40,
        vendorStatus: 'RUNNING',
        context: { kind: 'text2video', n: [1, 2] },
        seconds: '8',
        size: '1280x720',
        updatedAt: 2000,
      };
      const racing = await Promise.all([store.updateTask('task_x', 1, patch), store.updateTask('task_x', 1, { status: 'failed' })]);
      assert.equal(racing.filter((r) => r !== null).length, 1, 'exactly one writer of version 1 wins');
      const now = (await store.getTask('task_x'))!;
      assert.equal(now.version, 2);
      const done = await store.updateTask('task_x', now.version, {
        status: 'completed',
        progress: 100,
        results: [{ url: 'http://v/x.mp4', type: 'video', meta: { clip: 'c1' } }],
        completedAt: 3000,
        error: null,
      });
      assert.ok(done);
      assert.equal(done.version, now.version + 1);
      assert.deepEqual(done.results, [{ url: 'http://v/x.mp4', type: 'video', meta: { clip: 'c1' } }]);
      assert.equal(done.completedAt, 3000);
      if (racing[0]) {
        assert.equal(done.upstreamId, 'up-1');
        assert.deepEqual(done.context, { kind: 'text2video', n: [1, 2] });
        assert.equal(done.seconds, '8');
      }
      assert.equal(await store.updateTask('task_x', 1, { status: 'failed' }), null, 'a stale version changes nothing');
      assert.equal(await store.updateTask('task_nope', 1, { status: 'failed' }), null);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a failed task is refunded exactly once, even when two updates race`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'r', keyHash: 'r', group: 'default', models: null, quota: 10 });
      await store.createTask(newTask(t.id, 'task_r', 4));
      assert.equal((await store.findTokenByHash('r'))?.used, 4);
      const fail = { status: 'failed' as const, error: { code: 'generation_failed', message: 'no' }, refund: true };
      const results = await Promise.all([store.updateTask('task_r', 1, fail), store.updateTask('task_r', 1, fail)]);
      assert.equal(results.filter((r) => r !== null).length, 1);
      assert.equal((await store.findTokenByHash('r'))?.used, 0);
      const failed = (await store.getTask('task_r'))!;
      assert.equal(failed.refunded, true);
      assert.deepEqual(failed.error, { code: 'generation_failed', message: 'no' });
      // A later update asking for a refund again (a stale retry) pays nothing more.
      assert.ok(await store.updateTask('task_r', failed.version, { refund: true, progress: 100 }));
      assert.equal((await store.findTokenByHash('r'))?.used, 0);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: an aborted task is gone and refunded; a stale abort does nothing`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'b', keyHash: 'b', group: 'default', models: null, quota: 5 });
      await store.createTask(newTask(t.id, 'task_b', 2));
      await store.createTask(newTask(t.id, 'task_c', 2));
      assert.equal(await store.abortTask('task_b', 7), false);
      assert.equal(await store.abortTask('task_b', 1), true);
      assert.equal(await store.getTask('task_b'), null);
      assert.equal((await store.findTokenByHash('b'))?.used, 2);
      assert.equal(await store.abortTask('task_b', 1), false, 'twice is once');
      assert.equal((await store.findTokenByHash('b'))?.used, 2);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: unfinished tasks are listed in id pages; finished ones are not`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'p', keyHash: 'p', group: 'default', models: null, quota: null });
      for (let i = 0; i < 25; i++) await store.createTask(newTask(t.id, `task_${String(i).padStart(2, '0')}`));
      await store.updateTask('task_03', 1, { status: 'completed' });
      await store.updateTask('task_04', 1, { status: 'failed' });
      await store.updateTask('task_05', 1, { status: 'queued', upstreamId: 'u5' });
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page = await store.listUnfinishedTasks(after, 10);
        if (page.length === 0) break;
        seen.push(...page.map((x) => x.id));
        after = page[page.length - 1]!.id;
      }
      assert.equal(seen.length, 23);
      assert.ok(!seen.includes('task_03') && !seen.includes('task_04') && seen.includes('task_05'));
      assert.deepEqual(seen, [...seen].sort());
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: unfinished tasks are counted by status; finished and aborted ones are not`, async () => {
    const store = await open();
    try {
      assert.deepEqual(await store.countUnfinishedTasks(), { submitting: 0, queued: 0, in_progress: 0 }, 'every status, zero when none');
      const t = await store.createToken({ name: 'c', keyHash: 'c', group: 'default', models: null, quota: null });
      for (let i = 0; i < 7; i++) await store.createTask(newTask(t.id, `task_c${i}`));
      await store.updateTask('task_c0', 1, { status: 'queued', upstreamId: 'u0' });
      await store.updateTask('task_c1', 1, { status: 'queued', upstreamId: 'u1' });
      await store.updateTask('task_c2', 1, { status: 'in_progress', upstreamId: 'u2' });
      await store.updateTask('task_c3', 1, { status: 'completed' });
      await store.updateTask('task_c4', 1, { status: 'failed', refund: true });
      await store.abortTask('task_c5', 1);
      assert.deepEqual(await store.countUnfinishedTasks(), { submitting: 1, queued: 2, in_progress: 1 });
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a token's tasks are listed in pages, newest first (ties as taken), of the kinds asked, never another's or a submitting one`, async () => {
    const store = await open();
    try {
      const a = await store.createToken({ name: 'la', keyHash: 'la', group: 'default', models: null, quota: null });
      const b = await store.createToken({ name: 'lb', keyHash: 'lb', group: 'default', models: null, quota: null });
      const seen = async (id: string, tokenId = a.id, extra: Partial<NewTask> = {}) => {
        await store.createTask({ ...newTask(tokenId, id), ...extra });
        assert.ok(await store.updateTask(id, 1, { status: 'queued', upstreamId: `u-${id}` }));
      };
      // Four created in the same millisecond, then one created later but dated earlier.
      for (const id of ['task_a0', 'task_a1', 'task_a2', 'task_a3']) await seen(id);
      await seen('task_old', a.id, { createdAt: 500 });
      await store.createTask(newTask(a.id, 'task_a4'));
      await seen('task_aud', a.id, { kind: 'audio' });
      await seen('task_b0', b.id);
      const ids = async (page: { after?: string | null; limit?: number; order?: 'asc' | 'desc' }, kinds = ['video'], tokenId = a.id) =>
        (await store.listTasks(tokenId, kinds, { after: null, limit: 10, order: 'desc', ...page }))?.map((t) => t.id) ?? null;

      assert.deepEqual(await ids({}), ['task_a3', 'task_a2', 'task_a1', 'task_a0', 'task_old'], 'newest first; a submitting task is not shown');
      assert.deepEqual(await ids({ order: 'asc' }), ['task_old', 'task_a0', 'task_a1', 'task_a2', 'task_a3']);
      assert.deepEqual(await ids({}, ['video', 'audio']), ['task_aud', 'task_a3', 'task_a2', 'task_a1', 'task_a0', 'task_old']);
      // Pages of two, each after the last id of the one before.
      const pages: string[][] = [];
      for (let after: string | null = null; ; ) {
        const page: string[] = (await ids({ after, limit: 2 }))!;
        if (page.length === 0) break;
        pages.push(page);
        after = page.at(-1)!;
      }
      assert.deepEqual(pages, [['task_a3', 'task_a2'], ['task_a1', 'task_a0'], ['task_old']]);
      assert.deepEqual(await ids({ after: 'task_a1', order: 'asc' }), ['task_a2', 'task_a3']);
      assert.deepEqual(await ids({ after: 'task_old', order: 'asc', limit: 1 }), ['task_a0']);
      // A cursor that is not one of these tasks is unknown, whoever's it is.
      for (const after of ['task_b0', 'task_missing', 'task_a4']) assert.equal(await ids({ after }), null, after);
      assert.equal(await ids({ after: 'task_aud' }), null, 'a task of another kind is no cursor for this one');
      assert.deepEqual(await ids({}, ['video'], b.id), ['task_b0'], 'b sees only its own');
      assert.deepEqual(await ids({}, ['video'], 'nobody'), []);
      // What the list answers is the record as stored.
      assert.deepEqual((await store.listTasks(a.id, ['video'], { after: null, limit: 1, order: 'desc' }))![0], await store.getTask('task_a3'));
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a finished task is deleted by its own token only, and moves no units; an unfinished one stays`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'd', keyHash: 'd', group: 'default', models: null, quota: 10 });
      const other = await store.createToken({ name: 'o', keyHash: 'o', group: 'default', models: null, quota: null });
      await store.createTask(newTask(t.id, 'task_done', 3));
      await store.createTask(newTask(t.id, 'task_failed', 2));
      await store.createTask(newTask(t.id, 'task_running', 4));
      await store.updateTask('task_done', 1, { status: 'completed', results: [{ url: 'http://v/x.mp4', type: 'video' }], settle: 3 });
      await store.updateTask('task_failed', 1, { status: 'failed', refund: true });
      await store.updateTask('task_running', 1, { status: 'in_progress' });
      const before = { used: (await store.getToken(t.id))!.used, ledger: await store.ledger(t.id, null, 100) };
      assert.equal(before.used, 7);

      assert.equal(await store.deleteTask('task_done', other.id), false, "another token's task is not deleted");
      assert.equal(await store.deleteTask('task_running', t.id), false, 'an unfinished task is not deleted');
      assert.equal(await store.deleteTask('task_missing', t.id), false);
      const racing = await Promise.all([store.deleteTask('task_done', t.id), store.deleteTask('task_done', t.id)]);
      assert.deepEqual(racing.filter(Boolean).length, 1, 'two deletes: one of them deletes');
      assert.equal(await store.deleteTask('task_failed', t.id), true);
      assert.equal(await store.getTask('task_done'), null);
      assert.equal(await store.getTask('task_failed'), null);
      assert.equal((await store.getTask('task_running'))?.status, 'in_progress');
      assert.deepEqual(await store.listTasks(t.id, ['video'], { after: null, limit: 10, order: 'desc' }).then((l) => l!.map((x) => x.id)), ['task_running']);
      assert.equal((await store.getToken(t.id))!.used, before.used, 'nothing charged or given back');
      assert.deepEqual(await store.ledger(t.id, null, 100), before.ledger, 'the ledger keeps what was spent');
    } finally {
      await store.close();
    }
  });
  /** Every ledger row of a token (paged through), after checking Σdebit − Σrefund − Σsettle = used. */
  async function balanced(store: Store, tokenId: string): Promise<LedgerEntry[]> {
    const rows: LedgerEntry[] = [];
    for (let after: number | null = null; ; ) {
      const page = await store.ledger(tokenId, after, 7);
      if (page.length === 0) break;
      rows.push(...page);
      after = page[page.length - 1]!.id;
    }
    const sum = (kind: string) => rows.filter((r) => r.kind === kind).reduce((n, r) => n + r.amount, 0);
    const used = (await store.getToken(tokenId))!.used;
    assert.equal(sum('debit') - sum('refund') - sum('settle'), used, `the ledger balances: ${JSON.stringify(rows)}`);
    assert.deepEqual(await store.ledgerBalance(tokenId), { used, debit: sum('debit'), refund: sum('refund'), settle: sum('settle') });
    for (const r of rows) assert.ok(r.amount > 0 && Number.isInteger(r.amount), 'a row moves a whole, positive amount');
    return rows;
  }

  test(`${driver} store: every movement of used writes its ledger row, and the ledger pages by id`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'l', keyHash: 'l', group: 'default', models: null, quota: 10 });
      const other = await store.createToken({ name: 'o', keyHash: 'o', group: 'default', models: null, quota: null });
      const heard: LedgerEntry[] = [];
      const stop = store.onLedger((e) => heard.push(e));
      assert.equal(await store.debit(t.id, 4, { ref: 'req-1', model: 'img' }), true);
      assert.equal(await store.debit(t.id, 7, { ref: 'req-2', model: 'img' }), false);
      await store.refund(t.id, 4, { ref: 'req-1', model: 'img' });
      await store.createTask(newTask(t.id, 'task_l', 3));
      await store.debit(other.id, 5, { ref: 'req-o', model: 'img' });
      const rows = await balanced(store, t.id);
      assert.deepEqual(
        rows.map((r) => [r.kind, r.ref, r.model, r.amount]),
        [
          ['debit', 'req-1', 'img', 4],
          ['refund', 'req-1', 'img', 4],
          ['debit', 'task_l', 'm', 3],
        ],
        'a refused debit writes nothing; a task debit names the task',
      );
      assert.ok(rows.every((r) => r.tokenId === t.id && r.at > 0));
      assert.ok(rows[0]!.id < rows[1]!.id && rows[1]!.id < rows[2]!.id);
      assert.deepEqual(
        (await store.ledger(t.id, rows[0]!.id, 1)).map((r) => r.id),
        [rows[1]!.id],
        'after and limit',
      );
      assert.deepEqual(await store.ledger(t.id, rows[2]!.id, 10), []);
      assert.deepEqual(
        (await balanced(store, other.id)).map((r) => r.ref),
        ['req-o'],
      );
      assert.deepEqual(
        heard.map((e) => [e.kind, e.amount]),
        [
          ['debit', 4],
          ['refund', 4],
          ['debit', 3],
          ['debit', 5],
        ],
        'listeners hear every committed row',
      );
      stop();
      await store.debit(other.id, 1, { ref: 'req-p', model: 'img' });
      assert.equal(heard.length, 4, 'a stopped listener hears nothing more');
      assert.equal((await store.getToken(t.id))?.used, 3);
      assert.equal(await store.getToken('nope'), null);
      assert.equal(await store.ledgerBalance('nope'), null);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: settlement charges the final price once and gives back the rest, never more than the hold`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 's', keyHash: 's', group: 'default', models: null, quota: 100 });
      const pricing = { base: 0, perSecond: 0.5, factor: 2 };
      const made = await store.createTask({ ...newTask(t.id, 'task_s', 10), pricing });
      assert.deepEqual(made?.pricing, pricing);
      assert.equal(made?.charged, null);
      assert.deepEqual((await store.getTask('task_s'))?.pricing, pricing, 'the pricing terms round-trip');
      const done = { status: 'completed' as const, completedAt: 5, settle: 6 };
      const racing = await Promise.all([store.updateTask('task_s', 1, done), store.updateTask('task_s', 1, { ...done, settle: 2 })]);
      assert.equal(racing.filter(Boolean).length, 1, 'one completion wins');
      const settled = (await store.getTask('task_s'))!;
      const charged = racing[0] ? 6 : 2;
      assert.equal(settled.charged, charged);
      assert.equal((await store.getToken(t.id))?.used, charged);
      // A second settlement (a stale writer) and one beyond the hold change nothing.
      await store.updateTask('task_s', settled.version, { settle: 0 });
      assert.equal((await store.getToken(t.id))?.used, charged);

      await store.createTask(newTask(t.id, 'task_over', 4));
      const over = await store.updateTask('task_over', 1, { status: 'completed', settle: 9 });
      assert.equal(over?.charged, 4, 'a final charge above the hold is the hold');
      await store.createTask(newTask(t.id, 'task_neg', 4));
      assert.equal((await store.updateTask('task_neg', 1, { status: 'completed', settle: -3 }))?.charged, 0, 'never below 0');
      await store.createTask(newTask(t.id, 'task_frac', 4));
      assert.equal((await store.updateTask('task_frac', 1, { status: 'completed', settle: 2.2 }))?.charged, 3, 'a fraction is rounded up');

      const rows = await balanced(store, t.id);
      assert.deepEqual(
        rows.filter((r) => r.kind === 'settle').map((r) => [r.ref, r.amount]),
        [
          ['task_s', 10 - charged],
          ['task_neg', 4],
          ['task_frac', 1],
        ],
        'one settle row per task that got something back; none when nothing went back',
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: refund and settlement race: exactly one of them moves the units`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'x', keyHash: 'x', group: 'default', models: null, quota: null });
      await store.createTask(newTask(t.id, 'task_x', 6));
      const fail: TaskPatch = { status: 'failed', refund: true };
      const done: TaskPatch = { status: 'completed', settle: 2 };
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => store.updateTask('task_x', 1, i % 2 ? fail : done)));
      assert.equal(answers.filter(Boolean).length, 1);
      const task = (await store.getTask('task_x'))!;
      const rows = await balanced(store, t.id);
      assert.equal(rows.filter((r) => r.kind !== 'debit').length, 1, 'one movement back');
      assert.equal((await store.getToken(t.id))?.used, task.status === 'failed' ? 0 : 2);
      assert.equal(task.charged, task.status === 'failed' ? 0 : 2);
      // A refund asked later (a stale retry) of a settled task gives back only what it is still charged, once.
      if (task.status === 'completed') {
        const refunded = await store.updateTask('task_x', task.version, { refund: true });
        assert.equal(refunded?.charged, 0);
        await store.updateTask('task_x', refunded!.version, { refund: true });
        assert.equal((await store.getToken(t.id))?.used, 0);
        await balanced(store, t.id);
      }
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a failed task's refund and an abort write one refund row each`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'f', keyHash: 'f', group: 'default', models: null, quota: 10 });
      await store.createTask(newTask(t.id, 'task_f', 4));
      await store.createTask(newTask(t.id, 'task_g', 3));
      const fail = { status: 'failed' as const, refund: true };
      await Promise.all([store.updateTask('task_f', 1, fail), store.updateTask('task_f', 1, fail), store.abortTask('task_g', 1), store.abortTask('task_g', 1)]);
      const again = (await store.getTask('task_f'))!;
      await store.updateTask('task_f', again.version, fail);
      const rows = await balanced(store, t.id);
      assert.deepEqual(
        rows
          .filter((r) => r.kind === 'refund')
          .map((r) => [r.ref, r.amount])
          .sort(),
        [
          ['task_f', 4],
          ['task_g', 3],
        ],
      );
      assert.equal((await store.getToken(t.id))?.used, 0);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a hold is a debit recorded until it is settled (the debit stands) or refunded (it goes back), once`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'h', keyHash: 'h', group: 'default', models: null, quota: 10 });
      const hold = (ref: string) => ({ ref, model: 'img', expiresAt: 1_000 });
      assert.equal(await store.hold(t.id, 4, hold('s')), true);
      assert.equal(await store.hold(t.id, 3, hold('r')), true);
      assert.equal(await store.hold(t.id, 4, hold('short')), false, 'a hold the quota cannot pay is refused');
      assert.equal(await store.hold(t.id, 0, hold('free')), true, 'a free request holds nothing');
      assert.equal((await store.getToken(t.id))?.used, 7);
      const end = (ref: string, outcome: 'settle' | 'refund', amount = 4) => ({ ref, outcome, tokenId: t.id, model: 'img', amount });
      assert.deepEqual(await store.endHolds([end('s', 'settle')]), ['ended']);
      assert.deepEqual(
        await store.endHolds([end('s', 'refund'), end('s', 'settle')]),
        ['gone', 'gone'],
        'a hold ends once; a settled one is not charged again',
      );
      // Racing endings (on a pooled driver they run on different connections): exactly one ends it.
      const racing = await Promise.all([
        store.endHolds([end('r', 'refund', 3)]),
        store.endHolds([end('r', 'refund', 3)]),
        store.endHolds([end('r', 'refund', 3)]),
      ]);
      assert.deepEqual(racing.flat().sort(), ['ended', 'gone', 'gone']);
      assert.deepEqual(
        await store.endHolds([end('short', 'refund'), end('free', 'refund', 0)]),
        ['gone', 'gone'],
        'a refused hold was never recorded, nor a free one',
      );
      assert.deepEqual(await store.endHolds([]), []);
      assert.equal((await store.getToken(t.id))?.used, 4, 'the settled hold stays charged, the refunded one went back');
      assert.deepEqual(await store.expireHolds(Number.MAX_SAFE_INTEGER, 10), [], 'nothing is left to expire');
      const rows = await balanced(store, t.id);
      assert.deepEqual(
        rows.map((r) => [r.kind, r.ref, r.amount]),
        [
          ['debit', 's', 4],
          ['debit', 'r', 3],
          ['refund', 'r', 3],
        ],
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: expired holds are given back exactly once, oldest first, and only once expired`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'e', keyHash: 'e', group: 'default', models: null, quota: null });
      for (let i = 0; i < 30; i++) await store.hold(t.id, 1 + (i % 3), { ref: `h${i}`, model: 'img', expiresAt: 1_000 + i * 10 });
      assert.deepEqual(await store.expireHolds(999, 100), [], 'none has expired yet');
      const first = await store.expireHolds(1_000 + 9 * 10, 4);
      assert.deepEqual(
        first.map((h) => h.ref),
        ['h0', 'h1', 'h2', 'h3'],
        'oldest first, at most the limit',
      );
      assert.deepEqual(first[1], { ref: 'h1', tokenId: t.id, model: 'img', amount: 2, expiresAt: 1_010, outcome: 'refunded' });
      // Sweeps racing each other and the requests' own ends: every hold ends once, one way; a
      // settlement that finds its hold swept is charged again (the request was served).
      const racing = await Promise.all([
        store.expireHolds(Number.MAX_SAFE_INTEGER, 100),
        store.expireHolds(Number.MAX_SAFE_INTEGER, 100),
        ...Array.from({ length: 30 }, (_, i) =>
          store.endHolds([{ ref: `h${i}`, outcome: i % 2 === 0 ? 'refund' : 'settle', tokenId: t.id, model: 'img', amount: 1 + (i % 3) }]),
        ),
      ]);
      const swept = [...first, ...(racing[0] as { ref: string }[]), ...(racing[1] as { ref: string }[])].map((h) => h.ref);
      const ends = racing.slice(2).map((r) => (r as string[])[0]);
      const released = Array.from({ length: 30 }, (_, i) => (ends[i] === 'ended' ? `h${i}` : null)).filter((r) => r !== null);
      assert.equal(new Set(swept).size, swept.length, 'no hold is given back twice');
      assert.deepEqual([...swept, ...released].sort(), Array.from({ length: 30 }, (_, i) => `h${i}`).sort(), 'every hold ended exactly once');
      assert.deepEqual(
        ends.flatMap((e, i) => (e === 'charged' ? [i] : [])),
        ends.flatMap((e, i) => (e !== 'ended' && i % 2 === 1 ? [i] : [])),
        'exactly the settlements whose holds were swept are charged again',
      );
      const rows = await balanced(store, t.id);
      const refunds = rows.filter((r) => r.kind === 'refund').map((r) => r.ref);
      assert.equal(new Set(refunds).size, refunds.length, 'one refund row a hold at most');
      const settled = Array.from({ length: 30 }, (_, i) => `h${i}`).filter((_, i) => i % 2 === 1);
      assert.equal(
        (await store.getToken(t.id))?.used,
        settled.reduce((n, r) => n + 1 + (Number(r.slice(1)) % 3), 0),
        'every settled request stays charged once, swept or not; every refunded one went back',
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a settlement whose hold expiry gave back charges again, whatever the quota, once however often it is written`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'c', keyHash: 'c', group: 'default', models: null, quota: 3 });
      assert.equal(await store.hold(t.id, 3, { ref: 'late', model: 'm', expiresAt: 1_000 }), true);
      assert.deepEqual(
        (await store.expireHolds(1_000, 10)).map((h) => [h.ref, h.outcome]),
        [['late', 'refunded']],
      );
      await store.debit(t.id, 2, req('meanwhile'));
      const late = { ref: 'late', outcome: 'settle' as const, tokenId: t.id, model: 'm', amount: 3 };
      assert.deepEqual(await store.endHolds([late]), ['charged'], 'charged past the quota: the request was served');
      assert.deepEqual(await store.endHolds([late]), ['gone'], 'the same batch written again (its answer lost) charges nothing more');
      // A hold the store never recorded (its transaction failed) and whose request was served: charged.
      assert.deepEqual(await store.endHolds([{ ...late, ref: 'unrecorded', amount: 1 }]), ['charged']);
      assert.equal((await store.getToken(t.id))?.used, 6);
      assert.deepEqual(
        (await balanced(store, t.id)).map((r) => [r.kind, r.ref, r.amount]),
        [
          ['debit', 'late', 3],
          ['refund', 'late', 3],
          ['debit', 'meanwhile', 2],
          ['debit', 'late', 3],
          ['debit', 'unrecorded', 1],
        ],
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: an expired hold whose request the request log has answered is settled, not given back`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'x', keyHash: 'x', group: 'default', models: null, quota: null });
      for (const ref of ['answered', 'failed', 'unlogged']) assert.equal(await store.hold(t.id, 2, { ref, model: 'm', expiresAt: 1_000 }), true);
      const record = (id: string, status: number) => ({
        id,
        at: 500,
        requestId: `rq-${id}`,
        tokenId: t.id,
        route: 'r',
        model: 'm',
        channel: 'c',
        status,
        error: status < 400 ? null : 'bad_response',
        ms: 10,
        taskId: null,
        units: status < 400 ? 2 : null,
      });
      await store.putRequests([record('answered', 200), record('failed', 502)]);
      const ended = await store.expireHolds(1_000, 10);
      assert.deepEqual(ended.map((h) => [h.ref, h.outcome]).sort(), [
        ['answered', 'settled'],
        ['failed', 'refunded'],
        ['unlogged', 'refunded'],
      ]);
      assert.equal((await store.getToken(t.id))?.used, 2, 'only the answered request stays charged');
      assert.deepEqual(await store.expireHolds(Number.MAX_SAFE_INTEGER, 10), [], 'each ended once');
      assert.deepEqual(
        (await balanced(store, t.id))
          .filter((r) => r.kind === 'refund')
          .map((r) => r.ref)
          .sort(),
        ['failed', 'unlogged'],
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a resource belongs to the token that created it; its kind and id are nobody else's`, async () => {
    const store = await open();
    try {
      const asset = (id: string, tokenId: string, channel = 'delta-a') => ({ kind: 'asset', id, tokenId, channel, vendorId: id, createdAt: 1_000 });
      assert.equal(await store.putResource(asset('a1', 'tok-a')), true);
      assert.equal(await store.putResource(asset('a1', 'tok-a')), true, 'recording it again as the same owner is no change');
      assert.equal(await store.putResource(asset('a1', 'tok-b')), false, 'another token cannot take it');
      assert.equal(await store.putResource(asset('a1', 'tok-a', 'delta-b')), false, 'nor can another channel');
      assert.equal(await store.putResource({ ...asset('a1', 'tok-b'), kind: 'voice' }), true, 'ids are unique within a kind');
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.putResource(asset(`r${i % 5}`, `tok-${i % 2}`))));
      const got = await store.getResources('asset', ['a1', 'nope', 'a1', 'r0', 'r1', 'r2', 'r3', 'r4']);
      assert.deepEqual(
        got.find((r) => r.id === 'a1'),
        asset('a1', 'tok-a'),
      );
      assert.equal(got.length, 6, 'unknown ids are left out, repeated ones given once');
      for (const r of got.filter((x) => x.id.startsWith('r'))) assert.ok(['tok-0', 'tok-1'].includes(r.tokenId), 'racing creators: one of them owns it');
      assert.deepEqual(
        (await store.getResources('voice', ['a1'])).map((r) => r.tokenId),
        ['tok-b'],
      );
      assert.deepEqual(await store.getResources('asset', []), []);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: links are kept all or none, found while they serve, deleted once expired, and die with their token`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'k', keyHash: 'k', group: 'default', models: null, quota: null });
      const gone = await store.createToken({ name: 'g', keyHash: 'g', group: 'default', models: null, quota: null });
      const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255, 1]);
      const url = {
        id: 'l-url',
        tokenId: t.id,
        channel: 'c1',
        url: 'https://cdn.vendor.test/a.png?sig=1',
        data: null,
        contentType: null,
        createdAt: 10,
        expiresAt: 100,
      };
      const stored = { id: 'l-data', tokenId: t.id, channel: 'c1', url: null, data: bytes, contentType: 'image/png', createdAt: 10, expiresAt: 200 };
      await store.putLinks([url, stored]);
      await store.putLinks([]);
      assert.deepEqual(await store.getLink('l-url', 50), url);
      assert.deepEqual(await store.getLink('l-data', 99), stored, 'bytes round-trip exactly');
      assert.equal(await store.getLink('l-url', 100), null, 'expired at expiresAt');
      assert.equal(await store.getLink('nope', 0), null);
      // One id taken: the whole batch is refused, its other link never written.
      await assert.rejects(store.putLinks([{ ...url, id: 'l-new' }, { ...url }]));
      assert.equal(await store.getLink('l-new', 50), null, 'all or none');

      await store.putLinks([{ ...url, id: 'l-gone', tokenId: gone.id }]);
      assert.ok(await store.getLink('l-gone', 50));
      assert.equal((await store.deleteToken(gone.id)).outcome, 'deleted');
      assert.equal(await store.getLink('l-gone', 50), null, "a deleted token's links stop serving");

      await store.putLinks(Array.from({ length: 5 }, (_, i) => ({ ...url, id: `old-${i}`, expiresAt: 20 + i })));
      assert.equal(await store.deleteExpiredLinks(22, 2), 2, 'at most the limit');
      assert.equal(await store.deleteExpiredLinks(22, 10), 1, 'only the expired ones');
      assert.equal(await store.deleteExpiredLinks(150, 10), 4, 'the rest of the old ones, l-url and l-gone');
      assert.deepEqual(await store.getLink('l-data', 150), stored, 'a link still serving stays');
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a lease gives each unfinished task to one replica at a time`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'l', keyHash: 'l', group: 'default', models: null, quota: null });
      await store.createTask({ ...newTask(t.id, 'task_mine'), lease: { owner: 'a', until: 1_000 } });
      for (let i = 0; i < 6; i++) await store.createTask(newTask(t.id, `task_free${i}`));
      const done = (await store.createTask(newTask(t.id, 'task_done')))!;
      await store.updateTask(done.id, done.version, { status: 'completed' });

      // Two replicas claiming at once take disjoint sets, never a finished task nor one leased to another.
      const [b, c] = await Promise.all([store.claimTasks('b', 500, 2_000, 4), store.claimTasks('c', 500, 2_000, 4)]);
      const taken = [...b, ...c].map((x) => x.id);
      assert.equal(new Set(taken).size, taken.length, 'no task taken twice');
      assert.deepEqual([...taken].sort(), ['task_free0', 'task_free1', 'task_free2', 'task_free3', 'task_free4', 'task_free5']);
      assert.deepEqual(
        b.map((x) => x.id),
        [...b.map((x) => x.id)].sort(),
        'oldest id first',
      );
      assert.deepEqual(await store.claimTasks('d', 500, 2_000, 10), [], 'nothing free before the leases run out');

      // A claim leaves the task's version alone: the owner's compare-and-set still holds.
      const one = b[0]!;
      assert.equal(one.version, 1);
      assert.ok(await store.updateTask(one.id, 1, { progress: 10 }));

      // Renewal keeps only what the owner still holds.
      const bIds = b.map((x) => x.id);
      assert.deepEqual((await store.renewLeases('b', [...bIds, 'task_mine', 'task_done', 'nope'], 3_000)).sort(), [...bIds].sort());
      // 'a' let its lease run out at 1,000: at 1,500 another replica takes its task; c's run to 2,000.
      assert.deepEqual(
        (await store.claimTasks('d', 1_500, 4_000, 10)).map((x) => x.id),
        ['task_mine'],
      );
      assert.deepEqual(await store.renewLeases('a', ['task_mine'], 5_000), [], 'a lease taken by another is lost');

      // A replica that stops gives its leases back: another takes them at once.
      await store.releaseLeases('b');
      assert.deepEqual((await store.claimTasks('e', 1_600, 4_000, 10)).map((x) => x.id).sort(), [...bIds].sort());
      await store.releaseLeases('b');
      assert.deepEqual(await store.claimTasks('f', 1_600, 4_000, 10), [], 'releasing what another holds changes nothing');
      // At 2,500 c's leases (to 2,000) have run out; b's renewed ones (to 3,000) were released and taken by e.
      assert.deepEqual((await store.claimTasks('g', 2_500, 4_000, 10)).map((x) => x.id).sort(), c.map((x) => x.id).sort());
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: usage sums the ledger by UTC day, token and model over [from, to), each row on the day of its own time`, async () => {
    const store = await open();
    // Ledger rows take their time from Date.now(), in both drivers: the test sets it.
    const D = Date.UTC(2026, 0, 10);
    const DAY = 86_400_000;
    let clock = D;
    const now = mock.method(Date, 'now', () => clock);
    try {
      const a = await store.createToken({ name: 'a, "quoted"', keyHash: 'ua', group: 'default', models: null, quota: null });
      const b = await store.createToken({ name: 'b', keyHash: 'ub', group: 'default', models: null, quota: null });
      clock = D - 1; // 2026-01-09T23:59:59.999Z
      await store.debit(a.id, 2, { ref: 'a1', model: 'm1' });
      clock = D; // 2026-01-10T00:00:00.000Z
      await store.debit(a.id, 3, { ref: 'a2', model: 'm1' });
      await store.refund(a.id, 3, { ref: 'a2', model: 'm1' });
      clock = D + 1_000;
      assert.equal(await store.hold(b.id, 5, { ref: 'b1', model: 'm2', expiresAt: D + DAY }), true);
      assert.deepEqual(
        await store.endHolds([{ ref: 'b1', outcome: 'settle', tokenId: b.id, model: 'm2', amount: 5 }]),
        ['ended'],
        'settled: the debit stands, no row',
      );
      const task = await store.createTask({ ...newTask(b.id, 'task_usage', 4), model: 'm2' });
      clock = D + DAY + 5; // the next day: the task settles at 1, 3 go back
      assert.ok(await store.updateTask(task!.id, task!.version, { status: 'completed', settle: 1 }));
      clock = D + 2 * DAY; // outside [D - DAY, D + 2 DAY)
      await store.debit(a.id, 7, { ref: 'a3', model: 'm1' });

      const zero = { debit: 0, refund: 0, settle: 0, debits: 0, refunds: 0 };
      const g = (day: string, t: { id: string; name: string }, model: string, figures: Partial<typeof zero>): UsageGroup => ({
        day,
        tokenId: t.id,
        tokenName: t.name,
        model,
        ...zero,
        ...figures,
      });
      const jan10 = [g('2026-01-10', a, 'm1', { debit: 3, refund: 3, debits: 1, refunds: 1 }), g('2026-01-10', b, 'm2', { debit: 9, debits: 2 })];
      jan10.sort((x, y) => (x.tokenId < y.tokenId ? -1 : 1));
      const all = [g('2026-01-09', a, 'm1', { debit: 2, debits: 1 }), ...jan10, g('2026-01-11', b, 'm2', { settle: 3 })];
      const q = (from: number, to: number, tokenId: string | null = null, model: string | null = null, limit = 100) =>
        store.usage({ from, to, tokenId, model }, limit);
      assert.deepEqual(await q(D - DAY, D + 2 * DAY), all, '23:59:59.999 is the day before, 00:00 the day itself; the day after D + 2 days is out');
      assert.deepEqual(await q(D, D + 2 * DAY), all.slice(1), 'from is inclusive: the row at 00:00 is in, the one a millisecond before is out');
      assert.deepEqual(await q(D - DAY, D), all.slice(0, 1), 'to is exclusive: the row at 00:00 is out');
      assert.deepEqual(await q(D - DAY, D + 3 * DAY), [...all, g('2026-01-12', a, 'm1', { debit: 7, debits: 1 })]);
      assert.deepEqual(
        await q(D - DAY, D + 2 * DAY, b.id),
        all.filter((x) => x.tokenId === b.id),
        'one token',
      );
      assert.deepEqual(
        await q(D - DAY, D + 2 * DAY, null, 'm1'),
        all.filter((x) => x.model === 'm1'),
        'one model',
      );
      assert.deepEqual(await q(D - DAY, D + 2 * DAY, a.id, 'm2'), [], 'that token never used that model');
      assert.deepEqual(await q(D - DAY, D + 2 * DAY, null, null, 2), all.slice(0, 2), 'at most limit groups, in order');
      assert.deepEqual(await q(0, D - DAY), [], 'nothing before');

      // A deleted token's rows stay, under its id, with no name.
      assert.equal((await store.deleteToken(a.id)).outcome, 'deleted');
      assert.deepEqual(
        await q(D - DAY, D + 2 * DAY),
        all.map((x) => (x.tokenId === a.id ? { ...x, tokenName: null } : x)),
      );
    } finally {
      now.mock.restore();
      await store.close();
    }
  });

  test(`${driver} store: an update that changes the status, vendor status or progress records the state it moves to, in the same compare-and-set`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'h', keyHash: 'h', group: 'default', models: null, quota: null });
      await store.createTask(newTask(t.id, 'task_h', 5));
      const from = Date.now();
      const states = async () => (await store.taskHistory('task_h'))!.states.map((s) => [s.status, s.vendorStatus, s.progress]);
      assert.deepEqual(await states(), [], 'a new task has seen no state');
      let v = (await store.updateTask('task_h', 1, { channel: 'c2', updatedAt: 1001 }))!.version;
      assert.deepEqual(await states(), [], 'a change of channel is no state');
      v = (await store.updateTask('task_h', v, { status: 'queued', upstreamId: 'u', vendorStatus: 'PENDING', updatedAt: 1100 }))!.version;
      v = (await store.updateTask('task_h', v, { context: { a: 1 }, updatedAt: 1150 }))!.version;
      v = (await store.updateTask('task_h', v, { vendorStatus: 'PENDING', progress: 0, updatedAt: 1160 }))!.version;
      assert.equal(await store.updateTask('task_h', v - 1, { status: 'failed', updatedAt: 1170 }), null);
      v = (await store.updateTask('task_h', v, { status: 'in_progress', vendorStatus: 'RUNNING', progress: 20, updatedAt: 1200 }))!.version;
      v = (await store.updateTask('task_h', v, { progress: 60, updatedAt: 1300 }))!.version;
      v = (await store.updateTask('task_h', v, { vendorStatus: null, updatedAt: 1350 }))!.version;
      const done = (await store.updateTask('task_h', v, {
        status: 'completed',
        vendorStatus: 'SUCCEEDED',
        progress: 100,
        completedAt: 1400,
        updatedAt: 1400,
        settle: 3,
      }))!;
      assert.deepEqual(
        await states(),
        [
          ['queued', 'PENDING', 0],
          ['in_progress', 'RUNNING', 20],
          ['in_progress', 'RUNNING', 60],
          ['in_progress', null, 60],
          ['completed', 'SUCCEEDED', 100],
        ],
        'one state per change, none for a patch that leaves the state as it was, none for a stale version',
      );
      const h = (await store.taskHistory('task_h'))!;
      // When it was written, by the ledger's clock (not the patch's updatedAt, which may be older).
      const at = h.states.map((x) => x.at);
      assert.deepEqual(
        at,
        [...at].sort((x, y) => x - y),
      );
      assert.ok(at[0]! >= from && at.at(-1)! <= Date.now() && at.at(-1)! <= h.ledger.at(-1)!.at, `${from} ≤ ${at.join(',')} ≤ the settlement's ledger row`);
      assert.deepEqual(h.task, done, 'the record as stored');
      assert.deepEqual(
        h.ledger.map((l) => [l.kind, l.ref, l.amount, l.tokenId]),
        [
          ['debit', 'task_h', 5, t.id],
          ['settle', 'task_h', 2, t.id],
        ],
        'its debit, then what settlement gave back',
      );
      assert.equal(await store.taskHistory('task_nope'), null);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a task keeps its last 50 states; a refund is in its ledger rows, another task's rows are not`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'k', keyHash: 'k', group: 'default', models: null, quota: null });
      await store.createTask(newTask(t.id, 'task_long', 4));
      await store.createTask(newTask(t.id, 'task_other', 4));
      await store.debit(t.id, 1, { ref: 'task_long-not', model: 'm' });
      let v = 1;
      for (let p = 1; p <= 60; p++) v = (await store.updateTask('task_long', v, { status: 'in_progress', progress: p, updatedAt: 2000 + p }))!.version;
      await store.updateTask('task_long', v, { status: 'failed', error: { code: 'x', message: 'y' }, completedAt: 3000, updatedAt: 3000, refund: true });
      const h = (await store.taskHistory('task_long'))!;
      assert.equal(h.states.length, 50);
      assert.deepEqual({ ...h.states[0]!, at: 0 }, { at: 0, status: 'in_progress', vendorStatus: null, progress: 12 }, 'the oldest went');
      assert.deepEqual({ ...h.states.at(-1)!, at: 0 }, { at: 0, status: 'failed', vendorStatus: null, progress: 60 });
      assert.deepEqual(
        h.ledger.map((l) => [l.kind, l.amount]),
        [
          ['debit', 4],
          ['refund', 4],
        ],
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: every token's tasks are found newest first (ties by id), by status, model, channel and token, in pages that survive a deleted position`, async () => {
    const store = await open();
    try {
      const a = await store.createToken({ name: 'fa', keyHash: 'fa', group: 'default', models: null, quota: null });
      const b = await store.createToken({ name: 'fb', keyHash: 'fb', group: 'default', models: null, quota: null });
      const make = async (id: string, tokenId: string, createdAt: number, extra: Partial<NewTask> = {}, patch?: TaskPatch) => {
        await store.createTask({ ...newTask(tokenId, id), createdAt, ...extra });
        if (patch) assert.ok(await store.updateTask(id, 1, patch));
      };
      await make('task_1', a.id, 100, {}, { status: 'queued', upstreamId: 'u1' });
      await make('task_2', b.id, 200, { model: 'm2' }, { status: 'completed' });
      await make('task_3b', a.id, 300, { channel: 'c2' }, { status: 'failed', refund: true });
      await make('task_3a', b.id, 300, {}, { status: 'queued', upstreamId: 'u3' });
      await make('task_3c', a.id, 300, { model: 'm2' });
      await make('task_0', b.id, 50, { channel: 'c2' }, { status: 'in_progress', upstreamId: 'u0' });
      const ids = async (q: Partial<TaskQuery> = {}) => (await store.findTasks({ before: null, limit: 50, ...q })).map((x) => x.id);

      assert.deepEqual(
        await ids(),
        ['task_3c', 'task_3b', 'task_3a', 'task_2', 'task_1', 'task_0'],
        'newest first, ties by id descending, submitting included',
      );
      assert.deepEqual(await ids({ status: 'queued' }), ['task_3a', 'task_1']);
      assert.deepEqual(await ids({ status: 'submitting' }), ['task_3c']);
      assert.deepEqual(await ids({ model: 'm2' }), ['task_3c', 'task_2']);
      assert.deepEqual(await ids({ channel: 'c2' }), ['task_3b', 'task_0']);
      assert.deepEqual(await ids({ tokenId: b.id }), ['task_3a', 'task_2', 'task_0']);
      assert.deepEqual(await ids({ tokenId: a.id, model: 'm', status: 'failed' }), ['task_3b'], 'filters together narrow');
      assert.deepEqual(await ids({ tokenId: 'nobody' }), []);
      assert.deepEqual(await ids({ status: 'completed', model: 'm' }), []);

      // Pages of two, each before the last of the one before; a position deleted meanwhile still is one.
      const pages: string[][] = [];
      for (let before: TaskQuery['before'] = null; ; ) {
        const page = await store.findTasks({ before, limit: 2 });
        if (page.length === 0) break;
        pages.push(page.map((x) => x.id));
        before = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
        if (page.at(-1)!.id === 'task_3b') assert.ok(await store.deleteTask('task_3b', a.id));
      }
      assert.deepEqual(pages, [
        ['task_3c', 'task_3b'],
        ['task_3a', 'task_2'],
        ['task_1', 'task_0'],
      ]);
      assert.deepEqual(await ids({ before: { createdAt: 300, id: 'task_3b' }, status: 'queued' }), ['task_3a', 'task_1'], 'a cursor and a filter');
      assert.deepEqual(await ids({ before: { createdAt: 300, id: 'task_3a' }, limit: 1 }), ['task_2']);
      // What the list answers is the record as stored.
      assert.deepEqual((await store.findTasks({ before: null, limit: 1, status: 'queued' }))[0], await store.getTask('task_3a'));
    } finally {
      await store.close();
    }
  });

  recordsContract(driver, open);
  tokenKeysContract(driver, open);
  webhookContract(driver, open);
}
