import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NewTask, NewWebhookEndpoint, Store, WebhookEvent } from '../../src/store/store.js';

/** Webhook endpoints and deliveries: their part of the store contract (called by store-contract.ts). */
export function webhookContract(driver: string, open: () => Promise<Store>): void {
  let n = 0;
  const endpoint = (owner: { tokenId?: string; group?: string }, events: WebhookEvent[], more: Partial<NewWebhookEndpoint> = {}): NewWebhookEndpoint => ({
    id: `we_${driver.replace(/\W/g, '')}${n++}`,
    tokenId: owner.tokenId ?? null,
    group: owner.group ?? null,
    url: 'https://hooks.example/in',
    callbackOrigins: null,
    events,
    progressEverySeconds: 30,
    enabled: true,
    description: null,
    secret: 'whsec_c2VjcmV0',
    createdAt: 1000 + n,
    ...more,
  });
  const task = (tokenId: string, id: string): NewTask => ({
    id,
    tokenId,
    kind: 'video',
    route: 'r',
    model: 'm',
    upstreamModel: 'um',
    channel: 'c',
    price: 2,
    createdAt: 1000,
    deadlineAt: 9_000_000_000_000,
  });
  /** A task moved to queued (accepted): version 2. */
  const accepted = async (store: Store, tokenId: string, id: string) => {
    await store.createTask(task(tokenId, id));
    const t = await store.updateTask(id, 1, { status: 'queued', upstreamId: `up-${id}`, updatedAt: 1001 });
    assert.ok(t);
    return t;
  };
  const deliveriesOf = async (store: Store, taskId: string) =>
    (await store.listDeliveries({ taskId, limit: 100 })).map((d) => `${d.endpointId} ${d.event} ${d.url}`).sort();

  test(`${driver} store: webhook endpoints are made within a bound per owner, listed, changed, rotated and deleted`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'w', keyHash: 'w', group: 'g1', models: null, quota: null });
      const a = await store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.completed']), 2);
      assert.ok(a);
      assert.deepEqual(
        [a.tokenId, a.group, a.url, a.events, a.enabled, a.previousSecret],
        [t.id, null, 'https://hooks.example/in', ['task.completed'], true, null],
      );
      assert.ok(await store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.failed']), 2));
      assert.equal(await store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.failed']), 2), null, 'a third is over the bound of 2');
      const g = await store.createWebhookEndpoint(endpoint({ group: 'g1' }, ['task.progress'], { progressEverySeconds: 5 }), 2);
      assert.equal(g?.group, 'g1');
      assert.equal((await store.listWebhookEndpoints({ tokenId: t.id })).length, 2);
      assert.deepEqual(
        (await store.listWebhookEndpoints({ group: 'g1' })).map((e) => e.id),
        [g?.id],
      );
      assert.equal((await store.listWebhookEndpoints({})).length, 3);
      const changed = await store.updateWebhookEndpoint(a.id, { enabled: false, events: ['task.completed', 'task.failed'], updatedAt: 5000 });
      assert.deepEqual([changed?.enabled, changed?.events, changed?.url, changed?.updatedAt], [false, ['task.completed', 'task.failed'], a.url, 5000]);
      // A rotation with a grace keeps the old secret until then; one without drops it.
      const rotated = await store.rotateWebhookSecret(a.id, 'whsec_bmV3', 9000, 6000);
      assert.deepEqual([rotated?.secret, rotated?.previousSecret, rotated?.previousSecretUntil], ['whsec_bmV3', 'whsec_c2VjcmV0', 9000]);
      const again = await store.rotateWebhookSecret(a.id, 'whsec_dGhpcmQ=', 7000, 7000);
      assert.deepEqual([again?.secret, again?.previousSecret, again?.previousSecretUntil], ['whsec_dGhpcmQ=', null, null]);
      assert.equal(await store.rotateWebhookSecret('we_none', 's', 1, 1), null);
      assert.equal(await store.deleteWebhookEndpoint(a.id), true);
      assert.equal(await store.deleteWebhookEndpoint(a.id), false);
      assert.equal(await store.getWebhookEndpoint(a.id), null);
      // One callback endpoint (no url) per token.
      const cb = await store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.completed'], { url: null, callbackOrigins: ['https://a.example'] }), 5);
      assert.deepEqual(cb?.callbackOrigins, ['https://a.example']);
      assert.equal((await store.callbackEndpointOf(t.id))?.id, cb?.id);
      await assert.rejects(store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.completed'], { url: null }), 5));
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a task's terminal write writes one delivery per endpoint that asked, in the same write, and only once`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'e', keyHash: 'e', group: 'g2', models: null, quota: null });
      const other = await store.createToken({ name: 'o', keyHash: 'o', group: 'g3', models: null, quota: null });
      const own = await store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.completed', 'task.failed']), 10);
      const grp = await store.createWebhookEndpoint(endpoint({ group: 'g2' }, ['task.completed'], { url: 'https://group.example/h' }), 10);
      await store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.completed'], { enabled: false }), 10);
      await store.createWebhookEndpoint(endpoint({ tokenId: other.id }, ['task.completed']), 10);
      await store.createWebhookEndpoint(endpoint({ group: 'g3' }, ['task.completed']), 10);
      const cb = await store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.completed'], { url: null, callbackOrigins: ['https://cb.example'] }), 10);
      assert.ok(own && grp && cb);

      const a = await accepted(store, t.id, 'task_wa');
      await store.putTaskCallback('task_wa', cb.id, 'https://cb.example/done?x=1', 1002);
      assert.deepEqual(await deliveriesOf(store, 'task_wa'), [], 'nothing before the task ends');
      const done = await store.updateTask('task_wa', a.version, { status: 'completed', progress: 100, completedAt: 2000, updatedAt: 2000, settle: 2 });
      assert.equal(done?.status, 'completed');
      assert.deepEqual(
        await deliveriesOf(store, 'task_wa'),
        [
          `${cb.id} task.completed https://cb.example/done?x=1`,
          `${grp.id} task.completed https://group.example/h`,
          `${own.id} task.completed https://hooks.example/in`,
        ].sort(),
      );
      const [d] = await store.listDeliveries({ taskId: 'task_wa', endpointId: own.id, limit: 10 });
      assert.match(d?.id ?? '', /^msg_[0-9a-f]{32}$/);
      assert.deepEqual([d?.status, d?.attempts, d?.tokenId, d?.lastCode], ['pending', 0, t.id, null]);
      // A stale compare-and-set writes nothing, deliveries included.
      assert.equal(await store.updateTask('task_wa', a.version, { status: 'failed', refund: true, updatedAt: 3000 }), null);
      assert.equal((await deliveriesOf(store, 'task_wa')).length, 3);

      // A failure through the batch (the poller's path); a cancelled one is task.cancelled.
      const b = await accepted(store, t.id, 'task_wb');
      const c = await accepted(store, t.id, 'task_wc');
      await store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.cancelled']), 10);
      const written = await store.updateTasks([
        { id: b.id, version: b.version, patch: { status: 'failed', error: { code: 'generation_failed', message: 'no' }, refund: true, updatedAt: 4000 } },
        { id: c.id, version: c.version, patch: { status: 'failed', error: { code: 'task_cancelled', message: 'cancelled' }, refund: true, updatedAt: 4000 } },
      ]);
      assert.equal(written.filter(Boolean).length, 2);
      assert.deepEqual(
        (await store.listDeliveries({ taskId: 'task_wb', limit: 10 })).map((x) => [x.endpointId, x.event]),
        [[own.id, 'task.failed']],
      );
      assert.deepEqual(
        (await store.listDeliveries({ taskId: 'task_wc', limit: 10 })).map((x) => x.event),
        ['task.cancelled'],
      );
      // Another token's task reaches only its own endpoints.
      const x = await accepted(store, other.id, 'task_wx');
      await store.updateTasks([{ id: x.id, version: x.version, patch: { status: 'completed', completedAt: 5000, updatedAt: 5000, settle: 2 } }]);
      assert.equal((await store.listDeliveries({ taskId: 'task_wx', limit: 10 })).length, 2, "the other token's endpoint and its group's");
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: progress is written at most once per endpoint's interval per task`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'p', keyHash: 'p', group: 'gp', models: null, quota: null });
      const e = await store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.progress'], { progressEverySeconds: 3600 }), 10);
      const a = await accepted(store, t.id, 'task_p1');
      assert.equal((await store.listDeliveries({ taskId: 'task_p1', limit: 10 })).length, 0, 'queued is no progress');
      const b = await store.updateTask(a.id, a.version, { status: 'in_progress', progress: 10, updatedAt: 2000 });
      assert.ok(b);
      const [c] = await store.updateTasks([{ id: b.id, version: b.version, patch: { progress: 20, updatedAt: 2100 } }]);
      assert.ok(c);
      await store.updateTask(c.id, c.version, { progress: 30, updatedAt: 2200 });
      const list = await store.listDeliveries({ taskId: 'task_p1', limit: 10 });
      assert.deepEqual(
        list.map((d) => [d.endpointId, d.event]),
        [[e?.id, 'task.progress']],
        'one within the hour',
      );
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: deliveries are leased to one worker, finished by their holder, sent again, paged and purged`, async () => {
    const store = await open();
    try {
      const t = await store.createToken({ name: 'l', keyHash: 'l', group: 'gl', models: null, quota: null });
      const e = await store.createWebhookEndpoint(endpoint({ tokenId: t.id }, ['task.completed']), 10);
      assert.ok(e);
      for (const id of ['task_l1', 'task_l2', 'task_l3']) {
        const a = await accepted(store, t.id, id);
        await store.updateTask(id, a.version, { status: 'completed', completedAt: 2000, updatedAt: 2000, settle: 2 });
      }
      const all = await store.listDeliveries({ limit: 10 });
      assert.equal(all.length, 3);
      const due = Math.max(...all.map((d) => d.nextAt));
      assert.deepEqual(await store.pendingDeliveries(), { count: 3, oldestAt: Math.min(...all.map((d) => d.createdAt)) });
      const [one, two] = await Promise.all([store.claimDeliveries('r1', due, due + 1000, 2, 10), store.claimDeliveries('r2', due, due + 1000, 2, 10)]);
      assert.equal(one.length + two.length, 3, 'every due delivery once');
      assert.equal(new Set([...one, ...two].map((d) => d.id)).size, 3, 'none twice');
      assert.deepEqual(await store.claimDeliveries('r3', due + 10, due + 1000, 10, 10), [], 'all leased');
      const mine = one[0] ?? two[0];
      assert.ok(mine);
      const holder = one.includes(mine) ? 'r1' : 'r2';
      assert.equal(await store.finishAttempt(mine.id, 'r3', { status: 'delivered', nextAt: 0, code: 200, error: null, at: due + 5 }), false, 'not its lease');
      // A lease that ran out is taken by another, and the first holder's answer no longer counts.
      const taken = await store.claimDeliveries('r3', due + 1000, due + 6000, 10, 10);
      assert.equal(taken.length, 3);
      assert.equal(await store.finishAttempt(mine.id, holder, { status: 'delivered', nextAt: 0, code: 200, error: null, at: due + 1001 }), false);
      assert.equal(await store.finishAttempt(mine.id, 'r3', { status: 'pending', nextAt: due + 5000, code: 503, error: 'answered 503', at: due + 1002 }), true);
      let d = await store.getDelivery(mine.id);
      assert.deepEqual([d?.status, d?.attempts, d?.lastCode, d?.lastError, d?.nextAt], ['pending', 1, 503, 'answered 503', due + 5000]);
      assert.deepEqual(await store.claimDeliveries('r4', due + 4999, due + 9000, 10, 10), [], 'not due yet, the others still leased');
      assert.equal((await store.claimDeliveries('r4', due + 5000, due + 9000, 10, 10)).length, 1);
      assert.equal(await store.finishAttempt(mine.id, 'r4', { status: 'delivered', nextAt: 0, code: 204, error: null, at: due + 5001 }), true);
      d = await store.getDelivery(mine.id);
      assert.deepEqual([d?.status, d?.attempts, d?.lastCode, d?.deliveredAt], ['delivered', 2, 204, due + 5001]);
      assert.equal(await store.finishAttempt(mine.id, 'r4', { status: 'failed', nextAt: 0, code: null, error: 'x', at: due + 5002 }), false, 'finished');
      // Filters and pages.
      assert.deepEqual(
        (await store.listDeliveries({ status: 'delivered', limit: 10 })).map((x) => x.id),
        [mine.id],
      );
      const first = await store.listDeliveries({ endpointId: e.id, limit: 2 });
      const last = first.at(-1);
      assert.ok(last);
      const rest = await store.listDeliveries({ endpointId: e.id, limit: 2, before: { at: last.createdAt, id: last.id } });
      assert.equal(new Set([...first, ...rest].map((x) => x.id)).size, 3, 'two pages, every delivery once');
      // Sent again: pending at once, same id, a new window.
      const again = await store.resendDelivery(mine.id, due + 7000);
      assert.deepEqual([again?.id, again?.status, again?.nextAt, again?.windowStart, again?.attempts], [mine.id, 'pending', due + 7000, due + 7000, 2]);
      assert.equal(await store.resendDelivery('msg_none', 1), null);
      // Purge: finished deliveries before the time only.
      await store.finishAttempt(mine.id, 'r4', { status: 'failed', nextAt: 0, code: null, error: 'x', at: 1 });
      const r4 = await store.claimDeliveries('r5', due + 7000, due + 9000, 10, 10);
      for (const x of r4) await store.finishAttempt(x.id, 'r5', { status: 'failed', nextAt: 0, code: 500, error: 'gave up', at: due + 7001 });
      assert.equal(await store.deleteDeliveriesBefore(Number.MAX_SAFE_INTEGER, 2), 2, 'bounded by the limit');
      assert.equal(await store.deleteDeliveriesBefore(Number.MAX_SAFE_INTEGER, 10), 1);
      assert.deepEqual(await store.pendingDeliveries(), { count: 0, oldestAt: null });
    } finally {
      await store.close();
    }
  });

  test(`${driver} store: a claim is fair across endpoints: at most perEndpoint of one (the owner's live leases counted), round-robin within the limit`, async () => {
    const store = await open();
    try {
      const a = await store.createToken({ name: 'fa', keyHash: 'fa', group: 'gfa', models: null, quota: null });
      const b = await store.createToken({ name: 'fb', keyHash: 'fb', group: 'gfb', models: null, quota: null });
      const dead = await store.createWebhookEndpoint(endpoint({ tokenId: a.id }, ['task.completed'], { url: 'https://dead.example/h' }), 10);
      const live = await store.createWebhookEndpoint(endpoint({ tokenId: b.id }, ['task.completed'], { url: 'https://live.example/h' }), 10);
      assert.ok(dead && live);
      // Seven events for the dead receiver, written before the live one's two.
      const complete = async (tokenId: string, id: string, at: number) => {
        const t = await accepted(store, tokenId, id);
        await store.updateTask(id, t.version, { status: 'completed', completedAt: at, updatedAt: at, settle: 2 });
      };
      for (let i = 0; i < 7; i++) await complete(a.id, `task_fd${i}`, 2000 + i);
      for (let i = 0; i < 2; i++) await complete(b.id, `task_fl${i}`, 3000 + i);
      const all = await store.listDeliveries({ limit: 20 });
      const due = Math.max(...all.map((d) => d.nextAt));
      const until = due + 1000;
      // In the order a claim ranks them: earliest due first, then by id.
      const deadIds = all
        .filter((d) => d.endpointId === dead.id)
        .sort((x, y) => x.nextAt - y.nextAt || (x.id < y.id ? -1 : 1))
        .map((d) => d.id);
      assert.equal(deadIds.length, 7);
      const count = (ds: readonly { endpointId: string }[]) => [
        ds.filter((d) => d.endpointId === dead.id).length,
        ds.filter((d) => d.endpointId === live.id).length,
      ];

      const first = await store.claimDeliveries('o1', due, until, 2, 3);
      assert.deepEqual(count(first), [1, 1], 'the limit goes round the endpoints: the first of each, not the two oldest');
      assert.equal(first.find((d) => d.endpointId === dead.id)?.id, deadIds[0], "the dead endpoint's earliest due first");
      const second = await store.claimDeliveries('o1', due, until, 16, 3);
      assert.deepEqual(count(second), [2, 1], 'the dead endpoint up to its share of 3 with the lease o1 holds, the live one its last');
      assert.deepEqual(
        second
          .filter((d) => d.endpointId === dead.id)
          .map((d) => d.id)
          .sort(),
        deadIds.slice(1, 3).sort(),
      );
      assert.deepEqual(await store.claimDeliveries('o1', due, until, 16, 3), [], "o1's share of the dead endpoint is full, and nothing else is due");
      const other = await store.claimDeliveries('o2', due, until, 16, 3);
      assert.deepEqual(count(other), [3, 0], "another owner's leases are not its own: it has its own share");
      // One of o1's attempts ends (retried later): its slot is free for the next of that endpoint.
      const done = second.find((d) => d.endpointId === dead.id);
      assert.ok(done);
      assert.equal(await store.finishAttempt(done.id, 'o1', { status: 'pending', nextAt: due + 1_000_000, code: null, error: 'no answer', at: due + 1 }), true);
      const next = await store.claimDeliveries('o1', due + 2, until, 16, 3);
      assert.deepEqual(
        next.map((d) => d.id),
        [deadIds[6]],
        'one more, the last one due',
      );
      // Leases that ran out count for nobody: o1 takes its full share again.
      const later = await store.claimDeliveries('o1', until + 1, until + 2000, 16, 3);
      assert.deepEqual(count(later), [3, 2]);
      // Owners racing for the same rows never take one twice; what a race skipped is taken next time.
      const owners = ['q1', 'q2', 'q3', 'q4'];
      const raced = (await Promise.all(owners.map((o) => store.claimDeliveries(o, until + 3000, until + 9000, 16, 2)))).flat();
      const rest = [];
      for (const o of owners) rest.push(...(await store.claimDeliveries(o, until + 3000, until + 9000, 16, 2)));
      const ids = [...raced, ...rest].map((d) => d.id);
      assert.equal(new Set(ids).size, ids.length, 'none twice');
      assert.equal(ids.length, 8, 'every delivery due (six dead, two live) once');
    } finally {
      await store.close();
    }
  });
}
