import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open-store.js';
import { hashKey } from '../../src/tokens/keys.js';
import { until } from '../helpers/until.js';

const KEY = 'gw-raw-http-test-key';

let gateway: Gateway;
let port: number;
before(async () => {
  const snapshot = loadConfigOrThrow(PROJECT_ROOT);
  const store = await openStore(':memory:');
  await store.createToken({ name: 'raw', keyHash: hashKey(KEY), group: 'default', models: null, quota: null });
  gateway = createGateway({ snapshot: () => snapshot, store, log: silentLogger() });
  port = await gateway.listen(0);
});
after(() => gateway.close());

function rawExchange(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.on('data', (d) => (out += d.toString('utf8')));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

function parse(answer: string): { status: number; body: { error: { code: string; type: string } } } {
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(head!.split(' ')[1]), body: JSON.parse(body!) };
}

test('a request the HTTP parser refuses still gets a shape A answer', async () => {
  const r = parse(await rawExchange('GARBAGE\r\n\r\n'));
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, 'invalid_request');
  assert.equal(r.body.error.type, 'svc_api_error');
});

test('headers over 16 KB are refused with a shape A 400', async () => {
  const r = parse(await rawExchange(`GET / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`));
  assert.equal(r.status, 400);
  assert.match(JSON.stringify(r.body), /headers are too large/);
});

test('a client that disconnects mid-body releases its connection (the gateway can still close)', async () => {
  const serverSide = new Promise<import('node:net').Socket>((resolve) => gateway.server.once('connection', resolve));
  const requested = new Promise<void>((resolve) => gateway.server.once('request', () => resolve()));
  const socket = connect(port, '127.0.0.1', () =>
    socket.write(
      'POST /v1beta/models/alpha-3-pro-image-preview:generateContent HTTP/1.1\r\nHost: x\r\n' +
        `Authorization: Bearer ${KEY}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"con',
    ),
  );
  const server = await serverSide;
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
  // The request reached the handler (which now waits for the rest of the body); then the client goes.
  await requested;
  socket.destroy();
  await closed;
  assert.equal(server.destroyed, true);
});

test('a method no route takes is 405 naming each allowed method once, also where two routes share one by their query', async () => {
  const res = await fetch(`http://127.0.0.1:${port}/gamma?Action=CVSync2AsyncSubmitTask&Version=2022-08-31`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${KEY}` },
  });
  assert.equal(res.status, 405);
  assert.equal(res.headers.get('allow'), 'POST');
  assert.match(((await res.json()) as { error: { message: string } }).error.message, /use POST$/);
});

test('a refused upload from a client that asked to close gets its answer, then the connection closes once the body is in', async () => {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let answer = '';
  socket.on('data', (d) => (answer += d.toString('utf8')));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const body = `{"contents":"${'a'.repeat(100_000)}"}`;
  // No key: refused (401) before the body is read; half the body is sent before, half after the answer.
  socket.write(
    'POST /v1beta/models/alpha-3-pro-image-preview:generateContent HTTP/1.1\r\nHost: x\r\nConnection: close\r\n' +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 50_000)}`,
  );
  await until('the answer', () => answer.includes('\r\n\r\n'), 20_000);
  socket.write(body.slice(50_000));
  // Bounded well under the 65 s keep-alive the connection would otherwise idle for.
  await until('the server to close the connection', () => socket.readableEnded || socket.closed, 20_000);
  await closed.catch(() => undefined);
  socket.destroy();
  assert.equal(parse(answer).status, 401);
});
