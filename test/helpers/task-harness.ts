/**
 * End-to-end harness for tasks: every simulator of src/sim/registry.ts, a real gateway on port 0
 * whose channels all point at them (polling every `pollMs`), an in-memory store (or a file), and
 * a token. Used by the task e2e tests, the official-client tests and the benchmark.
 *
 *   const h = await startTaskHarness({ finishMs: 300 });
 *   after(() => h.close());
 *   const sub = await h.post('/v1/video/generations', { model: 'epsilon-video-3', prompt: 'x' });
 *   const done = await h.waitFor(sub.json.id, (t) => t.status === 'completed');
 */
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import type { Simulator } from '../../src/sim/http.js';
import { SIMULATORS } from '../../src/sim/registry.js';
import type { SimTask } from '../../src/sim/task-book.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store, TaskRecord } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { postJson, type JsonAnswer, type NetworkOptions } from './harness.js';

/** How to start a task harness; every field is optional. */
export interface TaskHarnessOptions {
  /** Milliseconds until a simulated task finishes (prompts can say otherwise); default 300. */
  readonly finishMs?: number;
  /** Poll interval of every channel; default 100 ms. */
  readonly pollMs?: number;
  /** Staleness after which a query route asks the vendor; default 50 ms. */
  readonly staleMs?: number;
  /** Task deadline of every channel; default 60 s. */
  readonly deadlineMs?: number;
  /** How long the vendor's "no such task" must keep coming before a task is lost; default 300 ms. */
  readonly lostAfterMs?: number;
  /** Quota of the first token; default unlimited. */
  readonly quota?: number | null;
  /** A store to use instead of a fresh in-memory one (crash tests pass a file store). */
  readonly store?: Store;
  /** Start the background poller; default true. */
  readonly poll?: boolean;
  /** Where the gateway logs; default nowhere. */
  readonly log?: Logger;
  /** Opens /admin/* and /metrics to this key; default closed. */
  readonly adminKey?: string;
  /** How it serves: the proxies it believes, CORS; default none (plain HTTP: its fetch helpers do not take a CA). */
  readonly network?: Omit<NetworkOptions, 'tls'>;
  /** How webhooks are sent (GATEWAY_WEBHOOK_*) and the public URL of their links; default: the defaults, none. */
  readonly webhooks?: GatewayOptions['webhooks'];
  readonly publicUrl?: string;
}

/** A running set of simulators + gateway + token. */
export interface TaskHarness {
  readonly url: string;
  readonly key: string;
  readonly store: Store;
  readonly gateway: Gateway;
  readonly snapshot: Snapshot;
  /** Simulators by profile name. */
  readonly sims: Readonly<Record<string, Simulator>>;
  /** POSTs JSON with the harness key (or `headers.authorization`). */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<JsonAnswer>;
  /** GETs with the harness key; the body is parsed as JSON when it is JSON. */
  get(path: string, headers?: Record<string, string>): Promise<JsonAnswer & { bytes: Buffer }>;
  /** The stored record of one of our task ids. */
  record(id: string): Promise<TaskRecord | null>;
  /**
   * One of our tasks as the simulator of `profile` keeps it (the body it was sent, its polls),
   * with our record; fails the test when either side does not know it.
   */
  vendorTask(id: string, profile: string): Promise<{ rec: TaskRecord; sim: SimTask; body: Record<string, unknown> }>;
  /**
   * Queries a task until `done` holds (bounded: 200 tries, 25 ms apart): through GET /v1/videos/{id}
   * unless `path` says another route, with the harness key unless `key` names another.
   */
  waitFor(id: string, done: (task: any) => boolean, opts?: { path?: (id: string) => string; key?: string }): Promise<any>;
  createKey(quota?: number | null): Promise<string>;
  close(): Promise<void>;
}

/** Starts every simulator and a gateway in front of them. */
export async function startTaskHarness(opts: TaskHarnessOptions = {}): Promise<TaskHarness> {
  const sims: Record<string, Simulator> = {};
  for (const [profile, start] of Object.entries(SIMULATORS)) sims[profile] = await start({ finishMs: opts.finishMs ?? 300 });
  const store = opts.store ?? (await openStore(':memory:'));
  let gateway: Gateway | undefined;
  try {
    const polling = {
      interval_ms: opts.pollMs ?? 100,
      stale_ms: opts.staleMs ?? 50,
      deadline_ms: opts.deadlineMs ?? 60_000,
      lost_after_ms: opts.lostAfterMs ?? 300,
      concurrency: 16,
    };
    const snapshot = loadConfigOrThrow(PROJECT_ROOT, {
      overrideChannel: (c) => {
        const sim = sims[c.profile];
        // The e2e tests inject vendor failures back to back to check how each maps; a breaker
        // (test/gateway/routing.test.ts) would take the channel out halfway.
        return sim ? { base_url: sim.url, secrets: { ...sim.secrets }, polling, breaker: { enabled: false } } : null;
      },
    });
    gateway = createGateway({
      snapshot: () => snapshot,
      store,
      log: opts.log ?? silentLogger(),
      poll: opts.poll ?? true,
      adminKey: opts.adminKey,
      webhooks: opts.webhooks,
      publicUrl: opts.publicUrl,
      ...opts.network,
    });
    await gateway.listen(0);
    let n = 0;
    const createKey = async (quota: number | null = null) => {
      const key = generateKey();
      await store.createToken({ name: `task-test-${++n}`, keyHash: hashKey(key), group: 'default', models: null, quota });
      return key;
    };
    const key = await createKey(opts.quota ?? null);
    const gw = gateway;
    const url = gw.url();
    const auth = (headers: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...headers });
    const get = async (path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(url + path, { headers: auth(headers) });
      const bytes = Buffer.from(await res.arrayBuffer());
      const text = bytes.toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, text, json, bytes };
    };
    return {
      url,
      key,
      store,
      gateway: gw,
      snapshot,
      sims,
      post: (path, body, headers) => postJson(url, path, body, auth(headers)),
      get,
      record: (id) => store.getTask(id),
      async vendorTask(id, profile) {
        const rec = await store.getTask(id);
        assert.ok(rec?.upstreamId, `the record of ${id} carries the vendor id`);
        const sim = sims[profile]?.tasks?.get(rec.upstreamId);
        assert.ok(sim, `the ${profile} simulator knows the task ${rec.upstreamId}`);
        return { rec, sim, body: sim.body as Record<string, unknown> };
      },
      async waitFor(id, done, { path = (x: string) => `/v1/videos/${x}`, key: other }: { path?: (id: string) => string; key?: string } = {}) {
        let last: unknown;
        for (let i = 0; i < 200; i++) {
          const res = await get(path(id), other ? { authorization: `Bearer ${other}` } : {});
          last = res.json;
          if (res.status === 200 && done(res.json)) return res.json;
          await new Promise((r) => setTimeout(r, 25));
        }
        throw new Error(`task ${id} never reached the expected state; last answer ${JSON.stringify(last)}`);
      },
      createKey,
      async close() {
        await gw.close();
        if (!opts.store) await store.close();
        await Promise.all(Object.values(sims).map((s) => s.close()));
      },
    };
  } catch (err) {
    await gateway?.close();
    if (!opts.store) await store.close();
    await Promise.all(Object.values(sims).map((s) => s.close()));
    throw err;
  }
}
