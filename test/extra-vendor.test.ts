/**
 * Proof that a vendor is configuration: a made-up vendor with its own task protocol, served by a
 * small test server, is added to the shipped config from a temporary directory (a profile and a
 * channel in an extra config directory, as GATEWAY_CONFIG_EXTRA adds one) and a task is driven
 * through the public video routes to a downloaded file. No code of the gateway knows this vendor.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config/load.js';
import { PROJECT_ROOT } from '../src/config/paths.js';
import { createGateway, type Gateway } from '../src/gateway.js';
import { silentLogger } from '../src/log.js';
import { openStore } from '../src/store/open-store.js';
import type { Store } from '../src/store/store.js';
import { generateKey, hashKey } from '../src/tokens/keys.js';

/** The vendor: orders are "cooking" until looked at twice, then "ready" with a file, or "burnt". */
class Kitchen {
  readonly orders = new Map<string, { looks: number; burn: boolean; bytes: Buffer; recipe: unknown }>();
  server: Server;
  url = '';
  constructor(readonly secret: string) {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        if (req.headers['x-kitchen-pass'] !== this.secret) return void res.writeHead(403).end('{"trouble":"who are you"}');
        const url = new URL(req.url ?? '/', 'http://k');
        if (req.method === 'POST' && url.pathname === '/orders') {
          const recipe = JSON.parse(raw) as { dish?: string; words?: string };
          const ticket = `T${this.orders.size + 1}`;
          this.orders.set(ticket, { looks: 0, burn: recipe.words?.includes('burn') ?? false, bytes: randomBytes(3000), recipe });
          return void res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ticket }));
        }
        const look = /^\/orders\/(T[0-9]+)$/.exec(url.pathname);
        const order = look ? this.orders.get(look[1]!) : undefined;
        if (look && order) {
          order.looks++;
          const state = order.looks < 2 ? 'cooking' : order.burn ? 'burnt' : 'ready';
          const body = { state, ...(state === 'ready' ? { plate: `/plates/${look[1]}.mp4` } : {}), ...(state === 'burnt' ? { why: 'too hot' } : {}) };
          return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        }
        const plate = /^\/plates\/(T[0-9]+)\.mp4$/.exec(url.pathname);
        const served = plate ? this.orders.get(plate[1]!) : undefined;
        if (served) return void res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': served.bytes.length }).end(served.bytes);
        res.writeHead(404).end('{}');
      });
    });
  }
  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  close(): Promise<void> {
    return new Promise((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }
}

/** The extra directory: one fragment holding the made-up profile and its channel, nothing else. */
function writeExtraConfig(dir: string, kitchenUrl: string): void {
  mkdirSync(join(dir, 'channels.d'));
  writeFileSync(
    join(dir, 'channels.d', 'kitchen.yaml'),
    `version: 1
profiles:
  kitchen:
    description: A made-up vendor for the proof that a vendor is configuration.
    auth: { type: header, name: x-kitchen-pass, value: "{pass}" }
    operations:
      createVideo:
        request:
          method: POST
          path: '"/orders"'
          body: '{ "dish": model, "words": body.prompt }'
        response:
          body: '{ "id": body.ticket, "status": "queued" }'
    tasks:
      query:
        request: { method: GET, path: '"/orders/" & task.upstream_id' }
        response:
          body: |
            {
              "status": $lookup({ "cooking": "in_progress", "ready": "completed", "burnt": "failed" }, body.state),
              "vendor_status": body.state,
              "results": body.plate ? [{ "url": body.plate, "type": "video" }],
              "error": body.state = "burnt" ? { "code": "generation_failed", "message": body.why }
            }
channels:
  - name: kitchen
    profile: kitchen
    base_url: ${kitchenUrl}
    secrets: { pass: "kitchen-secret" }
    groups: [default]
    # nu-* is a pattern of the shipped video routes; a channel naming the model exactly wins.
    models: [nu-kitchen-1]
    polling: { interval_ms: 100, stale_ms: 0 }
`,
  );
}

describe('a vendor added as configuration only', () => {
  let kitchen: Kitchen;
  let dir: string;
  let store: Store;
  let gateway: Gateway;
  let key: string;
  const call = (path: string, init: RequestInit = {}) =>
    fetch(gateway.url() + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });

  before(async () => {
    kitchen = new Kitchen('kitchen-secret');
    await kitchen.start();
    dir = mkdtempSync(join(tmpdir(), 'gw-extra-'));
    writeExtraConfig(dir, kitchen.url);
    const { snapshot, issues } = loadConfig(PROJECT_ROOT, { env: {}, extraDirs: [dir] });
    assert.ok(snapshot, issues.map((i) => `${i.file}:${i.line} ${i.message}`).join('\n'));
    assert.ok(snapshot.channelsByName.has('kitchen'), 'the extra channel is loaded');
    store = await openStore(':memory:');
    key = generateKey();
    await store.createToken({ name: 'k', keyHash: hashKey(key), group: 'default', models: null, quota: null });
    gateway = createGateway({ snapshot: () => snapshot, store, log: silentLogger() });
    await gateway.listen(0);
  });
  after(async () => {
    await gateway?.close();
    await store?.close();
    await kitchen?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function until(id: string, done: (t: { status: string }) => boolean): Promise<any> {
    for (let i = 0; i < 200; i++) {
      const t = (await (await call(`/v1/videos/${id}`)).json()) as { status: string };
      if (done(t)) return t;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`task ${id} never got there`);
  }

  test('submit, follow, and download through the public routes', async () => {
    const res = await call('/v1/videos', { method: 'POST', body: JSON.stringify({ model: 'nu-kitchen-1', prompt: 'a soup' }) });
    const sub = (await res.json()) as { id: string; status: string };
    assert.equal(res.status, 200, JSON.stringify(sub));
    assert.match(sub.id, /^task_/);
    assert.equal(sub.status, 'queued');
    const order = kitchen.orders.get('T1')!;
    assert.deepEqual(order.recipe, { dish: 'nu-kitchen-1', words: 'a soup' });
    const done = await until(sub.id, (t) => t.status === 'completed');
    assert.equal(done.status, 'completed');
    const file = await call(`/v1/videos/${sub.id}/content`);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.ok(Buffer.from(await file.arrayBuffer()).equals(order.bytes), 'the bytes are the vendor plate');
  });

  test("the vendor's failure reaches the client as the profile maps it", async () => {
    const res = await call('/v1/video/generations', { method: 'POST', body: JSON.stringify({ model: 'nu-kitchen-1', prompt: 'burn it' }) });
    const sub = (await res.json()) as { id: string };
    assert.equal(res.status, 200, JSON.stringify(sub));
    const failed = await until(sub.id, (t) => t.status === 'failed');
    assert.deepEqual(failed.error, { code: 'generation_failed', message: 'too hot' });
  });
});
