/**
 * Downloads streamed (issue 30, item 3; docs/client-api.md, "Downloads"): a vendor file passes
 * through the gateway as it comes, never whole in memory. A made-up vendor serves files made on
 * the fly (src/sim/generated-file.ts) behind a link, counting the bytes it has sent; a client on
 * a plain socket reads, pauses or hangs up. Shown: a resume (`Range: bytes=N-`) gets 206 with
 * exactly the bytes from N on; `If-Range` goes to the vendor; a vendor that ignores Range gives
 * the whole file; a client that stops reading stops the vendor (bytes sent stay bounded); a
 * client that hangs up, or that takes nothing for the channel's body timeout, cuts the vendor's
 * download; one that reads slowly is served past that timeout.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { etagOf, type GeneratedFile, generatedBytes, serveGenerated, type Transfer } from '../../src/sim/generated-file.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { makeConfigDir } from '../helpers/config-dir.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';

const MiB = 2 ** 20;
/** The channel body timeout of the `stalling` model's channel: short, so a stalled client is cut soon. */
const SHORT_BODY_MS = 2000;

/** The made-up vendor: `/draw` answers a URL of a file on itself (`/files/SEED-SIZE[-n]`, `-n`: ignores Range); every file answer is recorded. */
function vendor() {
  const transfers: { path: string; headers: IncomingHttpHeaders; t: Transfer }[] = [];
  const waiting: (() => void)[] = [];
  let base = '';
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      if (path === '/draw')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ files: [{ url: `${base}/files/${nextName}` }] }));
      const m = /^\/files\/([0-9]+)-([0-9]+)(-n)?$/.exec(path);
      if (!m) return void res.writeHead(404).end();
      const t = serveGenerated(req, res, { seed: Number(m[1]), size: Number(m[2]), ignoreRange: m[3] !== undefined });
      transfers.push({ path, headers: req.headers, t });
      for (const w of waiting.splice(0)) w();
    });
  });
  let nextName = '';
  return {
    transfers,
    /** The file the next `/draw` names. */
    name(file: GeneratedFile) {
      nextName = `${file.seed}-${file.size}${file.ignoreRange ? '-n' : ''}`;
    },
    /** The answer of a file that started after `count` answers. */
    async transferAfter(count: number) {
      while (transfers.length <= count) await new Promise<void>((r) => waiting.push(r));
      return transfers[count]!;
    },
    url: () => base,
    start: async () => {
      base = await listenLocal(server);
    },
    close: () => closeLocal(server),
  };
}

/** A client on a connection of its own, with the body left unread until asked. */
function open(url: string, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Reads the rest of a body. */
async function readAll(res: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of res) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe('downloads streamed', () => {
  const v = vendor();
  let dir: string;
  let store: Store;
  let gw: Gateway;
  let key: string;
  let seed = 100;

  before(async () => {
    await v.start();
    dir = makeConfigDir('downloads', {
      'body.json': { type: 'object', required: ['prompt'], properties: { prompt: { type: 'string' } } },
      'routes.yaml': `version: 1
routes:
  - id: draw
    method: POST
    path: /v1/draw/{model}
    kind: sync
    operation: draw
    model: { path: model }
    models: [steady, stalling]
    body: { schema: body.json }
    links: [/files/*/url]
  - id: links
    method: GET
    path: /v1/links/{link}
    kind: link-content
families:
  - { name: drawings, models: [steady, stalling] }
`,
      'channels.yaml': `version: 1
groups: { default: {} }
profiles:
  drawer:
    auth: { type: header, name: x-vendor-key, value: "{key}" }
    operations:
      draw:
        request: { method: POST, path: '"/draw"', body: '{ "prompt": body.prompt }' }
        response: { body: '{ "files": body.files }' }
channels:
  - name: steady
    profile: drawer
    base_url: "${v.url()}"
    secrets: { key: k }
    groups: [default]
    models: [steady]
  - name: stalling
    profile: drawer
    base_url: "${v.url()}"
    secrets: { key: k }
    groups: [default]
    models: [stalling]
    timeouts: { body_ms: ${SHORT_BODY_MS} }
`,
    });
    const snapshot = loadConfigOrThrow(dir, { env: {} });
    store = await openStore(':memory:');
    key = generateKey();
    await store.createToken({ name: 'downloads', keyHash: hashKey(key), group: 'default', models: null, quota: null });
    gw = createGateway({ snapshot: () => snapshot, store, log: silentLogger(), poll: false });
    await gw.listen(0);
  });
  after(async () => {
    await gw.close();
    await store.close();
    await v.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A gateway link to a new file of `size` bytes on the vendor, through the model's channel. */
  const linkTo = async (size: number, opts: { ignoreRange?: boolean; model?: string } = {}) => {
    const file: GeneratedFile = { seed: ++seed, size, ignoreRange: opts.ignoreRange };
    v.name(file);
    const res = await fetch(`${gw.url()}/v1/draw/${opts.model ?? 'steady'}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a kite' }),
    });
    const answer = (await res.json()) as { files: { url: string }[] };
    assert.equal(res.status, 200, JSON.stringify(answer));
    const url = answer.files[0]!.url;
    assert.ok(url.startsWith(`${gw.url()}/v1/links/`), url);
    return { url, file };
  };

  test('a resume (Range: bytes=N-) is answered 206 with exactly the bytes from N on', async () => {
    const size = 3 * MiB + 17;
    const from = 1_234_567;
    const { url, file } = await linkTo(size);
    const count = v.transfers.length;
    const res = await open(url, { range: `bytes=${from}-` });
    assert.equal(res.statusCode, 206);
    assert.equal(res.headers['content-range'], `bytes ${from}-${size - 1}/${size}`);
    assert.equal(res.headers['content-length'], String(size - from));
    assert.equal(res.headers['accept-ranges'], 'bytes');
    assert.equal(res.headers.etag, etagOf(file));
    const body = await readAll(res);
    assert.ok(body.equals(generatedBytes(file.seed, from, size - 1)), 'the vendor bytes from N on, no more, no fewer');
    const { headers } = await v.transferAfter(count);
    assert.equal(headers.range, `bytes=${from}-`, 'the range went to the vendor as asked');
  });

  test('If-Range goes to the vendor: the range while the file is the one named, the whole file once it is not', async () => {
    const size = 2 * MiB;
    const { url, file } = await linkTo(size);
    const count = v.transfers.length;
    const same = await open(url, { range: 'bytes=1000-', 'if-range': etagOf(file) });
    assert.equal(same.statusCode, 206);
    assert.ok((await readAll(same)).equals(generatedBytes(file.seed, 1000, size - 1)));
    assert.equal((await v.transferAfter(count)).headers['if-range'], etagOf(file));

    const changed = await open(url, { range: 'bytes=1000-', 'if-range': '"an-older-version"' });
    assert.equal(changed.statusCode, 200, 'a resume never splices two versions of a file');
    assert.equal(changed.headers['content-range'], undefined);
    assert.ok((await readAll(changed)).equals(generatedBytes(file.seed, 0, size - 1)));
    assert.equal((await v.transferAfter(count + 1)).headers['if-range'], '"an-older-version"');
  });

  test('a vendor that ignores Range: the client gets 200 and the whole file, as HTTP allows', async () => {
    const size = MiB + 5;
    const { url, file } = await linkTo(size, { ignoreRange: true });
    const res = await open(url, { range: 'bytes=100-' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-range'], undefined);
    assert.equal(res.headers['accept-ranges'], undefined, 'the gateway claims no ranges its vendor does not serve');
    assert.ok((await readAll(res)).equals(generatedBytes(file.seed, 0, size - 1)));
  });

  test('a client that stops reading stops the vendor: the bytes it has sent stay bounded, and all of them arrive once the client reads again', {
    timeout: 30_000,
  }, async () => {
    const size = 128 * MiB;
    const { url } = await linkTo(size);
    const count = v.transfers.length;
    const res = await open(url);
    assert.equal(res.statusCode, 200);
    const { t } = await v.transferAfter(count);
    // The client reads nothing: the vendor's count rises while the sockets and the gateway's
    // stream buffers fill, then stops. Wait until it has not moved for ten looks in a row.
    let last = -1;
    for (let still = 0; still < 10; ) {
      await new Promise((r) => setTimeout(r, 50));
      const now = t.sent();
      still = now === last ? still + 1 : 0;
      last = now;
      if (t.done) break;
    }
    assert.equal(t.done, false, 'the vendor sent the whole file to a client that read none of it');
    // Loopback socket buffers (each direction, each hop) are a few MB; the gateway adds its stream buffers.
    assert.ok(t.sent() < 48 * MiB, `the vendor sent ${t.sent()} bytes to a client that read none`);
    const body = await readAll(res);
    assert.equal(body.length, size);
    assert.equal(t.done, true);
  });

  test('a client that hangs up cuts the vendor download', { timeout: 20_000 }, async () => {
    const size = 256 * MiB;
    const { url } = await linkTo(size);
    const count = v.transfers.length;
    const res = await open(url);
    const { t } = await v.transferAfter(count);
    const first = new Promise<Buffer>((r) => res.once('data', r));
    res.resume();
    assert.ok((await first).length > 0);
    res.destroy();
    await t.closed;
    assert.equal(t.aborted, true);
    assert.equal(t.done, false);
    assert.ok(t.sent() < size);
  });

  test('a client the gateway can write nothing to for the channel body timeout is cut, and so is the vendor download', { timeout: 30_000 }, async () => {
    const size = 256 * MiB;
    const { url } = await linkTo(size, { model: 'stalling' });
    const count = v.transfers.length;
    const res = await open(url);
    assert.equal(res.statusCode, 200);
    const { t } = await v.transferAfter(count);
    // The client reads nothing at all: once the sockets are full the gateway can write nothing,
    // and after the body timeout it hangs up, letting the vendor connection go.
    await t.closed;
    assert.equal(t.aborted, true, 'the vendor download was cut');
    assert.ok(t.sent() < size);
    // The client learns of it when it reads on: the body ends short of its length.
    let got = 0;
    const ended = await new Promise<string>((resolve) => {
      res.on('data', (c: Buffer) => (got += c.length));
      res.once('error', (err) => resolve(err.message));
      res.once('end', () => resolve('end'));
      res.resume();
    });
    assert.equal(ended, 'aborted');
    assert.ok(got < size);
  });

  test('a client that reads slowly is served past the channel body timeout', { timeout: 30_000 }, async () => {
    const size = 40 * MiB;
    const { url, file } = await linkTo(size, { model: 'stalling' });
    const res = await open(url);
    const started = performance.now();
    // 800 KiB every 100 ms (8 MB/s): the pipe fills, and the gateway waits on the client many
    // times, never for as long as the body timeout.
    const parts: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      let allowance = 0;
      res.on('data', (c: Buffer) => {
        parts.push(c);
        allowance -= c.length;
        if (allowance <= 0) res.pause();
      });
      res.on('error', reject);
      res.on('end', resolve);
      const tick = setInterval(() => {
        allowance += 800 * 1024;
        if (allowance > 0) res.resume();
      }, 100);
      res.on('close', () => clearInterval(tick));
    });
    assert.ok(performance.now() - started > 2 * SHORT_BODY_MS, 'the download lasted longer than the body timeout');
    assert.ok(Buffer.concat(parts).equals(generatedBytes(file.seed, 0, size - 1)));
  });
});
