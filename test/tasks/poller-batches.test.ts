/**
 * The poller's store work in batches (src/tasks/record-batches.ts, look-dispatch.ts): the looks of
 * many tasks read and write their records in a few statements, not one each, and a channel's
 * slot is held for the vendor's query only, never through the store's write. A Poller on fake
 * time over a real HTTP vendor and a store whose calls the test counts or holds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store, TaskRecord } from '../../src/store/store.js';
import { Poller } from '../../src/tasks/poller.js';
import { Pools } from '../../src/upstream/pools.js';
import { writeConfigFiles } from '../helpers/config-dir.js';
import { FakeTime } from '../helpers/fake-time.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';
import { until } from '../helpers/until.js';

const START = Date.parse('2026-01-01T00:00:00.000Z');

/** A vendor whose every job is working, 40 % of the way. */
class Vendor {
  queries = 0;
  readonly server: Server = createServer((_req, res) => {
    this.queries++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"state":"working","progress":40}');
  });
  url = '';

  async start(): Promise<void> {
    this.url = await listenLocal(this.server);
  }

  close(): Promise<void> {
    return closeLocal(this.server);
  }
}

function writeConfig(dir: string, vendorUrl: string, concurrency: number): void {
  writeConfigFiles(dir, {
    'body.json': JSON.stringify({ type: 'object' }),
    'routes.yaml': `version: 1
routes:
  - id: submit
    method: POST
    path: /jobs
    kind: task-submit
    operation: create
    model: { body: /model }
    models: [m]
    body: { schema: body.json }
    task: { kind: job, answer: '{ "id": task.id }' }
families:
  - { name: jobs, models: [m] }
`,
    'channels.yaml': `version: 1
groups: { default: {} }
profiles:
  fake:
    auth: { type: none }
    operations:
      create:
        request: { method: POST, path: '"/jobs"' }
        response: { body: '{ "id": body.job, "status": "queued" }' }
    tasks:
      query:
        request: { method: GET, path: '"/jobs/" & task.upstream_id' }
        response: { body: '{ "status": body.state = "working" ? "in_progress" : body.state, "progress": body.progress }' }
channels:
  - name: fake
    profile: fake
    base_url: ${vendorUrl}
    groups: [default]
    models: [m]
    polling: { interval_ms: 1000, concurrency: ${concurrency}, deadline_ms: 3600000 }
`,
  });
}

/** A poller following `n` queued tasks, all due at once, over `store` (built from the in-memory store given). */
async function rig(n: number, concurrency: number, wrap: (base: Store) => Store) {
  const time = new FakeTime(START);
  const vendor = new Vendor();
  await vendor.start();
  const dir = mkdtempSync(join(tmpdir(), 'gw-poller-batches-'));
  writeConfig(dir, vendor.url, concurrency);
  const snapshot = loadConfigOrThrow(dir);
  const channel = snapshot.channelsByName.get('fake')!;
  const base = await openStore(':memory:');
  const token = await base.createToken({ name: 'p', keyHash: 'p', group: 'default', models: null, quota: null });
  const tasks: TaskRecord[] = [];
  for (let i = 0; i < n; i++) {
    const id = `task_batch${String(i).padStart(17, '0')}`;
    await base.createTask({
      id,
      tokenId: token.id,
      kind: 'job',
      route: 'submit',
      model: 'm',
      upstreamModel: 'm',
      channel: 'fake',
      price: 1,
      createdAt: START,
      deadlineAt: START + 3_600_000,
    });
    tasks.push((await base.updateTask(id, 1, { status: 'queued', upstreamId: `job-${i}`, updatedAt: START }))!);
  }
  const store = wrap(base);
  const pools = new Pools();
  // random 0.5: no jitter, so every task falls due at the same time.
  const poller = new Poller({ store, pools, snapshot: () => snapshot, log: silentLogger(), clock: time.clock, random: () => 0.5, timers: time.timers });
  for (const t of tasks) poller.track(t, channel);
  return {
    time,
    vendor,
    base,
    poller,
    ids: tasks.map((t) => t.id),
    async close() {
      poller.stop();
      await poller.idle();
      await pools.close();
      await base.close();
      await vendor.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('poller: store work in batches', () => {
  test('the looks at 40 tasks read and write their records in a few statements, not one per task, each task written once', async () => {
    const calls = { getTask: 0, getTasks: 0, updateTask: 0, updateTasks: 0, written: 0 };
    const r = await rig(40, 4, (base) => ({
      ...base,
      getTask: (id) => (calls.getTask++, base.getTask(id)),
      getTasks: (ids) => (calls.getTasks++, base.getTasks(ids)),
      updateTask: (id, version, patch) => (calls.updateTask++, base.updateTask(id, version, patch)),
      updateTasks: (writes) => (calls.updateTasks++, (calls.written += writes.length), base.updateTasks(writes)),
    }));
    try {
      assert.equal(r.time.runNext(), true, 'the tasks fall due');
      await r.poller.idle();
      assert.equal(r.vendor.queries, 40, 'one look at each task');
      const after = await r.base.getTasks(r.ids);
      assert.deepEqual(
        after.map((t) => [t.status, t.progress, t.version]),
        r.ids.map(() => ['in_progress', 40, 3]),
        'each task written once, with what its look found',
      );
      assert.equal(calls.getTask + calls.updateTask, 0, 'no read or write of one task alone');
      assert.equal(calls.written, 40);
      // One statement per task would be 40 of each; 4 slots and gathered requests make a handful.
      assert.ok(calls.getTasks <= 20 && calls.updateTasks <= 20, `reads ${calls.getTasks}, writes ${calls.updateTasks}: fewer statements than half the tasks`);
    } finally {
      await r.close();
    }
  });

  test("a channel's slot is given back once the vendor answered: its next looks go out while the store still writes the first", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let writes = 0;
    const r = await rig(3, 1, (base) => ({
      ...base,
      updateTasks: async (w) => {
        writes++;
        await held;
        return base.updateTasks(w);
      },
    }));
    try {
      r.time.runNext();
      // One slot: the three queries can only all go out if no look holds it through its write.
      await until('three queries with the first write held', () => r.vendor.queries === 3);
      assert.equal(writes, 1, 'the first write is under way, the others wait to go out together after it');
      assert.deepEqual(
        (await r.base.getTasks(r.ids)).map((t) => t.status),
        ['queued', 'queued', 'queued'],
        'nothing written yet',
      );
      release();
      await r.poller.idle();
      assert.deepEqual(
        (await r.base.getTasks(r.ids)).map((t) => t.status),
        ['in_progress', 'in_progress', 'in_progress'],
      );
      assert.equal(writes, 2, 'the two held back went out in one statement');
    } finally {
      release();
      await r.close();
    }
  });
});
