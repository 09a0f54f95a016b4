import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import type { CompiledChannel } from '../../src/config/snapshot.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { Pools } from '../../src/upstream/pools.js';

/** Only what Pools reads of a channel. */
const channel = (name: string, origin: string, keepAliveMs = 4000) =>
  ({ name, origin, keepAliveMs, timeouts: { connectMs: 1000 } }) as unknown as CompiledChannel;

/** A vendor on port 0 that tells which side ended each connection: `closedBy` resolves with 'client' or 'server' per socket. */
async function vendor(handler: (req: IncomingMessage, res: ServerResponse) => void, keepAliveTimeout: number) {
  const server = createServer(handler);
  server.keepAliveTimeout = keepAliveTimeout;
  const closes: Promise<'client' | 'server'>[] = [];
  server.on('connection', (socket) => {
    closes.push(
      new Promise((resolve) => {
        let clientEnded = false;
        socket.on('end', () => void (clientEnded = true));
        socket.on('close', () => resolve(clientEnded ? 'client' : 'server'));
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, origin, closes, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('Pools', () => {
  it("sends with undici's own Pool class, loaded without the package index (a process that never loads the index)", async () => {
    // This test process has loaded undici's index through other modules, which would hide a pool
    // without the request API; a fresh process shows what the gateway gets.
    const pools = pathToFileURL(join(PROJECT_ROOT, 'dist/src/upstream/pools.js')).href;
    const script = `
      import { createServer } from 'node:http';
      import { createRequire } from 'node:module';
      const { Pools } = await import(${JSON.stringify(pools)});
      const server = createServer((req, res) => res.end('pong ' + req.url));
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      const origin = 'http://127.0.0.1:' + server.address().port;
      const p = new Pools();
      const pool = p.get({ name: 'a', origin, keepAliveMs: 4000, timeouts: { connectMs: 1000 } });
      const res = await pool.request({ method: 'GET', path: '/ping' });
      const text = await res.body.text();
      const require = createRequire(${JSON.stringify(pools)});
      const indexLoaded = require.resolve('undici') in require.cache;
      const same = pool instanceof require('undici').Pool;
      await p.close();
      server.close();
      console.log(JSON.stringify({ status: res.statusCode, text, indexLoaded, same }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 });
    assert.deepEqual(JSON.parse(stdout), { status: 200, text: 'pong /ping', indexLoaded: false, same: true });
  });

  it('shares one pool between channels of the same origin and settings', async () => {
    const pools = new Pools();
    assert.equal(pools.get(channel('a', 'http://127.0.0.1:9')), pools.get(channel('b', 'http://127.0.0.1:9')));
    assert.notEqual(pools.get(channel('a', 'http://127.0.0.1:9')), pools.get(channel('c', 'http://127.0.0.1:10')));
    assert.deepEqual(pools.origins().sort(), ['http://127.0.0.1:10', 'http://127.0.0.1:9']);
    await pools.close(true);
  });

  it('has no bound of its own on connections: 200 calls at once all reach the vendor at once (the old pool held 64 and queued the rest unseen)', {
    timeout: 30_000,
  }, async () => {
    const N = 200;
    const held: ServerResponse[] = [];
    let arrived!: () => void;
    const all = new Promise<void>((r) => (arrived = r));
    const v = await vendor((_req, res) => {
      held.push(res);
      // The vendor answers only once every call is in: a bound below N would wait forever.
      if (held.length === N) {
        for (const r of held) r.end('ok');
        arrived();
      }
    }, 5000);
    const pools = new Pools();
    const pool = pools.get(channel('a', v.origin));
    const answers = await Promise.all(Array.from({ length: N }, () => pool.request({ method: 'POST', path: '/slow', body: '{}' }).then((r) => r.body.text())));
    await all;
    assert.equal(answers.length, N);
    assert.ok(answers.every((a) => a === 'ok'));
    await pools.close(true);
    await v.close();
  });

  it('closes an idle connection itself after keep_alive_ms when the vendor states no keep-alive timeout', { timeout: 30_000 }, async () => {
    // keepAliveTimeout 0: the vendor sends no Keep-Alive hint and never times an idle socket out.
    const v = await vendor((_req, res) => res.end('ok'), 0);
    const pools = new Pools();
    const pool = pools.get(channel('a', v.origin, 300));
    await (await pool.request({ method: 'GET', path: '/' })).body.text();
    const answeredAt = performance.now();
    assert.equal(await v.closes[0], 'client', 'the gateway side ended the idle connection');
    assert.ok(performance.now() - answeredAt >= 250, 'not before keep_alive_ms');
    await pools.close();
    await v.close();
  });

  it("takes the vendor's Keep-Alive hint less 2 s over keep_alive_ms, so it closes before the vendor does", { timeout: 30_000 }, async () => {
    // The vendor closes idle sockets after 2.5 s and says so (Keep-Alive: timeout=2); our 60 s would race it.
    const v = await vendor((_req, res) => res.end('ok'), 2500);
    const pools = new Pools();
    const pool = pools.get(channel('a', v.origin, 60_000));
    const res = await pool.request({ method: 'GET', path: '/' });
    assert.equal(res.headers['keep-alive'], 'timeout=2');
    await res.body.text();
    assert.equal(await v.closes[0], 'client', 'closed from our side, before the vendor timed it out');
    await pools.close();
    await v.close();
  });
});
