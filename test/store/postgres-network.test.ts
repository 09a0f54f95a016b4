/**
 * The PostgreSQL connections when the network fails (src/store/postgres/database.ts; docs/deploying.md, "When
 * PostgreSQL goes away"), each case on a schema of its own of DATABASE_URL reached through a TCP
 * proxy the test cuts or silences: a connection that breaks, in use or idle, never reaches the
 * process as an unhandled 'error'; a statement that may run twice is sent again on a new
 * connection, one that may not fails `store_unavailable`; a transaction broken before COMMIT runs
 * again; nothing waits past its bound; a server error stays what it is.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/store/postgres/database.js';
import { isStoreUnavailable, type StoreTimeouts } from '../../src/store/unavailable.js';
import { pgSchemas, serviceUrl } from '../helpers/services.js';
import { faultProxy, type FaultProxy } from '../helpers/tcp-proxy.js';
import { until } from '../helpers/until.js';

const SHORT: StoreTimeouts = { connectMs: 1_000, statementMs: 500, idleInTransactionMs: 5_000 };

const databaseUrl = serviceUrl('DATABASE_URL', 'postgres connections when the network fails');
if (databaseUrl) {
  describe('postgres connections through a failing network', { timeout: 60_000 }, () => {
    const schemas = pgSchemas(databaseUrl);
    const target = new URL(databaseUrl);
    let proxy: FaultProxy;
    /** A connection of the test's own, straight to the server, to watch what the gateway's are doing. */
    let watcher: pg.Client;
    const opened: Database[] = [];

    before(async () => {
      proxy = await faultProxy(Number(target.port || 5432), target.hostname);
      watcher = new pg.Client({ connectionString: databaseUrl });
      await watcher.connect();
    });
    after(async () => {
      for (const db of opened) await db.end().catch(() => undefined);
      await watcher?.end();
      await proxy?.close();
    });

    /** A Database on a schema of its own, through the proxy. */
    async function open(timeouts: StoreTimeouts = SHORT): Promise<Database> {
      const u = new URL(schemas.url());
      u.hostname = '127.0.0.1';
      u.port = String(proxy.port);
      const db = await openDatabase(u.href, 4, timeouts);
      opened.push(db);
      return db;
    }
    /** Resolves once the server runs a statement containing `marker`: it was sent and is under way. */
    const running = (marker: string) =>
      until(
        `the statement ${marker} to run`,
        async () => {
          const { rows } = await watcher.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND query NOT LIKE '%pg_stat_activity%'",
            [`%${marker}%`],
          );
          return rows[0]!.n > 0;
        },
        5_000,
      );

    test('a read whose connection is reset while it runs is sent again on a new one and answers', async () => {
      const db = await open();
      const answer = db.repeatable<{ v: number }>("SELECT 7 AS v, pg_sleep(0.3), 'read-reset' AS marker");
      await running('read-reset');
      assert.ok(proxy.reset() > 0);
      assert.equal((await answer).rows[0]!.v, 7);
    });

    test('a write whose connection is reset while it runs fails store_unavailable and is not sent again', async () => {
      const db = await open();
      await db.query('CREATE TABLE writes (n INTEGER)');
      const write = db.query("INSERT INTO writes SELECT 1 FROM pg_sleep(0.3) WHERE 'write-reset' <> ''");
      await running('write-reset');
      proxy.reset();
      await assert.rejects(write, (err) => isStoreUnavailable(err));
      // The server may or may not have committed it: at most once, never twice.
      const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM writes');
      assert.ok(rows[0]!.n <= 1);
    });

    test('a transaction whose connection breaks before COMMIT runs again on a new one; the first leaves nothing', async () => {
      const db = await open();
      await db.query('CREATE TABLE moves (attempt INTEGER)');
      let attempts = 0;
      const out = await db.transaction(async (c) => {
        attempts++;
        await c.query('INSERT INTO moves VALUES ($1)', [attempts]);
        if (attempts === 1) {
          // Cut while the transaction is open and its connection idle between statements: pg
          // reports that as an 'error' event on the client, which unheard would end the process.
          proxy.reset();
          await new Promise<void>((resolve) => c.once('end', resolve));
          await c.query('SELECT 1');
        }
        return attempts;
      });
      assert.equal(out, 2);
      const { rows } = await db.query<{ attempt: number }>('SELECT attempt FROM moves');
      assert.deepEqual(rows, [{ attempt: 2 }], 'the broken attempt was rolled back');
    });

    test('idle connections reset in the pool are replaced, not reported: the next statement answers', async () => {
      const db = await open();
      await Promise.all([1, 2, 3].map(() => db.query('SELECT 1')));
      assert.ok(proxy.reset() >= 1);
      // Repeatable: a connection whose reset the process has not read yet may still be handed out once.
      assert.equal((await db.repeatable<{ v: number }>('SELECT 5 AS v')).rows[0]!.v, 5);
    });

    test('the ping replaces its own connection after a reset instead of calling the store away', async () => {
      const db = await open();
      await db.ping();
      proxy.reset();
      await db.ping();
    });

    test('a store gone silent: a statement fails store_unavailable a second after the statement timeout, and the ping within the connect timeout', async () => {
      const db = await open();
      await db.ping();
      // A connection in the pool: the statement waits for an answer, not for a connection.
      await db.query('SELECT 1');
      proxy.silence();
      try {
        let started = Date.now();
        await assert.rejects(
          db.query('SELECT 1'),
          (err) => isStoreUnavailable(err) && /no answer within 1500 ms/.test(String((err.details.cause as Error).message)),
        );
        const waited = Date.now() - started;
        assert.ok(waited >= 1_400 && waited < 5_000, `gave up after ${waited} ms`);
        started = Date.now();
        await assert.rejects(db.ping(), (err) => isStoreUnavailable(err));
        assert.ok(Date.now() - started < 3_000);
      } finally {
        proxy.speak();
      }
      assert.equal((await db.query<{ v: number }>('SELECT 6 AS v')).rows[0]!.v, 6, 'served again once it speaks');
    });

    test('a statement past the statement timeout is cancelled by the server: store_unavailable, and the connection serves on', async () => {
      const db = await open();
      await assert.rejects(db.query('SELECT pg_sleep(2)'), (err) => isStoreUnavailable(err) && (err.details.cause as { code?: string }).code === '57014');
      assert.equal((await db.query<{ v: number }>('SELECT 8 AS v')).rows[0]!.v, 8);
    });

    test('a server error is no store_unavailable: a bad statement is a fault of ours', async () => {
      const db = await open();
      await assert.rejects(db.query('SELEKT 1'), (err) => !isStoreUnavailable(err) && err instanceof pg.DatabaseError && err.code === '42601');
    });

    test('opening against a silent store fails store_unavailable within the connect timeout', async () => {
      proxy.silence();
      try {
        const started = Date.now();
        await assert.rejects(open({ ...SHORT, connectMs: 500 }), (err) => isStoreUnavailable(err));
        assert.ok(Date.now() - started < 3_000);
      } finally {
        proxy.speak();
      }
    });
  });
}
