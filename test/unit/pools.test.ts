import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import type { CompiledChannel } from '../../src/config/snapshot.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { Pools } from '../../src/upstream/pools.js';

/** Only what Pools reads of a channel. */
const channel = (name: string, origin: string) => ({ name, origin, maxConnections: 4, timeouts: { connectMs: 1000 } }) as unknown as CompiledChannel;

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
      const pool = p.get({ name: 'a', origin, maxConnections: 1, timeouts: { connectMs: 1000 } });
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
});
