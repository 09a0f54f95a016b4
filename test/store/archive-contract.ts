import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Store } from '../../src/store/store.js';

/** The result archive's part of the store contract (src/store/archive-store.ts), run by sqlite.test.ts and postgres.test.ts. */
export function archiveContract(driver: string, open: () => Promise<Store>): void {
  /** A task completed with `results`, through updateTask as the poller completes one. */
  async function completeTask(store: Store, id: string, results: { url: string | null; type: string }[]) {
    const token = await store.createToken({ name: `t-${id}`, keyHash: `h-${id}`, group: 'default', models: null, quota: 100 });
    await store.createTask({
      id,
      tokenId: token.id,
      kind: 'video',
      route: 'videos',
      model: 'm',
      upstreamModel: 'm',
      channel: 'c',
      price: 1,
      createdAt: 10,
      deadlineAt: 10_000,
    });
    const running = await store.updateTask(id, 1, { status: 'in_progress', upstreamId: 'up', updatedAt: 20 });
    assert.ok(running);
    const done = await store.updateTask(id, running.version, { status: 'completed', results, completedAt: 30, updatedAt: 30 });
    assert.ok(done);
    return { token, done };
  }

  test(`${driver} store: a task completed with files queues one copy in its own transaction, only while an archive is on`, async () => {
    const store = await open();
    try {
      await completeTask(store, 'task_off', [{ url: 'https://v/a.mp4', type: 'video' }]);
      assert.equal(await store.getArchiveJob('task_off'), null, 'no archive configured: nothing queued');
      await store.setArchiveOn(true);
      await store.setArchiveOn(true);
      const { token } = await completeTask(store, 'task_on', [{ url: 'https://v/a.mp4', type: 'video' }]);
      await completeTask(store, 'task_data', [{ url: null, type: 'lyrics' }]);
      const job = await store.getArchiveJob('task_on');
      assert.deepEqual(job, {
        id: 'task_on',
        kind: 'task',
        tokenId: token.id,
        route: 'videos',
        createdAt: 30,
        dueAt: 30,
        attempts: 0,
        lastError: null,
        failed: false,
      });
      assert.equal(await store.getArchiveJob('task_data'), null, 'a task whose results are only data has nothing to copy');
      // A write after completion (a refresh of its results) queues nothing more.
      const again = await store.getTask('task_on');
      await store.updateTask('task_on', again!.version, { results: [{ url: 'https://v/b.mp4', type: 'video' }] });
      assert.deepEqual((await store.archiveTotals()).queued, 1);
      await store.setArchiveOn(false);
      await completeTask(store, 'task_off2', [{ url: 'https://v/a.mp4', type: 'video' }]);
      assert.equal(await store.getArchiveJob('task_off2'), null);

      // A task its client deletes: its copy is dropped, its files expire for the next purge.
      await store.putArchivedFile({ owner: 'task_on', index: 0, key: 'tasks/task_on/0', size: 5, contentType: null, archivedAt: 40, expiresAt: 1e12 });
      assert.ok(await store.getArchivedFile('task_on', 0, 50));
      assert.equal(await store.deleteTask('task_on', token.id), true);
      assert.equal(await store.getArchiveJob('task_on'), null);
      assert.equal(await store.getArchivedFile('task_on', 0, 50), null);
      assert.deepEqual(
        (await store.expiredArchivedFiles(50, 10)).map((f) => f.owner),
        ['task_on'],
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: archive jobs are leased to one owner at a time, renewed, retried later, given up, finished`, async () => {
    const store = await open();
    try {
      await store.queueArchiveJobs([
        { id: 'a'.repeat(64), kind: 'link', tokenId: 'tok', route: 'images', createdAt: 100 },
        { id: 'b'.repeat(64), kind: 'link', tokenId: 'tok', route: 'images', createdAt: 200 },
      ]);
      // Queued again (a retry of the call): kept once.
      await store.queueArchiveJobs([{ id: 'a'.repeat(64), kind: 'link', tokenId: 'tok', route: 'images', createdAt: 150 }]);
      assert.deepEqual(await store.claimArchiveJobs('r1', 50, 1_000, 10), [], 'not due yet');
      const [first, ...rest] = await Promise.all([store.claimArchiveJobs('r1', 300, 50_000, 1), store.claimArchiveJobs('r2', 300, 50_000, 5)]);
      const taken = [...first, ...rest.flat()].map((j) => j.id).sort();
      assert.deepEqual(taken, ['a'.repeat(64), 'b'.repeat(64)], 'each job to one replica');
      assert.deepEqual(await store.claimArchiveJobs('r3', 49_999, 60_000, 10), [], 'leased until 50000');
      const mine = first[0]!.id;
      assert.deepEqual(await store.renewArchiveLeases('r1', [mine, 'c'.repeat(64)], 55_000), [mine]);
      assert.equal(await store.retryArchiveJob(mine, 'r2', 9_000, 'not yours', false), false);
      assert.equal(await store.retryArchiveJob(mine, 'r1', 6_000, 'vendor said 500', false), true);
      assert.deepEqual(await store.claimArchiveJobs('r3', 5_500, 9_000, 10), [], 'due again only at 6000');
      const retried = await store.claimArchiveJobs('r3', 6_000, 9_000, 10);
      assert.equal(retried.length, 1);
      assert.equal(retried[0]!.attempts, 1);
      assert.equal(retried[0]!.lastError, 'vendor said 500');
      assert.equal(await store.retryArchiveJob(mine, 'r3', 0, 'too large', true), true);
      assert.deepEqual(await store.claimArchiveJobs('r4', 49_000, 100_000, 10), [], 'given up on: never claimed again');
      assert.equal((await store.getArchiveJob(mine))?.failed, true);
      const other = taken.find((id) => id !== mine)!;
      assert.equal(await store.finishArchiveJob(other, 'r9'), false);
      const holder = first[0]!.id === other ? 'r1' : 'r2';
      assert.equal(await store.finishArchiveJob(other, holder), true);
      assert.equal(await store.getArchiveJob(other), null);
      assert.deepEqual(await store.archiveTotals(), { files: 0, bytes: 0, queued: 0, failed: 1 });
      assert.equal(await store.deleteFailedArchiveJobs(100, 10), 0, 'queued at 100 or 150: not before 100');
      assert.equal(await store.deleteFailedArchiveJobs(1_000, 10), 1);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: archived files are recorded, served while kept, listed, found expired and deleted; token retention`, async () => {
    const store = await open();
    try {
      const big = 5 * 1024 ** 3;
      const file = (owner: string, index: number, expiresAt: number) => ({
        owner,
        index,
        key: `tasks/${owner}/${index}`,
        size: index === 0 ? big : 10,
        contentType: index === 0 ? 'video/mp4' : null,
        archivedAt: 100,
        expiresAt,
      });
      await store.putArchivedFile(file('task_x', 1, 1_000));
      await store.putArchivedFile(file('task_x', 0, 500));
      await store.putArchivedFile(file('task_y', 0, 2_000));
      await store.putArchivedFile({ ...file('task_y', 0, 3_000), size: 7 });
      assert.deepEqual(await store.getArchivedFile('task_x', 0, 499), file('task_x', 0, 500), 'sizes past 4 GB kept');
      assert.equal(await store.getArchivedFile('task_x', 0, 500), null, 'expired: not served');
      assert.deepEqual(
        (await store.getArchivedFiles('task_x')).map((f) => f.index),
        [0, 1],
      );
      assert.deepEqual(await store.archiveTotals(), { files: 3, bytes: big + 10 + 7, queued: 0, failed: 0 });
      const expired = await store.expiredArchivedFiles(1_000, 10);
      assert.deepEqual(
        expired.map((f) => [f.owner, f.index]),
        [
          ['task_x', 0],
          ['task_x', 1],
        ],
      );
      assert.equal((await store.expiredArchivedFiles(1_000, 1)).length, 1, 'bounded');
      await store.deleteArchivedFiles(expired);
      assert.deepEqual(await store.getArchivedFiles('task_x'), []);
      assert.equal((await store.getArchivedFile('task_y', 0, 2_500))?.size, 7, 'a file copied again replaces the record');

      assert.equal(await store.getTokenArchiveDays('tok'), null);
      await store.setTokenArchiveDays('tok', 30);
      await store.setTokenArchiveDays('tok', 3);
      assert.equal(await store.getTokenArchiveDays('tok'), 3);
      await store.setTokenArchiveDays('tok', null);
      assert.equal(await store.getTokenArchiveDays('tok'), null);
    } finally {
      await store.close();
    }
  });
}
