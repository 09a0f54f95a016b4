/**
 * sendForAnswer (src/upstream/dispatch.ts) reads a vendor's answer whole through undici's dispatch
 * with its own handler, where the request path used to send with undici's request API and read
 * the body stream (`send` then `readAnswer`). The two must answer alike: the same status, headers
 * and bytes; the same refusal of an answer over the size limit, declared or not; the same
 * transport error for a connection cut in the middle of the answer.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { CompiledChannel } from '../../src/config/snapshot.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { readAnswer, send, sendForAnswer } from '../../src/upstream/dispatch.js';
import { Pools } from '../../src/upstream/pools.js';
import type { UpstreamRequest } from '../../src/upstream/upstream-request.js';
import { closeLocal, listenLocal } from '../helpers/local-server.js';

const BIG = Buffer.alloc(3000, 'x');

/** The vendor: each path answers one way. */
function answer(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  switch (req.url) {
    case '/ok':
      res.writeHead(201, { 'content-type': 'application/json', 'x-twice': ['a', 'b'] }).end(JSON.stringify({ got: req.headers['x-mine'] }));
      return;
    case '/declared-large':
      res.writeHead(200, { 'content-length': BIG.length }).end(BIG);
      return;
    case '/chunked-large':
      res.writeHead(200);
      res.write(BIG.subarray(0, 1000));
      setTimeout(() => res.end(BIG.subarray(1000)), 20);
      return;
    case '/cut':
      res.writeHead(200, { 'content-length': 100 });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    default:
      res.writeHead(404).end();
  }
}

let server: ReturnType<typeof createServer>;
let channel: CompiledChannel;
const pools = new Pools();
before(async () => {
  server = createServer(answer);
  const origin = await listenLocal(server);
  channel = { name: 'v', origin, keepAliveMs: 4000, timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 } } as unknown as CompiledChannel;
});
after(async () => {
  await pools.close(true);
  await closeLocal(server);
});

const request = (path: string): UpstreamRequest => ({ method: 'POST', path, query: {}, headers: { 'x-mine': 'yes' }, body: '{}' });

/** What each way gives: the answer, or the error's class, code and message. */
async function both(path: string, maxBytes: number) {
  const outcome = (p: Promise<unknown>) =>
    p.then(
      (r) => ({ ok: r as { status: number; headers: Record<string, unknown>; body: Buffer } }),
      (err: unknown) => ({ err: err instanceof GatewayError ? `${err.code}: ${err.message}` : String(err) }),
    );
  const viaStream = await outcome(send(pools, channel, request(path)).then((res) => readAnswer(res, channel, maxBytes)));
  const whole = await outcome(sendForAnswer(pools, channel, request(path), maxBytes));
  return { viaStream, whole };
}

describe('sendForAnswer answers as send and readAnswer do', () => {
  it('an answer: its status, its headers (a repeated one as a list) and its bytes', async () => {
    const { viaStream, whole } = await both('/ok', 1000);
    assert.ok('ok' in whole && 'ok' in viaStream);
    assert.equal(whole.ok.status, 201);
    assert.deepEqual(JSON.parse(whole.ok.body.toString()), { got: 'yes' });
    assert.deepEqual(whole.ok.headers['x-twice'], ['a', 'b']);
    const { date: _d1, ...h1 } = whole.ok.headers;
    const { date: _d2, ...h2 } = viaStream.ok.headers;
    assert.deepEqual(h1, h2);
    assert.ok(whole.ok.body.equals(viaStream.ok.body));
  });

  for (const path of ['/declared-large', '/chunked-large']) {
    it(`an answer over the size limit (${path.slice(1)}) is refused alike`, async () => {
      const { viaStream, whole } = await both(path, 2000);
      assert.deepEqual(whole, { err: 'bad_response: the upstream answer is larger than 2000 bytes' });
      assert.deepEqual(whole, viaStream);
    });
  }

  it('a connection cut in the middle of the answer is the same transport error', async () => {
    const { viaStream, whole } = await both('/cut', 1000);
    assert.ok('err' in whole, JSON.stringify(whole));
    assert.deepEqual(whole, viaStream);
  });

  it('the pool still serves after the refusals and the cut', async () => {
    const { whole } = await both('/ok', 1000);
    assert.ok('ok' in whole && whole.ok.status === 201);
  });
});
