import pg from 'pg';
import { GatewayError } from '../../errors/gateway-error.js';
import { MIGRATIONS } from './migrations.js';

/** Connections to PostgreSQL; every query of the store goes through it. */
export type Pool = pg.Pool;
export type Client = pg.PoolClient;

// BIGINT columns (times, units, ledger ids) come back as numbers: every value the store keeps is
// far below 2^53, and the records are plain numbers.
const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 && format !== 'binary' ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * Opens a pool on a `postgres://` URL and brings the schema up to date. The URL may name a
 * schema (`?schema=name`, default `public`), so tests and several gateways can share one database.
 */
export async function openPool(url: string, max: number): Promise<Pool> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? 'public';
  if (!/^[a-z_][a-z0-9_]{0,62}$/i.test(schema)) {
    throw new GatewayError('internal_error', `the store URL's schema "${schema}" is not a plain identifier (letters, digits, _)`);
  }
  parsed.searchParams.delete('schema');
  const pool = new pg.Pool({
    connectionString: parsed.href,
    max,
    types,
    options: `-c search_path=${schema}`,
    // An idle connection dropped by the server (a restart) is replaced, not reported to a client.
    idleTimeoutMillis: 30_000,
  });
  // An idle client's error (the server went away) must not kill the process; the next query reports it.
  pool.on('error', () => undefined);
  try {
    await migrate(pool, schema);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return pool;
}

/** Applies the missing migrations, one replica at a time (an advisory lock per schema). */
async function migrate(pool: Pool, schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`generation-gateway:${schema}`]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
      const { rows } = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_version');
      for (let v = rows[0]?.v ?? 0; v < MIGRATIONS.length; v++) {
        await client.query('BEGIN');
        try {
          await client.query(MIGRATIONS[v]!);
          await client.query('INSERT INTO schema_version (version) VALUES ($1)', [v + 1]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`generation-gateway:${schema}`]);
    }
  } finally {
    client.release();
  }
}

/** Runs `fn` in a transaction on one connection of the pool. */
export async function transaction<T>(pool: Pool, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
  } finally {
    client.release();
  }
}
