import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AuditQuery, RequestQuery, RequestRecord, Store } from '../../src/store/store.js';

/** The request log's and the audit log's part of the store contract (called by store-contract.ts). */
export function recordsContract(driver: string, open: () => Promise<Store>): void {
  const rec = (id: string, at: number, extra: Partial<RequestRecord> = {}): RequestRecord => ({
    id,
    at,
    requestId: `req-${id}`,
    tokenId: 'tok-a',
    route: 'images',
    model: 'm1',
    channel: 'c1',
    status: 200,
    error: null,
    ms: 12,
    taskId: null,
    units: 5,
    ...extra,
  });

  test(`${driver} store: request records are kept once per id, found newest first by each filter, in pages, and purged by age`, async () => {
    const store = await open();
    try {
      const batch = [
        rec('r1', 100),
        rec('r2', 200, { tokenId: 'tok-b', model: 'm2', status: 429, error: 'too_many_requests', units: null, channel: null }),
        rec('r3b', 300, { route: 'videos' }),
        rec('r3a', 300, { tokenId: null, status: 401, error: 'invalid_api_key', model: null, units: null }),
        rec('r4', 400, { requestId: 'client-id', taskId: 'task_x' }),
      ];
      await store.putRequests(batch);
      // A batch sent again (its answer lost) is kept once; an empty batch is nothing.
      await store.putRequests(batch.slice(0, 2));
      await store.putRequests([]);
      const ids = async (q: Partial<RequestQuery> = {}) => (await store.findRequests({ before: null, limit: 50, ...q })).map((r) => r.id);
      assert.deepEqual(await ids(), ['r4', 'r3b', 'r3a', 'r2', 'r1'], 'newest first, ties by id descending');
      assert.deepEqual((await store.findRequests({ before: null, limit: 5 })).at(-1), batch[0], 'a record as stored');
      assert.deepEqual((await store.findRequests({ before: null, limit: 50, status: 429 }))[0], batch[1], 'nulls kept');
      assert.deepEqual(await ids({ tokenId: 'tok-b' }), ['r2']);
      assert.deepEqual(await ids({ model: 'm1' }), ['r4', 'r3b', 'r1']);
      assert.deepEqual(await ids({ route: 'videos' }), ['r3b']);
      assert.deepEqual(await ids({ status: 401 }), ['r3a']);
      assert.deepEqual(await ids({ error: 'too_many_requests' }), ['r2']);
      assert.deepEqual(await ids({ requestId: 'client-id' }), ['r4']);
      assert.deepEqual(await ids({ taskId: 'task_x' }), ['r4']);
      assert.deepEqual(await ids({ from: 200, to: 400 }), ['r3b', 'r3a', 'r2'], 'from ≤ at < to');
      assert.deepEqual(await ids({ tokenId: 'tok-a', from: 300 }), ['r4', 'r3b'], 'filters together narrow');

      // Pages of two, each before the last of the one before; a record inserted meanwhile (newer) moves nothing.
      const pages: string[][] = [];
      for (let before: RequestQuery['before'] = null; ; ) {
        const page = await store.findRequests({ before, limit: 2 });
        if (page.length === 0) break;
        pages.push(page.map((r) => r.id));
        before = { at: page.at(-1)!.at, id: page.at(-1)!.id };
        if (pages.length === 1) await store.putRequests([rec('r5', 500)]);
      }
      assert.deepEqual(pages, [['r4', 'r3b'], ['r3a', 'r2'], ['r1']]);

      // Purged oldest first, `limit` at a time, only what is older than the bound.
      assert.equal(await store.deleteRequestsBefore(300, 1), 1);
      assert.deepEqual(await ids(), ['r5', 'r4', 'r3b', 'r3a', 'r2']);
      assert.equal(await store.deleteRequestsBefore(300, 100), 1);
      assert.equal(await store.deleteRequestsBefore(300, 100), 0);
      assert.deepEqual(await ids(), ['r5', 'r4', 'r3b', 'r3a']);
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: audit records keep before and after as JSON, found newest first by actor, action, target and time, in pages, and purged by age`, async () => {
    const store = await open();
    try {
      const a = { id: 'a1', at: 100, actor: 'cli', action: 'token.create', target: 't1', before: null, after: { id: 't1', quota: null, models: ['x'] } };
      await store.putAudit(a);
      await store.putAudit(a);
      await store.putAudit({ id: 'a2', at: 200, actor: 'admin:abc', action: 'token.quota', target: 't1', before: { quota: null }, after: { quota: 7 } });
      await store.putAudit({
        id: 'a3',
        at: 200,
        actor: 'admin:abc',
        action: 'config.reload',
        target: null,
        before: { version: 'v1' },
        after: { version: 'v2' },
      });
      const ids = async (q: Partial<AuditQuery> = {}) => (await store.findAudit({ before: null, limit: 50, ...q })).map((r) => r.id);
      assert.deepEqual(await ids(), ['a3', 'a2', 'a1']);
      assert.deepEqual((await store.findAudit({ before: null, limit: 50, action: 'token.create' }))[0], a, 'as recorded, JSON and nulls included');
      assert.deepEqual(await ids({ actor: 'admin:abc' }), ['a3', 'a2']);
      assert.deepEqual(await ids({ target: 't1' }), ['a2', 'a1']);
      assert.deepEqual(await ids({ from: 150, to: 250, action: 'config.reload' }), ['a3']);
      assert.deepEqual(await ids({ before: { at: 200, id: 'a3' }, limit: 1 }), ['a2']);
      assert.deepEqual(await ids({ before: { at: 200, id: 'a2' } }), ['a1']);

      // Purged oldest first, `limit` at a time, only what is older than the bound (GATEWAY_AUDIT_DAYS).
      assert.equal(await store.deleteAuditBefore(200, 1), 1);
      assert.equal(await store.deleteAuditBefore(200, 100), 0, 'nothing older than 200 is left');
      assert.deepEqual(await ids(), ['a3', 'a2']);
      assert.equal(await store.deleteAuditBefore(201, 1), 1);
      assert.equal((await ids()).length, 1, 'of two at the same time, a page of one takes one');
    } finally {
      await store.close();
    }
  });
}
