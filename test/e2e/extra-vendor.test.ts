/**
 * Proof that a vendor is configuration: a made-up vendor with its own task protocol and an image
 * call that answers raw PNG bytes, served by a small test server, is added to the shipped config
 * from a temporary directory (as GATEWAY_CONFIG_EXTRA adds one), editing no shipped file: a
 * channels fragment holds its profile and channel, a routes fragment adds its public models to the
 * shipped video and image routes (`extend`) and gives them families. A task is driven through those
 * public routes to a downloaded file, and an image comes back from raw bytes, inline or as a stored
 * result behind a gateway link. No code of the gateway knows this vendor. Another vendor is one
 * more pair of fragments (writeFragment).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { renderCatalogue } from '../../src/config/catalogue.js';
import { loadConfig } from '../../src/config/load.js';
import { routeServesModel } from '../../src/config/lookups.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { CompiledRoute, Snapshot } from '../../src/config/snapshot.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { openApiDocument } from '../../src/openapi/openapi-document.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { makePng } from '../../src/sim/png.js';
import { modelsOf } from '../helpers/route-parts.js';
import { until } from '../helpers/until.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';

/** The kitchen's public model: no shipped route serves it, nor any of their patterns. */
const KITCHEN_MODEL = 'kitchen-video-1';
/** The shipped routes it joins: the two unified video submissions. */
const VIDEO_ROUTES = ['video-generations', 'videos'];
/** The kitchen's painter answers raw PNG bytes (no JSON), its seed and finish reason in headers. */
const PAINTER_MODEL = 'kitchen-painter-1';
const PAINTING = makePng(48, 32);

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
        if (req.method === 'POST' && url.pathname === '/paint') {
          return void res.writeHead(200, { 'content-type': 'image/png', 'content-length': PAINTING.length, seed: '77', 'finish-reason': 'done' }).end(PAINTING);
        }
        const plate = /^\/plates\/(T[0-9]+)\.mp4$/.exec(url.pathname);
        const served = plate ? this.orders.get(plate[1]!) : undefined;
        if (served) return void res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': served.bytes.length }).end(served.bytes);
        res.writeHead(404).end('{}');
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

/** Writes one fragment of the extra directory: `routes.d/<name>.yaml` or `channels.d/<name>.yaml`. */
function writeFragment(dir: string, kind: 'routes' | 'channels', name: string, text: string): void {
  mkdirSync(join(dir, `${kind}.d`), { recursive: true });
  writeFileSync(join(dir, `${kind}.d`, `${name}.yaml`), text);
}

/** The kitchen's public surface: its model joins the shipped video routes, in a family of its own. */
const KITCHEN_ROUTES = `version: 1
extend:
${VIDEO_ROUTES.map((id) => `  - { route: ${id}, models: [${KITCHEN_MODEL}] }`).join('\n')}
  - { route: images-generations, models: [${PAINTER_MODEL}] }
families:
  - name: kitchen video
    description: The made-up kitchen vendor's video model; no limits, the vendor takes any prompt.
    models: [${KITCHEN_MODEL}]
  - name: kitchen painter
    description: The kitchen's image model, answered as raw PNG bytes; no limits.
    models: [${PAINTER_MODEL}]
`;

/** The kitchen's protocol profile and its channel. */
function kitchenChannels(kitchenUrl: string): string {
  return `version: 1
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
      generateImage:
        request:
          method: POST
          path: '"/paint"'
          body: '{ "words": body.prompt }'
        response:
          type: bytes
          body: |
            {
              "created": 0,
              "data": [request.response_format = "url"
                ? { "url": "data:" & body.content_type & ";base64," & body.base64 }
                : { "b64_json": body.base64 }],
              "seed": $number(headers.seed),
              "finish": headers."finish-reason"
            }
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
    models: [${KITCHEN_MODEL}, ${PAINTER_MODEL}]
    polling: { interval_ms: 100, stale_ms: 0 }
`;
}

test('the shipped routes do not serve the kitchen model: only the extension brings it', () => {
  const { snapshot: shipped, issues } = loadConfig(PROJECT_ROOT, { env: {} });
  assert.ok(shipped, issues.map((i) => `${i.file}:${i.line} ${i.message}`).join('\n'));
  for (const id of VIDEO_ROUTES) {
    const route: CompiledRoute | undefined = shipped.routes.find((r) => r.id === id);
    assert.ok(route, `the shipped config declares route ${id}`);
    assert.equal(routeServesModel({ models: modelsOf(route) }, KITCHEN_MODEL), false, `shipped route ${id} already serves ${KITCHEN_MODEL}`);
  }
});

describe('a vendor added as configuration only', () => {
  let kitchen: Kitchen;
  let dir: string;
  let store: Store;
  let gateway: Gateway;
  let snapshot: Snapshot;
  let key: string;
  const call = (path: string, init: RequestInit = {}) =>
    fetch(gateway.url() + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });

  before(async () => {
    kitchen = new Kitchen('kitchen-secret');
    await kitchen.start();
    dir = mkdtempSync(join(tmpdir(), 'gw-extra-'));
    writeFragment(dir, 'routes', 'kitchen', KITCHEN_ROUTES);
    writeFragment(dir, 'channels', 'kitchen', kitchenChannels(kitchen.url));
    const loaded = loadConfig(PROJECT_ROOT, { env: {}, extraDirs: [dir] });
    assert.ok(loaded.snapshot, loaded.issues.map((i) => `${i.file}:${i.line} ${i.message}`).join('\n'));
    snapshot = loaded.snapshot;
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

  /** Queries a task until `done` holds (bounded). */
  function taskUntil(id: string, done: (t: { status: string }) => boolean): Promise<any> {
    return until(`task ${id} to reach the expected state`, async () => {
      const t = (await (await call(`/v1/videos/${id}`)).json()) as { status: string };
      return done(t) ? t : null;
    });
  }

  test('the extended routes serve the model, and the OpenAPI document and the catalogue show it', () => {
    for (const id of VIDEO_ROUTES) {
      const route = snapshot.routes.find((r) => r.id === id)!;
      assert.ok(modelsOf(route).exact.has(KITCHEN_MODEL), `route ${id} lists ${KITCHEN_MODEL}`);
      assert.ok(modelsOf(route).exact.has('epsilon-video-3'), `route ${id} keeps its own models`);
    }
    assert.equal(snapshot.routes.length, loadConfig(PROJECT_ROOT, { env: {} }).snapshot!.routes.length, 'no route was added');
    const paths = openApiDocument(snapshot).paths as Record<string, Record<string, { 'x-models'?: string[] }>>;
    assert.ok(paths['/v1/videos']!.post!['x-models']!.includes(KITCHEN_MODEL));
    assert.ok(paths['/v1/video/generations']!.post!['x-models']!.includes(KITCHEN_MODEL));
    const row = renderCatalogue(snapshot)
      .split('\n')
      .find((l) => l.startsWith('| kitchen video |'));
    assert.ok(row, 'the catalogue has a row for the kitchen family');
    assert.ok(row.includes('`POST /v1/videos`') && row.includes('`POST /v1/video/generations`'), row);
  });

  test('submit, follow, and download through the public routes', async () => {
    const res = await call('/v1/videos', { method: 'POST', body: JSON.stringify({ model: KITCHEN_MODEL, prompt: 'a soup' }) });
    const sub = (await res.json()) as { id: string; status: string };
    assert.equal(res.status, 200, JSON.stringify(sub));
    assert.match(sub.id, /^task_/);
    assert.equal(sub.status, 'queued');
    const order = kitchen.orders.get('T1')!;
    assert.deepEqual(order.recipe, { dish: KITCHEN_MODEL, words: 'a soup' });
    const done = await taskUntil(sub.id, (t) => t.status === 'completed');
    assert.equal(done.status, 'completed');
    const file = await call(`/v1/videos/${sub.id}/content`);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    assert.ok(Buffer.from(await file.arrayBuffer()).equals(order.bytes), 'the bytes are the vendor plate');
  });

  test('a vendor answering raw image bytes serves the shipped image route through the extension', async () => {
    const res = await call('/v1/images/generations', { method: 'POST', body: JSON.stringify({ model: PAINTER_MODEL, prompt: 'a pear' }) });
    const answer = (await res.json()) as { data: { b64_json: string }[]; seed: number; finish: string };
    assert.equal(res.status, 200, JSON.stringify(answer));
    assert.ok(Buffer.from(answer.data[0]!.b64_json, 'base64').equals(PAINTING), 'the bytes are the painting');
    assert.deepEqual({ seed: answer.seed, finish: answer.finish }, { seed: 77, finish: 'done' });
  });

  test('asked for a URL, the raw image is a stored result behind a gateway link (the shipped route links data/*/url)', async () => {
    const res = await call('/v1/images/generations', {
      method: 'POST',
      body: JSON.stringify({ model: PAINTER_MODEL, prompt: 'a plum', response_format: 'url' }),
    });
    const answer = (await res.json()) as { data: { url: string }[] };
    assert.equal(res.status, 200, JSON.stringify(answer));
    assert.match(answer.data[0]!.url, /\/v1\/links\/[A-Za-z0-9_-]{32}$/);
    // No key: a link is used as a vendor's presigned URL would be, in an <img> say.
    const file = await fetch(answer.data[0]!.url);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'image/png');
    assert.ok(Buffer.from(await file.arrayBuffer()).equals(PAINTING), 'the stored bytes are the painting');
  });

  test("the vendor's failure reaches the client as the profile maps it", async () => {
    const res = await call('/v1/video/generations', { method: 'POST', body: JSON.stringify({ model: KITCHEN_MODEL, prompt: 'burn it' }) });
    const sub = (await res.json()) as { id: string };
    assert.equal(res.status, 200, JSON.stringify(sub));
    const failed = await taskUntil(sub.id, (t) => t.status === 'failed');
    assert.deepEqual(failed.error, { code: 'generation_failed', message: 'too hot' });
  });
});
