/**
 * Health and graceful shutdown (docs/deploying.md, "Health and shutdown"): /healthz, /readyz and the OpenAPI
 * document answer without the admin key; /readyz says 503 when the store does not answer or a stop is under way; a stop
 * lets the requests in flight finish within GATEWAY_DRAIN_MS, cuts the rest, and logs its start and
 * end; a real process does all of that on SIGTERM.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { channelEnvNames } from '../../src/config/env.js';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createGateway } from '../../src/gateway.js';
import { readyz } from '../../src/admin/health.js';
import { renderOpenApi } from '../../src/openapi/openapi-document.js';
import type { AdminDeps } from '../../src/admin/admin-types.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import { startAlphaSimulator } from '../../src/sim/alpha-native.js';
import type { Simulator } from '../../src/sim/http.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { StoreGuard } from '../../src/store/store-guard.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli } from '../helpers/process.js';
import { until } from '../helpers/until.js';

const ADMIN = 'admin-health';
const GENERATE = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
/** An alpha body whose prompt asks the simulator for a fault (src/sim/faults.ts). */
const body = (fault: string) =>
  JSON.stringify({
    contents: [{ role: 'user', parts: [{ text: `a lighthouse [sim:fault=${fault}]` }] }],
    generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
  });

/** A gateway in this process whose log lines are kept. */
async function gatewayWith(sim: Simulator, opts: { store?: (s: Store) => Store; drainMs?: number } = {}) {
  const base = await openStore(':memory:');
  const store = opts.store ? opts.store(base) : base;
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const snapshot = loadConfigOrThrow(PROJECT_ROOT, { env: { ALPHA_BASE_URL: sim.url, ALPHA_API_KEY: sim.secrets.key! } });
  const gateway = createGateway({ snapshot: () => snapshot, store, log: pino({ level: 'info' }, sink), adminKey: ADMIN, drainMs: opts.drainMs });
  await gateway.listen(0);
  const key = generateKey();
  await base.createToken({ name: 'health', keyHash: hashKey(key), group: 'default', models: null, quota: null });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return {
    gateway,
    headers,
    lines,
    version: snapshot.version,
    snapshot,
    messages: () => lines.map((l) => String(l.msg)),
    async close() {
      await gateway.close();
      await base.close();
    },
  };
}

let sim: Simulator;
before(async () => {
  sim = await startAlphaSimulator();
});
after(async () => {
  await sim.close();
});

/** Resolves once the simulator has received `n` more requests than it had when called. */
function simReceives(n: number): Promise<unknown> {
  const target = sim.stats.requests + n;
  return until('the call to reach the simulator', () => sim.stats.requests >= target);
}

describe('probes', () => {
  test('/healthz and /readyz answer without the admin key; the admin routes still want it', async () => {
    const g = await gatewayWith(sim);
    try {
      const url = g.gateway.url();
      const health = await fetch(`${url}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'ok' });
      const ready = await fetch(`${url}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready', config: g.version, store: 'ok', draining: false });
      const openapi = await fetch(`${url}/openapi.json`);
      assert.equal(openapi.status, 200, 'the OpenAPI document needs no key either');
      assert.match(openapi.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(await openapi.text(), renderOpenApi(g.snapshot), 'the document of the serving snapshot');
      assert.equal((await fetch(`${url}/healthz`, { method: 'POST' })).status, 405);
      assert.equal((await fetch(`${url}/admin/channels`)).status, 401);
      assert.equal((await fetch(`${url}/metrics`)).status, 401);
    } finally {
      await g.close();
    }
  });

  test('/readyz is 503 naming the store when the store does not answer; /healthz stays 200', async () => {
    const g = await gatewayWith(sim, { store: (s) => new StoreGuard({ ...s, ping: () => Promise.reject(new Error('connection refused')) }).guarded() });
    try {
      const ready = await fetch(`${g.gateway.url()}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(await ready.json(), { status: 'not_ready', config: g.version, store: 'unreachable', draining: false });
      assert.equal((await fetch(`${g.gateway.url()}/healthz`)).status, 200);
    } finally {
      await g.close();
    }
  });

  test('a store found away: requests are refused at once with 503 store_unavailable, one log line and gateway_store_up 0; back, they are served and it says so once', async () => {
    let away = false;
    const g = await gatewayWith(sim, {
      store: (s) => new StoreGuard({ ...s, ping: () => (away ? Promise.reject(new Error('connect ECONNREFUSED')) : s.ping()) }).guarded(),
    });
    const admin = { authorization: `Bearer ${ADMIN}` };
    const generate = () => fetch(`${g.gateway.url()}${GENERATE}`, { method: 'POST', headers: g.headers, body: body('none').replace(' [sim:fault=none]', '') });
    try {
      assert.equal((await generate()).status, 200);
      away = true;
      assert.equal((await fetch(`${g.gateway.url()}/readyz`)).status, 503, 'the probe finds the store away');
      for (let i = 0; i < 3; i++) {
        const res = await generate();
        assert.equal(res.status, 503);
        assert.equal(res.headers.get('retry-after'), '2');
        assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'store_unavailable');
      }
      const metrics = await (await fetch(`${g.gateway.url()}/metrics`, { headers: admin })).text();
      assert.match(metrics, /^gateway_store_up 0$/m);
      assert.match(metrics, /^gateway_store_outages_total 1$/m);
      const gone = g.lines.filter((l) => l.msg === 'store unreachable: requests that need it are answered 503 store_unavailable until it is back');
      assert.equal(gone.length, 1, 'one line for the outage, not one per refused request');
      assert.equal(gone[0]!.reason, 'connect ECONNREFUSED');
      assert.equal(g.lines.filter((l) => l.code === 'store_unavailable' && l.level === 40).length, 0, 'no warning per refused request');
      away = false;
      await until('the store to be found back', () => g.messages().includes('store reachable again: serving as usual'), 5_000);
      assert.equal((await generate()).status, 200);
      assert.equal((await fetch(`${g.gateway.url()}/readyz`)).status, 200);
      assert.match(await (await fetch(`${g.gateway.url()}/metrics`, { headers: admin })).text(), /^gateway_store_up 1$/m);
    } finally {
      await g.close();
    }
  });
});

describe('graceful shutdown', () => {
  test('a stop lets the call in flight finish, takes no new connection, and logs its start and end', async () => {
    const g = await gatewayWith(sim, { drainMs: 60_000 });
    try {
      const reached = simReceives(1);
      const slow = fetch(`${g.gateway.url()}${GENERATE}`, { method: 'POST', headers: g.headers, body: body('slow-headers:500') });
      await reached;
      const stopped = g.gateway.close();
      const answered = await slow;
      assert.equal(answered.status, 200, 'the call in flight finishes');
      await answered.arrayBuffer();
      await stopped;
      assert.ok(g.messages().includes('stopping: requests in flight may finish, no new ones are taken'), g.messages().join('\n'));
      assert.ok(g.messages().includes('stopped; every request in flight finished'), g.messages().join('\n'));
      await assert.rejects(fetch(`${g.gateway.url()}/healthz`), 'no new connection is taken');
    } finally {
      await g.close().catch(() => undefined);
    }
  });

  test('/readyz says 503 with draining: true once a stop began (to a prober on a kept-alive connection)', async () => {
    const answer = await readyz({
      snapshot: { version: 'v1' } as Snapshot,
      params: {},
      query: new URLSearchParams(),
      body: undefined,
      deps: { health: { draining: () => true, storeUp: async () => true } } as unknown as AdminDeps,
    });
    assert.deepEqual(answer, { status: 503, json: { status: 'not_ready', config: 'v1', store: 'ok', draining: true } });
  });

  test('past GATEWAY_DRAIN_MS the calls still in flight are cut off, and the stop says how many', async () => {
    const g = await gatewayWith(sim, { drainMs: 100 });
    try {
      const reached = simReceives(1);
      // Its failure is expected while the stop runs: held as a value, not left unhandled.
      const hanging = fetch(`${g.gateway.url()}${GENERATE}`, { method: 'POST', headers: g.headers, body: body('hang') }).then(
        (res) => res.status,
        (err: unknown) => err,
      );
      await reached;
      await g.gateway.close();
      assert.ok((await hanging) instanceof Error, 'the client sees its connection cut');
      const end = g.lines.find((l) => l.msg === 'stopped; the drain deadline cut off requests still in flight');
      assert.equal(end?.cut_off, 1, g.messages().join('\n'));
      assert.equal(end?.level, 40, 'a warning');
    } finally {
      await g.close().catch(() => undefined);
    }
  });

  test('a real gateway process stops on SIGTERM after its call in flight is answered, and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-health-'));
    const unset = Object.fromEntries(channelEnvNames(PROJECT_ROOT).map((n) => [n, '']));
    const { proc, base } = await startGatewayProcess({
      ...unset,
      ALPHA_BASE_URL: sim.url,
      ALPHA_API_KEY: sim.secrets.key!,
      PORT: '0',
      GATEWAY_WATCH: '0',
      GATEWAY_DB: join(dir, 'gateway.db'),
      GATEWAY_DRAIN_MS: '60000',
    });
    try {
      const key = runCli(['tokens', 'create', '--group', 'default'], { GATEWAY_DB: join(dir, 'gateway.db') }).stdout.trim();
      const reached = simReceives(1);
      const call = fetch(`${base}${GENERATE}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body('slow-headers:500'),
      });
      await reached;
      const exited = proc.stop('SIGTERM');
      const res = await call;
      assert.equal(res.status, 200, 'answered during the drain');
      assert.equal(await exited, 0);
      assert.match(proc.output(), /"msg":"stopping: requests in flight may finish, no new ones are taken"/);
      assert.match(proc.output(), /"msg":"stopped; every request in flight finished"/);
    } finally {
      await proc.stop('SIGKILL').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
