// The fault helpers themselves: a private PostgreSQL that can be stopped and started, and a TCP
// proxy that can cut, silence and let speak the connections through it. Tests of how the gateway
// survives its store's faults stand on these, so they must do what they say.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { postgresBehindProxy, privatePostgresOrSkip } from '../helpers/private-postgres.js';
import { until } from '../helpers/until.js';

if (privatePostgresOrSkip('fault helpers')) {
  const cluster = postgresBehindProxy();

  /** A connected client on `port`; its errors are kept (an idle client's error is an event, not a rejection). */
  const connected = async (port: number, options: pg.ClientConfig = {}) => {
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 5_000, ...options });
    const errored = new Promise<Error>((resolve) => client.on('error', resolve));
    await client.connect();
    // Bounded only when awaited: the timer starts with the fault, not with the connection.
    return { client, errored: () => bounded(errored, 'the client to see an error') };
  };
  const selectOne = async (port: number) => {
    const { client } = await connected(port);
    try {
      assert.deepEqual((await client.query('SELECT 1 AS one')).rows, [{ one: 1 }]);
    } finally {
      await client.end();
    }
  };

  test('fault helpers: a query goes through the proxy', async () => {
    await selectOne(cluster.proxy.port);
    await until('the proxy to see the connection closed', () => cluster.proxy.open === 0, 5_000);
  });

  test('fault helpers: reset() cuts every open connection, each client sees an error, and new connections work', async () => {
    const a = await connected(cluster.proxy.port);
    const b = await connected(cluster.proxy.port);
    assert.equal(cluster.proxy.open, 2);
    assert.equal(cluster.proxy.reset(), 2);
    assert.equal(cluster.proxy.open, 0);
    for (const { errored } of [a, b]) assert.equal(((await errored()) as NodeJS.ErrnoException).code, 'ECONNRESET');
    await selectOne(cluster.proxy.port);
  });

  test('fault helpers: silence() holds new and existing connections; speak() lets them go on, in order', async () => {
    const { client } = await connected(cluster.proxy.port);
    try {
      cluster.proxy.silence();
      let answered = false;
      const held = client.query('SELECT 2 AS two').then((r) => {
        answered = true;
        return r.rows;
      });
      const late = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${cluster.proxy.port}/postgres`, connectionTimeoutMillis: 500 });
      late.on('error', () => undefined);
      await assert.rejects(late.connect(), /timeout/i);
      // The 500 ms the new connection waited in vain, the held query waited too.
      assert.equal(answered, false, 'a query was answered while the proxy was silent');
      cluster.proxy.speak();
      assert.deepEqual(await bounded(held, 'the held query to be answered'), [{ two: 2 }]);
      await selectOne(cluster.proxy.port);
    } finally {
      await client.end();
    }
  });

  test('fault helpers: stop("fast") disconnects clients and refuses connections; start() brings the server back on its port', async () => {
    const { errored } = await connected(cluster.proxy.port);
    await cluster.server.stop('fast');
    // 57P01 admin_shutdown: the server said goodbye before closing, as a fast shutdown does.
    assert.equal(((await errored()) as NodeJS.ErrnoException).code, '57P01');
    await assert.rejects(selectOne(cluster.server.port), { code: 'ECONNREFUSED' });
    // Through the proxy the refusal becomes a reset of the accepted connection.
    await assert.rejects(selectOne(cluster.proxy.port), /ECONNRESET|terminated/);
    await cluster.server.start();
    await selectOne(cluster.server.port);
    await selectOne(cluster.proxy.port);
  });

  test('fault helpers: stop("immediate") drops clients as a crash does; start() recovers', async () => {
    const { client, errored } = await connected(cluster.proxy.port);
    await client.query('CREATE TABLE IF NOT EXISTS survived (n int); INSERT INTO survived VALUES (1)');
    await cluster.server.stop('immediate');
    await errored();
    await assert.rejects(selectOne(cluster.server.port), { code: 'ECONNREFUSED' });
    await cluster.server.start();
    const { client: again } = await connected(cluster.proxy.port);
    try {
      assert.deepEqual((await again.query('SELECT count(*)::int AS n FROM survived')).rows, [{ n: 1 }]);
    } finally {
      await again.end();
    }
  });

  test('fault helpers: destroy() may be called twice', async () => {
    await cluster.server.destroy();
    await cluster.server.destroy();
    await assert.rejects(selectOne(cluster.server.port), { code: 'ECONNREFUSED' });
  });
}

/** `p`, or a rejection naming `what` after `ms`: a hung promise fails the test instead of the run. */
function bounded<T>(p: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
