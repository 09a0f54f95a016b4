/**
 * Webhook endpoints cannot hold each other up (docs/webhooks.md, "Limits"), in a real `gateway start`
 * process over SQLite with the default slots (16 per replica, 4 per endpoint):
 *
 * - a receiver that reads every request and never answers, with a backlog of 60 deliveries, holds
 *   only its share of the slots; another token's healthy endpoint gets its events at once. Claimed
 *   oldest-first as before, the 60 older deliveries would each have held one of the 16 slots for the
 *   whole timeout first: the healthy events would have waited three timeouts (15 s here);
 * - a receiver that sends `200` headers at once and then drips its body past the timeout has the
 *   delivery recorded delivered after one attempt, and its body is dropped within about a second.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Simulator } from '../../src/sim/http.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../src/webhooks/webhook-settings.js';
import { simulatorsFor, startGatewayProcess } from '../helpers/gateway-process.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';
import { runCli, type Running } from '../helpers/process.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const TIMEOUT_MS = 5_000;
const DEAD_TASKS = 60;
const HEALTHY_TASKS = 5;
const { concurrency: SLOTS, perEndpoint: SHARE } = DEFAULT_WEBHOOK_SETTINGS;
const ETA_POLLING = 'polling: { interval_ms: 10000 }';

/** A copy of the project's config whose eta channel looks at its tasks every 200 ms (they end in well under a second). */
function quickConfig(dir: string): string {
  const config = join(dir, 'config');
  for (const f of ['routes.yaml', 'channels.yaml', 'routes.d', 'channels.d', 'schemas']) cpSync(join(PROJECT_ROOT, f), join(config, f), { recursive: true });
  const file = join(config, 'channels.d/eta-operations.yaml');
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(ETA_POLLING), 'the eta channel polls as this test expects');
  writeFileSync(file, text.replace(ETA_POLLING, 'polling: { interval_ms: 200 }'));
  return config;
}

/** A receiver that reads each request and never answers; it counts the requests open at once. */
class DeadReceiver {
  readonly server: Server;
  open = 0;
  maxOpen = 0;
  requests = 0;
  url = '';
  constructor() {
    this.server = createServer((req, res) => {
      this.requests++;
      this.open++;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      res.on('close', () => this.open--);
      req.resume();
    });
  }
  async start(): Promise<void> {
    this.url = `${await listenLocal(this.server)}/dead`;
  }
}

describe('webhooks: one endpoint cannot hold up another', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-webhook-isolation-'));
  const adminKey = `admin-${randomBytes(8).toString('hex')}`;
  const sims = new Map<string, Simulator>();
  const dead = new DeadReceiver();
  const healthy = new WebhookReceiver('/healthy');
  // Answers 200 at once, then a byte of body every 200 ms for three timeouts; notes when the sender drops it.
  const drips: { id: string; droppedAfterMs: number | null }[] = [];
  const dripping = new Set<ServerResponse>();
  const drip = createServer((req, res) => {
    const got = { id: String(req.headers['webhook-id']), droppedAfterMs: null as number | null };
    drips.push(got);
    const start = Date.now();
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.flushHeaders();
    dripping.add(res);
    const timer = setInterval(() => res.write('.'), 200);
    const end = setTimeout(() => res.end(), 3 * TIMEOUT_MS);
    res.on('close', () => {
      clearInterval(timer);
      clearTimeout(end);
      got.droppedAfterMs = Date.now() - start;
    });
  });
  let dripUrl = '';
  let gateway: { proc: Running; base: string };
  const keys: Record<'dead' | 'healthy' | 'drip', string> = { dead: '', healthy: '', drip: '' };
  const endpoints: Record<'dead' | 'healthy' | 'drip', string> = { dead: '', healthy: '', drip: '' };

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(gateway.base + path, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const json = (await res.json()) as any;
    assert.ok(res.ok, JSON.stringify(json));
    return json;
  };
  const deliveries = async (endpoint: string) =>
    (await admin('GET', `/admin/webhooks/deliveries?endpoint=${endpoint}&limit=500`)).deliveries as {
      id: string;
      status: string;
      attempts: number;
      last_status_code: number | null;
    }[];
  const submit = async (key: string, prompt: string) => {
    const res = await fetch(`${gateway.base}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'eta_3_1', prompt }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return (JSON.parse(text) as { id: string }).id;
  };

  before(async () => {
    await dead.start();
    await healthy.start();
    dripUrl = `${await listenLocal(drip)}/drip`;
    const env: NodeJS.ProcessEnv = {
      ...(await simulatorsFor(sims, { finishMs: 200 })),
      GATEWAY_DB: join(dir, 'gateway.db'),
      GATEWAY_CONFIG_DIR: quickConfig(dir),
      GATEWAY_WATCH: '0',
      GATEWAY_ADMIN_KEY: adminKey,
      GATEWAY_WEBHOOK_ALLOW_PRIVATE: '1',
      GATEWAY_WEBHOOK_POLL_MS: '50',
      GATEWAY_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      // A failed attempt is not tried again within the test.
      GATEWAY_WEBHOOK_RETRY_BASE_MS: '120000',
      HOST: '127.0.0.1',
      PORT: '0',
    };
    const tokens: Record<string, string> = {};
    for (const name of Object.keys(keys) as (keyof typeof keys)[]) {
      const made = runCli(['tokens', 'create', '--group', 'default', '--name', name], env);
      assert.equal(made.status, 0, made.stderr);
      keys[name] = made.stdout.trim();
      tokens[name] = /created token (\S+)/.exec(made.stderr)![1]!;
    }
    gateway = await startGatewayProcess(env);
    const urls = { dead: dead.url, healthy: healthy.url, drip: dripUrl };
    for (const name of Object.keys(keys) as (keyof typeof keys)[]) {
      const e = await admin('POST', '/admin/webhooks/endpoints', { token: tokens[name], url: urls[name], events: ['task.completed', 'task.failed'] });
      endpoints[name] = e.id;
      if (name === 'healthy') healthy.secrets = [e.secret];
    }
  });
  after(async () => {
    await gateway?.proc.stop('SIGKILL');
    for (const res of dripping) res.destroy();
    await Promise.all([closeLocal(dead.server), closeLocal(drip), healthy.stop(), ...[...sims.values()].map((s) => s.close())]);
    rmSync(dir, { recursive: true, force: true });
  });

  test(`a receiver that never answers, with ${DEAD_TASKS} deliveries due, holds ${SHARE} of ${SLOTS} slots; another token's events arrive at once`, async (t) => {
    await Promise.all(Array.from({ length: DEAD_TASKS }, (_, i) => submit(keys.dead, `dead receiver ${i}`)));
    await until('the dead backlog written', async () => (await deliveries(endpoints.dead)).length === DEAD_TASKS, 20_000);
    await until('the dead receiver holding its share of the slots', () => dead.open >= SHARE);

    const ids = await Promise.all(Array.from({ length: HEALTHY_TASKS }, (_, i) => submit(keys.healthy, `healthy receiver ${i}`)));
    const got = await until('the healthy events', () => healthy.unique().length === HEALTHY_TASKS && healthy.unique(), 20_000);
    const arrived = Date.now();
    const backlog = await deliveries(endpoints.dead);

    assert.deepEqual(got.map((r) => r.event?.data.id).sort(), [...ids].sort());
    assert.deepEqual(healthy.unverified(), []);
    // When they happened (the payload's timestamp) to when the last of them was in: no dead attempt timed out meanwhile.
    const lag = arrived - Math.min(...got.map((r) => Date.parse(r.event?.timestamp ?? '')));
    t.diagnostic(`healthy events in ${lag} ms after the first of them; dead receiver: ${dead.requests} attempts so far, at most ${dead.maxOpen} at once`);
    assert.ok(lag < TIMEOUT_MS, `the healthy events arrived ${lag} ms after they happened, within one timeout (${TIMEOUT_MS} ms)`);
    // Oldest-first, every older dead delivery would have been leased before them, leaving at most a replica's slots untried.
    const untried = backlog.filter((d) => d.status === 'pending' && d.attempts === 0).length;
    assert.ok(untried > SLOTS, `${untried} of the dead receiver's older deliveries were not yet tried when the healthy ones arrived`);
    assert.equal(dead.maxOpen, SHARE, `the dead receiver never had more than its share of attempts at once (${dead.maxOpen})`);
  });

  test('a 200 whose body drips past the timeout is delivered after one attempt, and its body is dropped within about a second', async (t) => {
    const task = await submit(keys.drip, 'dripping receiver');
    const [d] = await until(
      'the delivery recorded',
      async () => {
        const list = await deliveries(endpoints.drip);
        return list.length === 1 && list[0]?.status !== 'pending' && list;
      },
      20_000,
    );
    assert.deepEqual([d?.status, d?.attempts, d?.last_status_code], ['delivered', 1, 200], `delivery of ${task}`);
    assert.deepEqual(
      drips.map((x) => x.id),
      [d?.id],
      'sent once',
    );
    const dropped = await until('the sender to drop the body', () => drips[0]?.droppedAfterMs ?? false);
    t.diagnostic(`the dripping body was dropped ${dropped} ms after the answer began`);
    assert.ok(dropped < TIMEOUT_MS / 2, `the body was dropped ${dropped} ms after the answer began, not held for the ${TIMEOUT_MS} ms timeout`);
  });
});
