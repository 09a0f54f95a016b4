/**
 * The engine's stream answer (issue 39; docs/channels-yaml.md "Streamed answers", docs/routes-yaml.md
 * "Streams"), through a real gateway over a made-up streaming profile in front of a vendor the test
 * drives event by event: events relayed as they come, the vendor's backpressure, the idle timeout,
 * the client leaving, the price settled before the final event or refunded, fallback before the
 * first event, NDJSON, a route that streams a whole answer as one frame, and `stream: true` refused
 * where no channel streams.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startConfigGateway, type ConfigGateway } from '../helpers/config-gateway.js';
import { writeConfigFiles } from '../helpers/config-dir.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';
import { until } from '../helpers/until.js';

/** What the test vendor does with one streamed request: it gets the response and the parsed body. */
type Script = (res: ServerResponse, body: { prompt: string; model: string }, req: IncomingMessage) => void | Promise<void>;

/** A vendor whose streamed answers the test scripts per request (by the prompt's first word). */
class Vendor {
  readonly scripts = new Map<string, Script>();
  calls = 0;
  readonly server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.calls++;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { prompt: string; model: string };
      const script = this.scripts.get(body.prompt.split(' ')[0] ?? '');
      if (!script) return void res.writeHead(500).end('no script');
      void script(res, body, req);
    });
  });
  url = '';
  async start(): Promise<this> {
    this.url = await listenLocal(this.server);
    return this;
  }
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const head = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });

const PRICE = 3;
const QUOTA = 100;

function writeConfig(dir: string, first: string, second: string): void {
  writeConfigFiles(dir, {
    'routes.yaml': `version: 1
routes:
  - id: paint
    method: POST
    path: /v1/paint
    kind: sync
    operation: paint
    model: { body: /model }
    models: [painter-1, painter-still]
    body: { schema: paint.json }
    stream: { when: /stream, operation: paintStream }
  - id: paint-always
    method: POST
    path: /v1/paint-always
    kind: sync
    operation: paint
    model: { body: /model }
    models: [painter-1]
    body: { schema: paint.json }
    stream: sse
  - id: paint-lines
    method: POST
    path: /v1/paint-lines
    kind: sync
    operation: paintLines
    model: { body: /model }
    models: [painter-1]
    body: { schema: paint.json }
    stream: sse
families:
  - { name: painters, models: [painter-1, painter-still] }
`,
    'paint.json': {
      type: 'object',
      required: ['prompt', 'model'],
      properties: { prompt: { type: 'string' }, model: { type: 'string' }, stream: { type: 'boolean' } },
    },
    'channels.yaml': `version: 1
groups: { default: {} }
profiles:
  painter:
    auth: { type: none }
    operations:
      paint:
        request: { method: POST, path: '"/paint"', body: '{ "prompt": body.prompt, "model": model }' }
        response: { body: '{ "image": body.image }' }
      paintStream:
        models: [painter-1]
        request: { method: POST, path: '"/paint"', body: '{ "prompt": body.prompt, "model": model }' }
        response:
          type: stream
          idle_ms: 400
          max_bytes: 1mb
          body: |
            event = "oops" ? { "error": { "code": "upstream_unavailable", "message": body.why } }
            : event = "noise" ? undefined
            : { "event": event, "data": body, "final": event = "done" }
      paintLines:
        request: { method: POST, path: '"/paint"', body: '{ "prompt": body.prompt, "model": model }' }
        response:
          type: stream
          events: ndjson
          body: '{ "data": body, "final": body.done = true }'
channels:
  - { name: first, profile: painter, base_url: "${first}", groups: [default], models: [painter-1, painter-still], priority: 2 }
  - { name: second, profile: painter, base_url: "${second}", groups: [default], models: [painter-1, painter-still], priority: 1 }
prices:
  default: ${PRICE}
`,
  });
}

/** One streamed answer read event by event as it arrives (no whole-body wait). */
class Reader {
  readonly events: { event: string | null; data: any }[] = [];
  private buf = '';
  private waiters: (() => void)[] = [];
  ended = false;
  status = 0;
  contentType = '';
  text = '';
  readonly res: Promise<IncomingMessage>;
  private req;

  constructor(url: string, path: string, key: string, body: unknown) {
    this.req = httpRequest(url + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } });
    this.res = new Promise((resolve, reject) => {
      this.req.on('response', (res) => {
        this.status = res.statusCode ?? 0;
        this.contentType = String(res.headers['content-type']);
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          this.text += c;
          this.buf += c;
          let i = this.buf.indexOf('\r\n\r\n');
          while (i !== -1) {
            const frame = this.buf.slice(0, i);
            this.buf = this.buf.slice(i + 4);
            const named = /^event: (.*)\r\n/.exec(frame);
            const data = frame.slice(frame.indexOf('data: ') + 6);
            this.events.push({ event: named ? (named[1] ?? '') : null, data: JSON.parse(data) });
            i = this.buf.indexOf('\r\n\r\n');
          }
          this.wake();
        });
        res.on('end', () => {
          this.ended = true;
          this.wake();
        });
        res.on('error', () => undefined);
        resolve(res);
      });
      this.req.on('error', reject);
    });
    this.req.end(JSON.stringify(body));
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves once `n` events (or the end) have arrived. */
  async eventsAt(n: number): Promise<void> {
    while (this.events.length < n && !this.ended) await new Promise<void>((r) => this.waiters.push(r));
  }

  async end(): Promise<void> {
    while (!this.ended) await new Promise<void>((r) => this.waiters.push(r));
  }

  destroy(): void {
    this.req.destroy();
  }
}

describe('a vendor stream relayed by the engine', () => {
  let g: ConfigGateway;
  let v1: Vendor;
  let v2: Vendor;
  /** Units the one token has spent, holds included. */
  // Settlements and refunds are written after the answer (src/quota/hold-endings.ts): those made are written first.
  const used = async () => {
    await g.gateway.holdEndings.flush();
    return (await g.store.listTokens())[0]?.used ?? Number.NaN;
  };

  before(async () => {
    v1 = await new Vendor().start();
    v2 = await new Vendor().start();
    g = await startConfigGateway((dir) => writeConfig(dir, v1.url, v2.url), { quota: QUOTA });
  });
  after(async () => {
    await g.close();
    await closeLocal(v1.server);
    await closeLocal(v2.server);
  });

  test('each event reaches the client before the vendor sends the next; the price settles once, before the final event', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    v1.scripts.set('gated', async (res) => {
      head(res);
      res.write(sse('partial', { n: 0 }));
      // The vendor holds the rest until the client has the first event: only a relay delivers it.
      await gate;
      res.write(sse('partial', { n: 1 }));
      res.end(sse('done', { image: 'final' }));
    });
    const before = await used();
    const r = new Reader(g.gateway.url(), '/v1/paint', g.key, { model: 'painter-1', prompt: 'gated', stream: true });
    await r.eventsAt(1);
    assert.equal(r.status, 200);
    assert.equal(r.contentType, 'text/event-stream');
    assert.deepEqual(r.events, [{ event: 'partial', data: { n: 0 } }]);
    assert.equal(await used(), before + PRICE, 'the price is held while the stream runs');
    release();
    await r.end();
    assert.deepEqual(r.events, [
      { event: 'partial', data: { n: 0 } },
      { event: 'partial', data: { n: 1 } },
      { event: 'done', data: { image: 'final' } },
    ]);
    assert.equal(await used(), before + PRICE, 'charged once');
  });

  test('events the mapping drops are not sent; a stream that ends without its final event ends with an error event and is refunded', async () => {
    v1.scripts.set('short', (res) => {
      head(res);
      res.write(': keep-alive\n\n');
      res.write(sse('noise', {}));
      res.end(sse('partial', { n: 0 }));
    });
    const before = await used();
    const r = new Reader(g.gateway.url(), '/v1/paint', g.key, { model: 'painter-1', prompt: 'short', stream: true });
    await r.end();
    assert.equal(r.status, 200);
    assert.deepEqual(r.events[0], { event: 'partial', data: { n: 0 } });
    assert.equal(r.events.length, 2, r.text);
    assert.equal(r.events[1]?.event, 'error');
    assert.equal(r.events[1]?.data.error.code, 'bad_response');
    assert.match(r.events[1]?.data.error.message, /ended before its result/);
    assert.equal(await used(), before, 'refunded');
  });

  test("the vendor's error event after the first event: relayed as the protocol's error event with the mapped code; refunded", async () => {
    v1.scripts.set('fails', (res) => {
      head(res);
      res.write(sse('partial', { n: 0 }));
      res.end(sse('oops', { why: 'overloaded' }));
    });
    const before = await used();
    const r = new Reader(g.gateway.url(), '/v1/paint', g.key, { model: 'painter-1', prompt: 'fails', stream: true });
    await r.end();
    assert.deepEqual(r.events, [
      { event: 'partial', data: { n: 0 } },
      { event: 'error', data: { error: { message: 'overloaded', type: 'svc_api_error', param: '', code: 'upstream_unavailable' } } },
    ]);
    assert.equal(await used(), before);
  });

  test('an error before the first event falls back to the next channel; the client sees only the stream that worked', async () => {
    const calls1 = v1.calls;
    const calls2 = v2.calls;
    v1.scripts.set('fallback', (res) => {
      head(res);
      res.end(sse('oops', { why: 'busy' }));
    });
    v2.scripts.set('fallback', (res) => {
      head(res);
      res.end(sse('done', { image: 'from-second' }));
    });
    const r = new Reader(g.gateway.url(), '/v1/paint', g.key, { model: 'painter-1', prompt: 'fallback', stream: true });
    await r.end();
    assert.equal(r.status, 200);
    assert.deepEqual(r.events, [{ event: 'done', data: { image: 'from-second' } }]);
    assert.equal(v1.calls, calls1 + 1);
    assert.equal(v2.calls, calls2 + 1);
  });

  test('a vendor silent past idle_ms: the stream ends with an upstream_timeout event, the vendor call is aborted, the price refunded', async () => {
    let vendorClosed!: () => void;
    const closed = new Promise<void>((r) => (vendorClosed = r));
    for (const v of [v1, v2])
      v.scripts.set('stalls', (res) => {
        head(res);
        res.write(sse('partial', { n: 0 }));
        res.on('close', () => vendorClosed());
      });
    const before = await used();
    const r = new Reader(g.gateway.url(), '/v1/paint', g.key, { model: 'painter-1', prompt: 'stalls', stream: true });
    await r.end();
    assert.equal(r.events.length, 2, r.text);
    assert.equal(r.events[1]?.data.error.code, 'upstream_timeout');
    assert.match(r.events[1]?.data.error.message, /no event for 400 ms/);
    await closed;
    assert.equal(await used(), before);
  });

  test("the client going away aborts the vendor's request and refunds the price", async () => {
    let vendorClosed!: () => void;
    const closed = new Promise<void>((r) => (vendorClosed = r));
    v1.scripts.set('left', (res) => {
      head(res);
      res.write(sse('partial', { n: 0 }));
      // Keeps sending keep-alive comments (never idle), until the gateway goes away.
      const tick = setInterval(() => res.write(': tick\n\n'), 50);
      res.on('close', () => {
        clearInterval(tick);
        vendorClosed();
      });
    });
    const before = await used();
    const r = new Reader(g.gateway.url(), '/v1/paint', g.key, { model: 'painter-1', prompt: 'left', stream: true });
    await r.eventsAt(1);
    r.destroy();
    await closed;
    await until('the refund', async () => (await used()) === before);
  });

  test("backpressure: a client that does not read stops the vendor's writes; nothing buffers the stream; resumed, every event arrives", async () => {
    const EVENTS = 64;
    const big = 'x'.repeat(256 * 1024);
    let written = 0;
    let waiting = false;
    v1.scripts.set('flood', async (res) => {
      head(res);
      for (let i = 0; i < EVENTS; i++) {
        const ok = res.write(sse('partial', { n: i, big }));
        written = i + 1;
        if (!ok) {
          waiting = true;
          await new Promise((r) => res.once('drain', r));
          waiting = false;
        }
      }
      res.end(sse('done', { image: 'final' }));
    });
    const r = new Reader(g.gateway.url(), '/v1/paint', g.key, { model: 'painter-1', prompt: 'flood', stream: true });
    const res = await r.res;
    res.pause();
    // Paused: the socket buffers fill and the vendor waits for its drain with most of the stream unsent.
    await until('the vendor blocked on a full socket', () => waiting);
    const blockedAt = written;
    assert.ok(blockedAt < EVENTS / 2, `the vendor wrote ${blockedAt} of ${EVENTS} events of 256 KB while the client read nothing`);
    res.resume();
    await r.end();
    assert.equal(r.events.length, EVENTS + 1);
    assert.deepEqual(
      r.events.slice(0, EVENTS).map((e) => e.data.n),
      Array.from({ length: EVENTS }, (_, i) => i),
    );
  });

  test("an event over the operation's max_bytes ends the stream with bad_response", async () => {
    v1.scripts.set('huge', (res) => {
      head(res);
      res.write(sse('partial', { n: 0 }));
      res.end(sse('partial', { big: 'y'.repeat(2 * 1024 * 1024) }));
    });
    const r = new Reader(g.gateway.url(), '/v1/paint', g.key, { model: 'painter-1', prompt: 'huge', stream: true });
    await r.end();
    assert.equal(r.events.at(-1)?.data.error.code, 'bad_response');
    assert.match(r.events.at(-1)?.data.error.message, /larger than/);
  });

  test('stream: true on a model whose channels do not stream it is invalid_request naming `stream`, with no vendor call; false is the JSON answer', async () => {
    const calls = v1.calls + v2.calls;
    const r = new Reader(g.gateway.url(), '/v1/paint', g.key, { model: 'painter-still', prompt: 'x', stream: true });
    await r.end();
    assert.equal(r.status, 400);
    const body = JSON.parse(r.text);
    assert.equal(body.error.code, 'invalid_request');
    assert.equal(body.error.param, 'stream');
    assert.equal(v1.calls + v2.calls, calls);

    v1.scripts.set('json', (res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ image: 'whole' }));
    });
    const plain = new Reader(g.gateway.url(), '/v1/paint', g.key, { model: 'painter-1', prompt: 'json', stream: false });
    await plain.end();
    assert.equal(plain.status, 200);
    assert.match(plain.contentType, /^application\/json/);
    assert.deepEqual(JSON.parse(plain.text), { image: 'whole' });
  });

  test('a route that always streams over an operation that answers whole sends the answer as one frame', async () => {
    const r = new Reader(g.gateway.url(), '/v1/paint-always', g.key, { model: 'painter-1', prompt: 'json' });
    await r.end();
    assert.equal(r.status, 200);
    assert.equal(r.contentType, 'text/event-stream');
    assert.deepEqual(r.events, [{ event: null, data: { image: 'whole' } }]);
  });

  test('newline-delimited JSON from the vendor is relayed as Server-Sent Events', async () => {
    v1.scripts.set('lines', (res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"step":1}\n{"st');
      res.end('ep":2,"done":true}\n');
    });
    const r = new Reader(g.gateway.url(), '/v1/paint-lines', g.key, { model: 'painter-1', prompt: 'lines' });
    await r.end();
    assert.deepEqual(r.events, [
      { event: null, data: { step: 1 } },
      { event: null, data: { step: 2, done: true } },
    ]);
  });
});
