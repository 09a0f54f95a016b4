/**
 * The poller against a small fake vendor whose every answer the test controls, over a config made
 * in a temporary directory (a made-up task protocol: the engine knows nothing of it).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { storeUnavailable } from '../../src/store/unavailable.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';
import { writeConfigFiles } from '../helpers/config-dir.js';

interface Job {
  state: string;
  queries: number;
}

/** A vendor with jobs: POST /jobs creates one; GET /jobs/{id} answers its state after `delayMs`. */
class FakeVendor {
  readonly jobs = new Map<string, Job>();
  inFlight = 0;
  maxInFlight = 0;
  queries = 0;
  delayMs = 0;
  /** Statuses to answer the next queries with instead of the job (e.g. 429), in order. */
  readonly failures: number[] = [];
  readonly queryTimes: number[] = [];
  /** When each injected failure was answered. */
  readonly failureTimes: number[] = [];
  server: Server;
  url = '';
  #n = 0;

  constructor() {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', async () => {
        if (req.method === 'POST' && req.url === '/jobs') {
          const id = `job-${++this.#n}`;
          const body = JSON.parse(raw) as { state?: string };
          this.jobs.set(id, { state: body.state ?? 'waiting', queries: 0 });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ job: id, state: 'waiting' }));
          return;
        }
        const m = /^\/jobs\/([a-z0-9-]+)$/.exec(req.url ?? '');
        const job = m ? this.jobs.get(m[1]!) : undefined;
        this.queries++;
        this.queryTimes.push(Date.now());
        this.inFlight++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
        this.inFlight--;
        const fail = this.failures.shift();
        if (fail) {
          this.failureTimes.push(Date.now());
          res.writeHead(fail, { 'content-type': 'application/json', 'retry-after': '1' });
          res.end('{"error":"busy"}');
          return;
        }
        if (!job) {
          res.writeHead(404).end('{}');
          return;
        }
        job.queries++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ job: m![1], state: job.state }));
      });
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
    'body.json': JSON.stringify({ type: 'object', required: ['model'], properties: { model: { type: 'string' } } }),
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
    task: { kind: job, answer: '{ "id": task.id, "status": task.status, "vendor": task.vendor_status, "error": task.error }' }
  - id: query
    method: GET
    path: /jobs/{id}
    kind: task-query
    task: { kinds: [job], id: { path: id }, answer: '{ "id": task.id, "status": task.status, "vendor": task.vendor_status, "error": task.error }' }
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
        request: { method: POST, path: '"/jobs"', body: '{ "state": body.state }' }
        response:
          body: &update '{ "id": body.job, "status": $lookup({ "waiting": "queued", "working": "in_progress", "done": "completed", "broken": "failed" }, body.state) ?? body.state }'
    tasks:
      query:
        request: { method: GET, path: '"/jobs/" & task.upstream_id' }
        response: { body: *update }
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
  vendor: FakeVendor;
  store: Store;
  gateway: Gateway;
  key: string;
  dir: string;
  submit(body?: Record<string, unknown>): Promise<string>;
  query(id: string): Promise<any>;
  startGateway(): Promise<Gateway>;
  close(): Promise<void>;
}

async function rig(polling: Record<string, number>, storeGiven?: Store): Promise<Rig> {
  const store = storeGiven ?? (await openStore(':memory:'));
  const vendor = new FakeVendor();
  await vendor.start();
  const dir = mkdtempSync(join(tmpdir(), 'gw-poller-'));
  writeConfig(dir, vendor.url, polling);
  const snapshot = loadConfigOrThrow(dir);
  const key = generateKey();
  await store.createToken({ name: 'p', keyHash: hashKey(key), group: 'default', models: null, quota: null });
  const startGateway = async () => {
    const g = createGateway({ snapshot: () => snapshot, store, log: silentLogger() });
    await g.listen(0);
    return g;
  };
  const r: Rig = {
    vendor,
    store,
    gateway: await startGateway(),
    key,
    dir,
    startGateway,
    async submit(body = {}) {
      const res = await fetch(`${r.gateway.url()}/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', ...body }),
      });
      const json = (await res.json()) as { id: string };
      assert.equal(res.status, 200, JSON.stringify(json));
      return json.id;
    },
    async query(id) {
      const res = await fetch(`${r.gateway.url()}/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } });
      return res.json();
    },
    async close() {
      await r.gateway.close();
      await store.close();
      await vendor.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return r;
}

/** Waits (bounded) until `cond` holds, checking every 20 ms. */
async function until(cond: () => boolean | Promise<boolean>, what: string, tries = 500): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never: ${what}`);
}

describe('poller', () => {
  test('follows every task to its end with at most `concurrency` queries in flight per channel', async () => {
    const r = await rig({ interval_ms: 100, concurrency: 3, stale_ms: 3_600_000 });
    try {
      r.vendor.delayMs = 30;
      const ids = await Promise.all(Array.from({ length: 20 }, () => r.submit()));
      await until(() => r.vendor.queries >= 20, 'every task was looked at');
      for (const job of r.vendor.jobs.values()) job.state = 'done';
      await until(async () => (await r.store.getTasks(ids)).every((t) => t.status === 'completed'), 'all completed');
      assert.ok(r.vendor.maxInFlight <= 3, `at most 3 queries in flight, saw ${r.vendor.maxInFlight}`);
      assert.ok(r.vendor.maxInFlight >= 2, 'queries did run in parallel');
    } finally {
      await r.close();
    }
  });

  test('a vendor status the profile does not know keeps the task pending; a known one then moves it', async () => {
    const r = await rig({ interval_ms: 100, stale_ms: 3_600_000 });
    try {
      const id = await r.submit({ state: 'waiting' });
      const job = [...r.vendor.jobs.values()][0]!;
      job.state = 'REVIEWING';
      await until(() => job.queries >= 3, 'three looks');
      const pending = await r.query(id);
      assert.equal(pending.status, 'queued');
      assert.equal(pending.vendor, 'REVIEWING');
      job.state = 'working';
      await until(async () => (await r.query(id)).status === 'in_progress', 'in progress');
      job.state = 'done';
      await until(async () => (await r.query(id)).status === 'completed', 'completed');
    } finally {
      await r.close();
    }
  });

  test('a vendor 429 pauses the whole channel for its Retry-After before anyone asks again', async () => {
    // One query at a time, so "the next query" is one sent after the 429 was answered.
    const r = await rig({ interval_ms: 100, concurrency: 1, stale_ms: 3_600_000 });
    try {
      // The 429 is armed before any task exists, so whichever query comes first gets it (on a slow
      // machine the first look may come before the last submission returns).
      r.vendor.failures.push(429);
      await Promise.all([r.submit(), r.submit(), r.submit()]);
      await until(() => r.vendor.failureTimes.length === 1 && r.vendor.queryTimes.some((t) => t > r.vendor.failureTimes[0]!), 'the 429 and a later look');
      const failedAt = r.vendor.failureTimes[0]!;
      const next = r.vendor.queryTimes.find((t) => t > failedAt)!;
      // The query got 429 with Retry-After: 1; nothing may reach the vendor for a second.
      assert.ok(next - failedAt >= 900, `the next query came ${next - failedAt} ms after the 429`);
    } finally {
      await r.close();
    }
  });

  test('a task past its deadline fails with task_timeout and is refunded', async () => {
    const r = await rig({ interval_ms: 200, deadline_ms: 1000, stale_ms: 3_600_000 });
    try {
      const token = (await r.store.listTokens())[0]!;
      const id = await r.submit();
      assert.equal((await r.store.findTokenByHash(token.keyHash))!.used, 1);
      await until(async () => (await r.store.getTask(id))?.status === 'failed', 'failed at the deadline');
      const t = (await r.query(id)) as { error: { code: string } };
      assert.equal(t.error.code, 'task_timeout');
      assert.equal((await r.store.findTokenByHash(token.keyHash))!.used, 0);
    } finally {
      await r.close();
    }
  });

  test('concurrent queries of a stale task share one vendor call', async () => {
    const r = await rig({ interval_ms: 3_600_000, stale_ms: 0 });
    try {
      const id = await r.submit();
      r.vendor.delayMs = 150;
      const before = r.vendor.queries;
      const answers = await Promise.all(Array.from({ length: 10 }, () => r.query(id)));
      assert.ok(answers.every((a) => a.id === id));
      assert.equal(r.vendor.queries - before, 1, 'ten queries at once, one vendor call');
    } finally {
      await r.close();
    }
  });

  test('a look the store fails (reading the task, writing what the vendor said) is made again: the task still ends, by the poller alone', async () => {
    const base = await openStore(':memory:');
    let away = false;
    let refused = 0;
    const refuse = () => {
      refused++;
      return Promise.reject(storeUnavailable(new Error('connect ECONNREFUSED')));
    };
    const store: Store = {
      ...base,
      getTask: (id) => (away ? refuse() : base.getTask(id)),
      getTasks: (ids) => (away ? refuse() : base.getTasks(ids)),
      updateTask: (id, version, patch) => (away ? refuse() : base.updateTask(id, version, patch)),
      updateTasks: (writes) => (away ? refuse() : base.updateTasks(writes)),
    };
    const r = await rig({ interval_ms: 100, stale_ms: 3_600_000 }, store);
    try {
      const id = await r.submit();
      away = true;
      for (const job of r.vendor.jobs.values()) job.state = 'done';
      // A look fails on the store (reading the task, or writing the vendor's done).
      await until(() => refused >= 1, 'a look failing on the store');
      away = false;
      // Nobody asks for the task: before, the poller had dropped it from its queue for good.
      await until(async () => (await base.getTask(id))?.status === 'completed', 'the task completed once the store answers');
    } finally {
      await r.close();
    }
  });

  for (const lost of ['before it was written', 'after it was written (the answer lost)'] as const) {
    test(`a vendor's acceptance the store fails to record ${lost} is written again: the client gets its id, the vendor one task`, async () => {
      const base = await openStore(':memory:');
      let failures = 0;
      const store: Store = {
        ...base,
        async updateTask(id, version, patch) {
          // The acceptance is the write that brings the vendor's id; it fails once.
          if (patch.upstreamId === undefined || failures > 0) return base.updateTask(id, version, patch);
          failures++;
          if (lost !== 'before it was written') await base.updateTask(id, version, patch);
          throw storeUnavailable(new Error('Connection terminated unexpectedly'));
        },
      };
      const r = await rig({ interval_ms: 100, stale_ms: 3_600_000 }, store);
      try {
        const id = await r.submit();
        assert.equal(failures, 1);
        assert.equal(r.vendor.jobs.size, 1, 'created once at the vendor');
        for (const job of r.vendor.jobs.values()) job.state = 'done';
        await until(async () => (await base.getTask(id))?.status === 'completed', 'the task completed');
        assert.deepEqual(
          (await base.ledger((await base.getTask(id))!.tokenId, null, 10)).map((e) => e.kind),
          ['debit'],
          'charged once, never refunded',
        );
      } finally {
        await r.close();
      }
    });
  }

  test('a new gateway on the same store resumes every unfinished task', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-resume-'));
    const store = await openStore(join(dir, 'g.db'));
    const r = await rig({ interval_ms: 3_600_000, stale_ms: 3_600_000 }, store);
    try {
      const ids = await Promise.all(Array.from({ length: 5 }, () => r.submit()));
      await r.gateway.close();
      for (const job of r.vendor.jobs.values()) job.state = 'done';
      // Resume spreads first looks over one interval; shorten it by a config with a short interval.
      writeConfig(r.dir, r.vendor.url, { interval_ms: 100, stale_ms: 3_600_000 });
      const snapshot = loadConfigOrThrow(r.dir);
      const g = createGateway({ snapshot: () => snapshot, store, log: silentLogger() });
      await g.listen(0);
      r.gateway = g;
      await until(async () => (await store.getTasks(ids)).every((t) => t.status === 'completed'), 'all resumed and completed');
    } finally {
      await r.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
