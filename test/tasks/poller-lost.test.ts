/**
 * The poller's rule for tasks the vendor does not know, and for answers that say nothing, on fake
 * time: a made-up task protocol over a real HTTP vendor whose every answer the test scripts, a
 * Poller on a FakeTime clock and timers, and each look awaited before time moves on.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store, TaskRecord } from '../../src/store/store.js';
import { Poller } from '../../src/tasks/poller.js';
import { hashKey } from '../../src/tokens/keys.js';
import { Pools } from '../../src/upstream/pools.js';
import { FakeTime } from '../helpers/fake-time.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';
import { writeConfigFiles } from '../helpers/config-dir.js';

const START = Date.parse('2026-01-01T00:00:00.000Z');

/** What the vendor answers to one query. */
type Answer = 'lost' | 'proxy-404' | 'working';

const PAGE = '<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>';

/** A vendor that answers each query as `script` says, given how many queries came before. */
class ScriptedVendor {
  /** Fake time of each query. */
  readonly queries: number[] = [];
  server: Server;
  url = '';

  constructor(time: FakeTime, script: (n: number) => Answer) {
    this.server = createServer((_req, res) => {
      const answer = script(this.queries.length);
      this.queries.push(time.now);
      if (answer === 'lost') {
        // The vendor's own word: its error body, which the profile's mapping recognises.
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no_such_job"}');
      } else if (answer === 'proxy-404') {
        res.writeHead(404, { 'content-type': 'text/html' }).end(PAGE);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"state":"working"}');
      }
    });
  }

  async start(): Promise<void> {
    this.url = await listenLocal(this.server);
  }

  close(): Promise<void> {
    return closeLocal(this.server);
  }
}

function writeConfig(dir: string, vendorUrl: string, polling: Record<string, number>): void {
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
        response: { body: '{ "status": body.state = "working" ? "in_progress" : body.state }' }
        error: 'status = 404 and body.error = "no_such_job" ? { "status": "lost", "error": { "message": "the vendor has no such job" } }'
channels:
  - name: fake
    profile: fake
    base_url: ${vendorUrl}
    groups: [default]
    models: [m]
    polling: ${JSON.stringify(polling)}
`,
  });
}

interface Rig {
  readonly time: FakeTime;
  readonly vendor: ScriptedVendor;
  readonly store: Store;
  readonly poller: Poller;
  readonly task: TaskRecord;
  readonly tokenKeyHash: string;
  /** Fires timers one by one, awaiting each look, until the task ends (bounded); the record's status at each look. */
  runToEnd(): Promise<Map<number, string>>;
  close(): Promise<void>;
}

async function rig(polling: Record<string, number>, script: (n: number) => Answer): Promise<Rig> {
  const time = new FakeTime(START);
  const vendor = new ScriptedVendor(time, script);
  await vendor.start();
  const dir = mkdtempSync(join(tmpdir(), 'gw-poller-lost-'));
  writeConfig(dir, vendor.url, polling);
  const snapshot: Snapshot = loadConfigOrThrow(dir);
  const channel = snapshot.channelsByName.get('fake')!;
  const store = await openStore(':memory:');
  const tokenKeyHash = hashKey('gw-poller-lost');
  const token = await store.createToken({ name: 'p', keyHash: tokenKeyHash, group: 'default', models: null, quota: 10 });
  await store.createTask({
    id: 'task_lost000000000000000001',
    tokenId: token.id,
    kind: 'job',
    route: 'submit',
    model: 'm',
    upstreamModel: 'm',
    channel: 'fake',
    price: 1,
    createdAt: START,
    deadlineAt: START + channel.polling.deadlineMs,
  });
  const task = (await store.updateTask('task_lost000000000000000001', 1, { status: 'queued', upstreamId: 'job-1', updatedAt: START }))!;
  const pools = new Pools();
  // random 0.5: the ±10 % jitter is exactly 0, so every due time is known.
  const poller = new Poller({ store, pools, snapshot: () => snapshot, log: silentLogger(), clock: time.clock, random: () => 0.5, timers: time.timers });
  poller.track(task, channel);
  return {
    time,
    vendor,
    store,
    poller,
    task,
    tokenKeyHash,
    async runToEnd() {
      const seen = new Map<number, string>();
      for (let i = 0; i < 500; i++) {
        if (!time.runNext()) break;
        await poller.idle();
        const now = (await store.getTask(task.id))!;
        seen.set(time.now - START, now.status);
        if (now.status === 'failed' || now.status === 'completed') return seen;
      }
      throw new Error(`the task never ended; last states ${JSON.stringify([...seen].slice(-5))}`);
    },
    async close() {
      poller.stop();
      await poller.idle();
      await pools.close();
      await store.close();
      await vendor.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Refund rows of the ledger for one task. */
async function refunds(store: Store, keyHash: string, taskId: string): Promise<number> {
  const token = (await store.findTokenByHash(keyHash))!;
  return (await store.ledger(token.id, null, 1000)).filter((e) => e.kind === 'refund' && e.ref === taskId).length;
}

describe('poller: tasks the vendor does not know, and answers that say nothing', () => {
  test('the vendor\'s own "no such task" fails a task only once it has kept coming for lost_after_ms; other news restarts the window, failed looks do not', async () => {
    // Looks every second from t=1 s. Answers: lost at 1-5 s (a proxy's 404 at 3 s), working at
    // 6 s, then lost again from 7 s (a proxy's 404 at 9 s). Had the working answer not restarted
    // the window, the task would fail at 11 s; had the proxy's 404 at 9 s restarted it, at 20 s.
    const script = (n: number): Answer => (n === 2 || n === 8 ? 'proxy-404' : n === 5 ? 'working' : 'lost');
    const r = await rig({ interval_ms: 1000, lost_after_ms: 10_000, deadline_ms: 3_600_000 }, script);
    try {
      const seen = await r.runToEnd();
      const end = (await r.store.getTask(r.task.id))!;
      assert.equal(end.status, 'failed');
      assert.deepEqual(end.error, { code: 'task_lost', message: 'the vendor has no such job' });
      assert.equal(end.completedAt, START + 17_000, 'failed by the first lost answer 10 s after the run that began at 7 s');
      assert.deepEqual(
        r.vendor.queries.map((t) => t - START),
        Array.from({ length: 17 }, (_, i) => (i + 1) * 1000),
        'one look a second: lost answers and a single failed look keep the normal interval',
      );
      // Lost answers are no news: the record stays as the last real news left it.
      assert.equal(seen.get(5_000), 'queued');
      assert.equal(seen.get(11_000), 'in_progress', 'the working answer at 6 s restarted the window');
      assert.equal(seen.get(16_000), 'in_progress');
      assert.equal((await r.store.findTokenByHash(r.tokenKeyHash))!.used, 0, 'the lost task was refunded');
      assert.equal(await refunds(r.store, r.tokenKeyHash, r.task.id), 1);
    } finally {
      await r.close();
    }
  });

  test('generic 404s back off per task, doubling from the interval up to 5 minutes, and the task fails with task_timeout at its deadline, refunded once', async () => {
    const r = await rig({ interval_ms: 1000, deadline_ms: 1_200_000 }, () => 'proxy-404');
    try {
      await r.runToEnd();
      const end = (await r.store.getTask(r.task.id))!;
      assert.equal(end.status, 'failed');
      assert.equal(end.error?.code, 'task_timeout');
      assert.equal(end.completedAt, end.deadlineAt, 'the backoff never carries a look past the deadline');
      const times = r.vendor.queries.map((t) => t - START);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      // First look one interval after acceptance; then 1, 2, 4 … intervals, capped at 300 s.
      assert.equal(times[0], 1000);
      assert.deepEqual(gaps, [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000]);
      assert.equal(r.vendor.queries.length, 12, `12 looks in 20 minutes instead of 1,200 (${times.join(', ')})`);
      assert.equal((await r.store.findTokenByHash(r.tokenKeyHash))!.used, 0);
      assert.equal(await refunds(r.store, r.tokenKeyHash, r.task.id), 1, 'refunded exactly once');
    } finally {
      await r.close();
    }
  });
});
