/**
 * Links instead of vendor URLs (issue #13, item 5; docs/client-api.md, "Links instead of vendor URLs"): a
 * synchronous answer never hands a client the vendor's URL. A made-up vendor answers image URLs on
 * its own origin (that need its key) and on a CDN origin (presigned), a note naming a URL, and raw
 * PNG bytes; four routes over it show the modes: `links` places, the default scan, the
 * `pass_vendor_url` opt-out, and a `data:` URI kept as a stored result. Links are served with no
 * key, by any gateway over the same store, until they expire or their token is deleted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { formatIssue } from '../../src/config/issues.js';
import { loadConfig, loadConfigOrThrow } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { makePng } from '../../src/sim/png.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { linksOf } from '../helpers/route-parts.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { writeConfigFiles } from '../helpers/config-dir.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';

const TTL_MS = 120_000;
const ON_VENDOR = makePng(40, 30, 1);
const ON_CDN = makePng(20, 10, 2);
const PAINTED = makePng(64, 48, 3);
const VENDOR_KEY = 'vendor-secret';

interface Seen {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

/** One origin of the made-up vendor: serves `files` by path and records every request. */
function origin(files: Record<string, Buffer>, answer: (path: string, seen: Seen) => { status: number; type: string; body: Buffer } | null = () => null) {
  const seen: Seen[] = [];
  let base = '';
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      const s = { path, headers: req.headers };
      seen.push(s);
      const made = answer(path, s);
      if (made) return void res.writeHead(made.status, { 'content-type': made.type, 'content-length': made.body.length }).end(made.body);
      const file = files[path.split('?')[0]!];
      if (!file) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such file"}');
      const range = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ''));
      if (range) {
        const part = file.subarray(Number(range[1]), Number(range[2]) + 1);
        return void res
          .writeHead(206, { 'content-type': 'image/png', 'content-range': `bytes ${range[1]}-${range[2]}/${file.length}`, 'content-length': part.length })
          .end(part);
      }
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': file.length, 'x-vendor-trace': 'internal-7', 'set-cookie': 'vendor=1' }).end(file);
    });
  });
  return {
    seen,
    url: () => base,
    start: async () => {
      base = await listenLocal(server);
    },
    close: () => closeLocal(server),
  };
}

function writeConfig(dir: string, vendorUrl: string): void {
  const route = (id: string, model: string, extra: string) => `
  - id: ${id}
    method: POST
    path: /v1/${id}/{model}
    kind: sync
    operation: ${model === 'painted' ? 'paint' : 'draw'}
    model: { path: model }
    models: [${model}]
    body: { schema: body.json }
${extra}`;
  writeConfigFiles(dir, {
    'body.json': { type: 'object', required: ['prompt'], properties: { prompt: { type: 'string' }, response_format: { enum: ['url', 'b64_json'] } } },
    'routes.yaml': `version: 1
routes:${route('placed', 'placed', '    links: [/files/*/url]')}${route('scanned', 'scanned', '')}${route('passed', 'passed', '    pass_vendor_url: true')}${route('painted', 'painted', '    links: [/files/*/url]')}
  - id: links
    method: GET
    path: /v1/links/{link}
    kind: link-content
families:
  - { name: drawings, models: [placed, scanned, passed, painted] }
`,
    'channels.yaml': `version: 1
groups: { default: {} }
profiles:
  drawer:
    auth: { type: header, name: x-vendor-key, value: "{key}" }
    operations:
      draw:
        request: { method: POST, path: '"/draw"', body: '{ "prompt": body.prompt }' }
        response:
          body: '{ "files": body.images.{ "url": url, "kind": "image" }, "note": body.note, "id": body.id }'
      paint:
        request: { method: POST, path: '"/paint"', body: '{ "prompt": body.prompt }' }
        response:
          type: bytes
          body: |
            {
              "files": [request.response_format = "b64_json"
                ? { "b64_json": body.base64 }
                : { "url": "data:" & body.content_type & ";base64," & body.base64 }]
            }
channels:
  - name: drawer
    profile: drawer
    base_url: "${vendorUrl}"
    secrets: { key: ${VENDOR_KEY} }
    groups: [default]
    models: [placed, scanned, passed, painted]
`,
  });
}

describe('links instead of vendor URLs', () => {
  let dir: string;
  const cdn = origin({ '/img/cdn.png': ON_CDN });
  let paints = 0;
  const vendor = origin({ '/files/own.png': ON_VENDOR }, (path) => {
    if (path === '/draw') {
      const body = {
        images: [{ url: `${cdn.url()}/img/cdn.png?X-Signature=abc` }, { url: `${vendor.url()}/files/own.png` }, { url: `${cdn.url()}/img/gone.png` }],
        note: `${cdn.url()}/docs`,
        id: 'img_1',
      };
      return { status: 200, type: 'application/json', body: Buffer.from(JSON.stringify(body)) };
    }
    if (path === '/paint') {
      paints++;
      return { status: 200, type: 'image/png', body: PAINTED };
    }
    return null;
  });
  let now = Date.parse('2026-11-25T12:00:00Z');
  const clock = () => new Date(now);
  let store: Store;
  let first: Gateway;
  let second: Gateway;
  let key: string;

  before(async () => {
    await cdn.start();
    await vendor.start();
    dir = mkdtempSync(join(tmpdir(), 'gw-links-'));
    writeConfig(dir, vendor.url());
    const snapshot = loadConfigOrThrow(dir, { env: {} });
    // A file store shared by two gateways: replicas share links through the store.
    store = await openStore(join(dir, 'gateway.db'));
    key = generateKey();
    await store.createToken({ name: 'links', keyHash: hashKey(key), group: 'default', models: null, quota: null });
    const make = () => createGateway({ snapshot: () => snapshot, store, log: silentLogger(), clock, linkTtlMs: TTL_MS, poll: false });
    first = make();
    second = make();
    await first.listen(0);
    await second.listen(0);
  });
  after(async () => {
    await first.close();
    await second.close();
    await store.close();
    await vendor.close();
    await cdn.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (route: string, body: Record<string, unknown> = {}, k = key) => {
    const res = await fetch(`${first.url()}/v1/${route}/${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a kite', ...body }),
    });
    const json = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(json));
    return json;
  };
  /** A link as a client fetches it: no key. */
  const open = (link: string, headers: Record<string, string> = {}) => fetch(link, { headers });
  const linkOf = (gw: Gateway) => new RegExp(`^${gw.url()}/v1/links/[A-Za-z0-9_-]{32}$`);

  test('links places: each vendor URL there becomes a gateway link; what the places do not name is left as it is', async () => {
    const answer = await ask('placed');
    assert.equal(answer.files.length, 3);
    for (const f of answer.files) assert.match(f.url, linkOf(first));
    assert.equal(new Set(answer.files.map((f: { url: string }) => f.url)).size, 3, 'one link per file');
    assert.equal(answer.note, `${cdn.url()}/docs`, 'not a links place');
    assert.equal(answer.id, 'img_1');
    assert.doesNotMatch(JSON.stringify(answer.files), new RegExp(`${cdn.url()}|${vendor.url()}`), 'no vendor URL in the files');
  });

  test('a link serves the file with no key: a presigned CDN URL is fetched without the channel key, one on the channel origin with it; vendor headers stay behind', async () => {
    const answer = await ask('placed');
    const onCdn = await open(answer.files[0].url);
    assert.equal(onCdn.status, 200);
    assert.equal(onCdn.headers.get('content-type'), 'image/png');
    assert.equal(onCdn.headers.get('x-vendor-trace'), null, 'only the headers that describe the bytes pass');
    assert.equal(onCdn.headers.get('set-cookie'), null);
    assert.equal(onCdn.headers.get('content-security-policy'), "default-src 'none'; sandbox", 'nothing in a vendor file runs with our origin');
    assert.ok(Buffer.from(await onCdn.arrayBuffer()).equals(ON_CDN));
    const atCdn = cdn.seen.at(-1)!;
    assert.equal(atCdn.path, '/img/cdn.png?X-Signature=abc', 'the presigned URL as the vendor gave it');
    assert.equal(atCdn.headers['x-vendor-key'], undefined, 'the channel key never goes to another origin');
    assert.ok(atCdn.headers['x-request-id'], 'the request id goes along');

    const own = await open(answer.files[1].url, { authorization: 'Bearer whatever' });
    assert.equal(own.status, 200, 'a key sent with a link is not looked at');
    assert.ok(Buffer.from(await own.arrayBuffer()).equals(ON_VENDOR));
    assert.equal(vendor.seen.at(-1)!.headers['x-vendor-key'], VENDOR_KEY, "the channel's own origin is signed as the channel");
  });

  test('Range passes through a link; a file the vendor no longer serves is bad_response', async () => {
    const answer = await ask('placed');
    const part = await open(answer.files[0].url, { range: 'bytes=0-7' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 0-7/${ON_CDN.length}`);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(ON_CDN.subarray(0, 8)));
    const gone = await open(answer.files[2].url);
    assert.equal(gone.status, 502);
    const body = (await gone.json()) as any;
    assert.equal(body.error.code, 'bad_response');
    assert.doesNotMatch(JSON.stringify(body), /127\.0\.0\.1|gone\.png/, 'the error names no vendor URL');
  });

  test('no links places: every vendor URL of the answer becomes a link, other strings stay', async () => {
    const answer = await ask('scanned');
    for (const f of answer.files) assert.match(f.url, linkOf(first));
    assert.match(answer.note, linkOf(first), 'the note named a vendor URL');
    assert.equal(answer.id, 'img_1');
    assert.equal(answer.files[0].kind, 'image');
    const note = await open(answer.note);
    assert.equal(note.status, 502, 'the CDN has no /docs: the link fetches it and says so');
  });

  test('pass_vendor_url: the vendor URLs reach the client as they are', async () => {
    const answer = await ask('passed');
    assert.equal(answer.files[0].url, `${cdn.url()}/img/cdn.png?X-Signature=abc`);
    assert.equal(answer.note, `${cdn.url()}/docs`);
  });

  test('a raw answer asked as a URL is a stored result: served from the store, the vendor not called again; b64_json stays inline', async () => {
    const answer = await ask('painted', { response_format: 'url' });
    assert.match(answer.files[0].url, linkOf(first));
    const before = paints;
    const file = await open(answer.files[0].url);
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'image/png');
    assert.equal(file.headers.get('cache-control'), `private, max-age=${TTL_MS / 1000}`);
    assert.equal(file.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(file.headers.get('content-security-policy'), "default-src 'none'; sandbox", 'nothing in a stored file runs with our origin');
    assert.ok(Buffer.from(await file.arrayBuffer()).equals(PAINTED));
    assert.equal(paints, before, 'the stored bytes, not a new call');
    const inline = await ask('painted', { response_format: 'b64_json' });
    assert.ok(Buffer.from(inline.files[0].b64_json, 'base64').equals(PAINTED));
  });

  test('another gateway over the same store serves the links one handed out', async () => {
    const answer = await ask('placed');
    const stored = await ask('painted', { response_format: 'url' });
    for (const link of [answer.files[0].url, stored.files[0].url]) {
      const there = await open(link.replace(first.url(), second.url()));
      assert.equal(there.status, 200, link);
    }
  });

  test('unknown, malformed and expired links, and those of a deleted token, are not_found', async () => {
    const expectNotFound = async (link: string, why: string) => {
      const res = await open(link);
      assert.equal(res.status, 404, why);
      const body = (await res.json()) as any;
      assert.equal(body.error.code, 'not_found', why);
      assert.equal(body.error.message, 'this link is unknown or has expired', why);
    };
    await expectNotFound(`${first.url()}/v1/links/${'A'.repeat(32)}`, 'unknown');
    await expectNotFound(`${first.url()}/v1/links/not%20a%20link`, 'malformed');
    const answer = await ask('placed');
    now += TTL_MS - 1;
    assert.equal((await open(answer.files[0].url)).status, 200, 'still serving just before it expires');
    now += 1;
    await expectNotFound(answer.files[0].url, 'expired');

    const other = generateKey();
    const token = await store.createToken({ name: 'short-lived', keyHash: hashKey(other), group: 'default', models: null, quota: null });
    const theirs = await ask('painted', { response_format: 'url' }, other);
    assert.equal((await open(theirs.files[0].url)).status, 200);
    // Its settlement is written after its answer (src/quota/hold-endings.ts); until then the token is busy.
    await first.holdEndings.flush();
    assert.equal((await store.deleteToken(token.id)).outcome, 'deleted');
    await expectNotFound(theirs.files[0].url, 'token deleted');
  });
});

test('without a link-content route, sync routes that would link pass vendor URLs, and check warns for each', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-links-none-'));
  try {
    writeConfig(dir, 'http://127.0.0.1:9');
    // Only the scanning and the passing routes: `links` places without a link route are an error (a fixture).
    const routes = readFileSync(join(dir, 'routes.yaml'), 'utf8');
    const kept = routes.split('\n  - id: ').filter((part, i) => i === 0 || /^(scanned|passed)\n/.test(part));
    writeFileSync(
      join(dir, 'routes.yaml'),
      kept.join('\n  - id: ').replace(/\nfamilies:[\s\S]*$/, '') + '\nfamilies:\n  - { name: drawings, models: [scanned, passed] }\n',
    );
    const channels = readFileSync(join(dir, 'channels.yaml'), 'utf8').replace('models: [placed, scanned, passed, painted]', 'models: [scanned, passed]');
    writeFileSync(join(dir, 'channels.yaml'), channels.replace(/\n {6}paint:[\s\S]*?(?=\nchannels:)/, ''));
    const { snapshot, issues } = loadConfig(dir, { env: {} });
    assert.ok(snapshot, issues.map(formatIssue).join('\n'));
    assert.deepEqual(issues.map(formatIssue), [
      'routes.yaml:3:5: warning: no link-content route is declared: the answers of sync route "scanned" pass vendor URLs to clients (declare one, or say pass_vendor_url: true)',
    ]);
    assert.deepEqual(
      snapshot.routes.map((r) => [r.id, linksOf(r)]),
      [
        ['scanned', { mode: 'pass' }],
        ['passed', { mode: 'pass' }],
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
