import pg from 'pg';
import { GatewayError } from '../../errors/gateway-error.js';
import { isStoreUnavailable, storeUnavailable, type StoreTimeouts } from '../unavailable.js';
import { MIGRATIONS } from './migrations.js';

export type Client = pg.PoolClient;

// BIGINT columns (times, units, ledger ids) come back as numbers: every value the store keeps is
// far below 2^53, and the records are plain numbers.
const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 && format !== 'binary' ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * How long after the server's own statement timeout the gateway stops waiting for an answer: the
 * server cancels a slow statement itself and says so; no word by then means the connection or the
 * server is gone (a partition, a store that accepts and never answers), and the connection is cut.
 */
const ANSWER_GRACE_MS = 1_000;
/** Migrations run once per schema change and may build an index on a large table: the server does not time them out. */
const MIGRATION_DEADLINE_MS = 30 * 60_000;

/**
 * SQLSTATEs that say the store, not the statement, failed: connection exceptions (class 08),
 * insufficient resources (class 53: too many connections, disk full), the server shutting down or
 * starting (57P01-57P03), a statement or an idle transaction cut by a timeout (57014, 25P03), and
 * a read-only server (25006: a standby after a failover, before the new primary is found).
 */
function unavailableState(code: string | undefined): boolean {
  return code !== undefined && (/^(08|53)/.test(code) || ['57P01', '57P02', '57P03', '57014', '25P03', '25006'].includes(code));
}

/** The gateway stopped waiting for an answer and cut the connection: the server may still be working on it. */
class NoAnswer extends Error {}

/**
 * A failure of the connection itself, not an answer of the server: a socket error (reset, broken
 * pipe), the connection ended under a statement, pg refusing a connection it knows is broken, or no
 * answer in time. Any other error of the driver (a bad argument) is a fault of ours, not the store's.
 */
function connectionFailed(err: unknown): boolean {
  if (err instanceof NoAnswer) return true;
  if (!(err instanceof Error) || err instanceof pg.DatabaseError || err instanceof GatewayError) return false;
  return typeof (err as NodeJS.ErrnoException).syscall === 'string' || /Connection terminated|not queryable/.test(err.message);
}

/** Whether an error says the connection is unusable (as opposed to an error the server answered on a live connection). */
function connectionBroke(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) return /^(08|57P0)/.test(err.code ?? '') || err.code === '25P03';
  return connectionFailed(err);
}

/**
 * The statement never reached the server: pg refused to send on a connection it already knew was
 * broken (its error arrived while the connection sat in the pool), or writing it failed (the server
 * had already reset the connection; it runs a statement only once the whole of it arrived, and a
 * transaction it never saw end is rolled back).
 */
function neverSent(err: unknown): boolean {
  return connectionFailed(err) && (/is not queryable/.test((err as Error).message) || (err as NodeJS.ErrnoException).syscall === 'write');
}

/**
 * Whether a statement whose connection failed may be sent again on a new one: the connection
 * broke (a reset, a restart), not the server refused it nor the gateway gave up waiting (a second
 * wait on a silent store would only double the first), nor was there no connection at all.
 */
function worthAgain(err: unknown): boolean {
  return connectionBroke(err) && !(err instanceof NoAnswer);
}

/** A driver error as the catalogue's `store_unavailable`, when it is the store's; anything else (a constraint, a bug) unchanged. */
function asStoreError(err: unknown): unknown {
  if (err instanceof pg.DatabaseError ? unavailableState(err.code) : connectionFailed(err)) return storeUnavailable(err);
  return err;
}

/**
 * Connections to PostgreSQL; every statement of the store goes through it. Nothing waits without a
 * bound: connecting (and waiting for a free connection) takes at most the connect timeout, each
 * statement is cut by the server at the statement timeout and by the gateway a second later, and
 * a transaction left idle is ended by the server. A connection that breaks is discarded, never
 * reused, and its error never reaches the process (docs/deploying.md, "When something fails").
 */
export class Database {
  readonly #pool: pg.Pool;
  readonly #deadlineMs: number;
  readonly #poolSize: number;
  readonly #timeouts: StoreTimeouts;
  readonly #config: pg.ClientConfig;
  /** The schema these connections use (`?schema=` of the URL, default `public`). */
  readonly schema: string;
  /** The probe's own connection, kept between pings (null until the first, and after one fails). */
  #probe: pg.Client | null = null;
  /** Closed: a ping must not open a connection nothing would close. */
  #ending = false;

  constructor(url: string, poolSize: number, timeouts: StoreTimeouts) {
    const parsed = new URL(url);
    const schema = parsed.searchParams.get('schema') ?? 'public';
    if (!/^[a-z_][a-z0-9_]{0,62}$/i.test(schema)) {
      throw new GatewayError('internal_error', `the store URL's schema "${schema}" is not a plain identifier (letters, digits, _)`);
    }
    parsed.searchParams.delete('schema');
    this.schema = schema;
    this.#timeouts = timeouts;
    this.#poolSize = poolSize;
    this.#deadlineMs = timeouts.statementMs + ANSWER_GRACE_MS;
    this.#config = {
      connectionString: parsed.href,
      types,
      options: `-c search_path=${schema} -c statement_timeout=${timeouts.statementMs} -c idle_in_transaction_session_timeout=${timeouts.idleInTransactionMs}`,
      connectionTimeoutMillis: timeouts.connectMs,
      // A peer gone without a word (a host down, a partition) is noticed on idle connections too.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'generation-gateway',
    };
    this.#pool = new pg.Pool({
      ...this.#config,
      max: poolSize,
      // An idle connection dropped by the server (a restart) is replaced, not reported to a client.
      idleTimeoutMillis: 30_000,
    });
    // An idle connection's error (the server went away) must not kill the process; the pool has
    // already discarded it, and the next statement opens a new one.
    this.#pool.on('error', () => undefined);
    // And no connection is ever without a listener: between the pool handing a connection out and
    // #withClient listening there is a turn of the event loop, and one chunk from the server can
    // finish a connection's start-up and then end it (a fast shutdown's 57P01 right after
    // ReadyForQuery): unheard, that 'error' ended the process. #withClient and the pool still see
    // every error through their own listeners.
    this.#pool.on('connect', (client: pg.PoolClient) => client.on('error', () => undefined));
  }

  /**
   * Runs one statement, sent at most once: when the connection breaks after it may have reached the
   * server, the caller gets `store_unavailable` and the outcome is unknown (a write the server may
   * have committed). Use `repeatable` for statements that may safely run twice.
   */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.#run<R>(sql, params, false);
  }

  /**
   * Runs a statement that may run twice without harm (a read, or a write whose own condition makes
   * a second run a no-op): when its connection breaks it is sent again on a new connection.
   */
  repeatable<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.#run<R>(sql, params, true);
  }

  /**
   * Sends a statement, and again on another connection while the one it got had broken before it
   * was sent (or, `repeatable`, broke under it). After a reset every idle connection of the pool
   * may be dead, each found so by one attempt: the attempts are bounded by the pool's size.
   */
  async #run<R extends pg.QueryResultRow>(sql: string, params: unknown[], repeatable: boolean): Promise<pg.QueryResult<R>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#withClient((c) => this.#send<R>(c, sql, params));
      } catch (err) {
        if (attempt > this.#poolSize || !(neverSent(err) || (repeatable && worthAgain(err)))) throw asStoreError(err);
      }
    }
  }

  /**
   * Runs `fn` in a transaction on one connection. A connection that breaks before COMMIT was sent
   * leaves nothing behind (the server rolls the transaction back), so the whole transaction is run
   * again on a new connection (the attempts bounded as `#run` bounds them); one that breaks during
   * COMMIT leaves the outcome unknown and is `store_unavailable`. `fn` must do nothing but
   * statements on its client.
   */
  async transaction<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let committing = false;
      try {
        return await this.#withClient(async (c) => {
          await this.#send(c, 'BEGIN', []);
          let out: T;
          try {
            out = await fn(c);
          } catch (err) {
            // A broken connection cannot roll back (the server does); a live one must, before it is reused.
            if (!connectionBroke(err)) await this.#send(c, 'ROLLBACK', []);
            throw err;
          }
          committing = true;
          await this.#send(c, 'COMMIT', []);
          return out;
        });
      } catch (err) {
        if (attempt <= this.#poolSize && !committing && worthAgain(err)) continue;
        throw asStoreError(err);
      }
    }
  }

  /**
   * One `SELECT 1` on a connection of its own (the pool's may all be stuck on a store that went
   * silent), answered within the connect timeout or failed. The connection is kept for the next
   * ping; one that broke since (a reset, a restart) is replaced at once, not taken for the store's
   * absence.
   */
  async ping(): Promise<void> {
    if (this.#ending) throw storeUnavailable(new Error('the store was closed'));
    const kept = this.#probe;
    if (kept) {
      try {
        return await this.#pingOn(kept, false);
      } catch (err) {
        // Silent: a second wait would only double the first.
        if (isStoreUnavailable(err) && err.details.cause instanceof NoAnswer) throw err;
      }
    }
    await this.#pingOn(new pg.Client(this.#config), true);
  }

  async #pingOn(client: pg.Client, fresh: boolean): Promise<void> {
    let broken: unknown = null;
    client.removeAllListeners('error');
    client.on('error', (err: unknown) => (broken ??= err));
    const timer = setTimeout(() => {
      broken ??= new NoAnswer(`no answer within ${this.#timeouts.connectMs} ms`);
      destroy(client);
    }, this.#timeouts.connectMs);
    try {
      if (fresh) await client.connect();
      await client.query('SELECT 1');
      if (broken) throw broken;
      this.#probe = client;
    } catch (err) {
      if (this.#probe === client) this.#probe = null;
      destroy(client);
      throw storeUnavailable(broken ?? err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Brings the schema up to date, one replica at a time (an advisory lock per schema). */
  async migrate(): Promise<void> {
    const schema = this.schema;
    await this.#withClient(async (client) => {
      const q = (sql: string, params: unknown[] = []) => this.#send(client, sql, params, MIGRATION_DEADLINE_MS);
      // A migration (an index on a large table) and the wait for another replica's are not statements of a request.
      await q('SET statement_timeout = 0');
      await q('SELECT pg_advisory_lock(hashtext($1))', [`generation-gateway:${schema}`]);
      try {
        await q(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        await q('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
        const { rows } = await q('SELECT MAX(version) AS v FROM schema_version');
        const from = (rows[0] as { v: number | null } | undefined)?.v ?? 0;
        for (const [v, migration] of MIGRATIONS.entries()) {
          if (v < from) continue;
          await q('BEGIN');
          try {
            await q(migration);
            await q('INSERT INTO schema_version (version) VALUES ($1)', [v + 1]);
            await q('COMMIT');
          } catch (err) {
            if (!connectionBroke(err)) await q('ROLLBACK');
            throw err;
          }
        }
      } finally {
        await q('SELECT pg_advisory_unlock(hashtext($1))', [`generation-gateway:${schema}`]).catch(() => undefined);
      }
    }, true).catch((err: unknown) => {
      throw asStoreError(err);
    });
  }

  /** Closes every connection; statements under way are cut. */
  async end(): Promise<void> {
    this.#ending = true;
    if (this.#probe) destroy(this.#probe);
    this.#probe = null;
    await this.#pool.end();
  }

  /**
   * Checks a connection out for `fn`, listening for its errors the whole time (pg reports a
   * connection that dies while checked out as an 'error' event, which unheard ends the process),
   * and gives it back, or discards it when it broke or `discard` is set.
   */
  async #withClient<T>(fn: (client: Client) => Promise<T>, discard = false): Promise<T> {
    // No connection at all: whatever the reason (refused, no answer, a password no longer
    // accepted), the store is not there for this statement, which never left.
    const client = await this.#pool.connect().catch((err: unknown) => {
      throw storeUnavailable(err);
    });
    let broken: unknown = null;
    const onError = (err: unknown) => (broken ??= err);
    client.on('error', onError);
    try {
      return await fn(client);
    } catch (err) {
      if (connectionBroke(err)) broken ??= err;
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken instanceof Error ? broken : discard ? true : undefined);
    }
  }

  /** Sends one statement and waits for its answer at most `deadlineMs`, then cuts the connection. */
  async #send<R extends pg.QueryResultRow>(client: Client, sql: string, params: unknown[], deadlineMs = this.#deadlineMs): Promise<pg.QueryResult<R>> {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      destroy(client);
    }, deadlineMs);
    try {
      return await client.query<R>(sql, params);
    } catch (err) {
      if (timedOut) throw new NoAnswer(`no answer within ${deadlineMs} ms; the connection was cut`, { cause: err });
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Cuts a client's socket at once: `end()` would wait for a goodbye a silent server never sends. */
function destroy(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/**
 * Opens the connections on a `postgres://` URL and brings the schema up to date. The URL may name
 * a schema (`?schema=name`, default `public`), so tests and several gateways can share one database.
 * A server that cannot be reached fails this within the connect timeout, with `store_unavailable`.
 */
export async function openDatabase(url: string, poolSize: number, timeouts: StoreTimeouts): Promise<Database> {
  const db = new Database(url, poolSize, timeouts);
  try {
    await db.migrate();
  } catch (err) {
    await db.end();
    throw err;
  }
  return db;
}
