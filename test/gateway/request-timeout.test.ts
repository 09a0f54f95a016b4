/**
 * Slow clients on real sockets (docs/operating.md, "Request bodies and memory"): a body that does not arrive
 * within GATEWAY_REQUEST_TIMEOUT_MS is answered 408 request_timeout in shape A, then the
 * connection closes, also when its handler is already waiting for the body; headers that do not
 * arrive within GATEWAY_HEADERS_TIMEOUT_MS get the same. Timeouts are shortened here (2 s, 1 s).
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open-store.js';
import { hashKey } from '../../src/tokens/keys.js';
import { assertShapeA, parseRaw } from '../helpers/hostile.js';

const KEY = 'gw-request-timeout-test-key';
const REQUEST_TIMEOUT_MS = 2_000;
const HEADERS_TIMEOUT_MS = 1_000;

let gateway: Gateway;
let port: number;
before(async () => {
  const snapshot = loadConfigOrThrow(PROJECT_ROOT);
  const store = await openStore(':memory:');
  await store.createToken({ name: 't', keyHash: hashKey(KEY), group: 'default', models: null, quota: null });
  gateway = createGateway({ snapshot: () => snapshot, store, log: silentLogger(), requestTimeoutMs: REQUEST_TIMEOUT_MS, headersTimeoutMs: HEADERS_TIMEOUT_MS });
  port = await gateway.listen(0);
});
after(() => gateway.close());

/**
 * Opens a connection, writes `head`, then one body byte every 100 ms (never the whole declared
 * body), and resolves with everything the server sent once it closes the connection.
 */
function trickle(head: string): Promise<{ text: string; started: number; ended: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(head));
    const chunks: Buffer[] = [];
    const timer = setInterval(() => socket.writable && socket.write('{'), 100);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ text: Buffer.concat(chunks).toString('utf8'), started, ended: Date.now() });
    });
  });
}

const declared = (length: number) =>
  `POST /v1beta/models/alpha-3-pro-image-preview:generateContent HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;

test('a body trickled past the request timeout is answered 408 request_timeout in shape A, then the connection closes', async () => {
  const r = await trickle(declared(1024 * 1024));
  const answer = parseRaw(r.text);
  assert.ok(answer, `an HTTP answer came before the close: ${JSON.stringify(r.text.slice(0, 200))}`);
  const e = assertShapeA(answer.status, answer.body, 'slow body');
  assert.equal(e.code, 'request_timeout');
  assert.match(r.text, /\r\nconnection: close\r\n/i);
  // Not cut off long after the limit: Node's connection check runs every second here (30 s by default).
  assert.ok(r.ended - r.started < REQUEST_TIMEOUT_MS + 5_000, `closed after ${r.ended - r.started} ms`);
});

test('twenty slow bodies at once each get their 408; the gateway still serves', async () => {
  const all = await Promise.all(Array.from({ length: 20 }, () => trickle(declared(100_000))));
  for (const r of all) assert.equal(parseRaw(r.text)?.status, 408, r.text.slice(0, 200));
  const res = await fetch(`${gateway.url()}/v1/videos/task_nope`, { headers: { authorization: `Bearer ${KEY}` } });
  assert.equal(res.status, 404);
  await res.arrayBuffer();
});

test('headers trickled past the headers timeout get 408 too', async () => {
  const r = await trickle('POST /v1beta/models/alpha-3-pro-image-preview:generateContent HTTP/1.1\r\nhost: x\r\nx-slow: ');
  const answer = parseRaw(r.text);
  assert.equal(answer?.status, 408, r.text.slice(0, 200));
  assert.equal(assertShapeA(answer!.status, answer!.body).code, 'request_timeout');
});
