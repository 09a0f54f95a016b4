import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import pg from 'pg';

/**
 * The URL of a service a test file needs (`DATABASE_URL`, `REDIS_URL`; `.ci/run` sets both), or
 * null, having registered a skipped test that says why. With `CI=true` a missing service is a
 * failing test instead: in CI these tests must run.
 */
export function serviceUrl(name: 'DATABASE_URL' | 'REDIS_URL', what: string): string | null {
  const url = process.env[name];
  if (url) return url;
  if (process.env.CI === 'true') {
    test(`${what}: ${name} is set`, () => assert.fail(`${name} is not set and CI=true: these tests must run in CI, not skip`));
  } else {
    test(what, { skip: `${name} is not set; set it (see .ci/run) to run these tests against a real service` }, () => undefined);
  }
  return null;
}

/**
 * PostgreSQL schemas for one test file: `url()` gives a store URL on a schema of its own, and every
 * schema handed out is dropped when the file ends.
 */
export function pgSchemas(databaseUrl: string): { url(): string; drop(): Promise<void> } {
  const prefix = `gw_test_${process.pid}_${randomBytes(3).toString('hex')}`;
  const made: string[] = [];
  const drop = async () => {
    if (made.length === 0) return;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      for (const s of made.splice(0)) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    } finally {
      await client.end();
    }
  };
  after(drop);
  return {
    url() {
      const schema = `${prefix}_${made.length}`;
      made.push(schema);
      const u = new URL(databaseUrl);
      u.searchParams.set('schema', schema);
      return u.href;
    },
    drop,
  };
}
