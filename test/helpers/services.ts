import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
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

/**
 * Key prefixes in Redis for one test file: `next()` gives a prefix of its own, and every key under
 * the prefixes handed out is deleted when the file ends.
 */
export function redisPrefixes(redisUrl: string): { next(): string } {
  const base = `gwtest:${process.pid}:${randomBytes(3).toString('hex')}`;
  let n = 0;
  after(async () => {
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    try {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `${base}:*`, 'COUNT', 1000);
        cursor = next;
        keys.push(...found);
      } while (cursor !== '0');
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  });
  return { next: () => `${base}:${n++}:` };
}

/** A Redis server of the test's own on a free port (so a test may stop it), started again on the same port by `start()`. */
export interface PrivateRedis {
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP: Redis hangs, its connections open and unanswered. */
  pause(): void;
  /** SIGCONT: it answers again (everything it was sent meanwhile too). */
  resume(): void;
}

/** Starts a private `redis-server` (Debian's package; .ci/run installs it when absent) keeping nothing on disk; the caller stops it. */
export async function privateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      proc.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) resolve();
      });
      proc.once('error', reject);
      proc.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${out}`)));
    });
  };
  const stop = async () => {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };
  // A hung Redis: the process is stopped (its connections stay open, nothing answers) and continued.
  const signal = (sig: 'SIGSTOP' | 'SIGCONT') => {
    if (child && child.exitCode === null) child.kill(sig);
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, stop, start, pause: () => signal('SIGSTOP'), resume: () => signal('SIGCONT') };
}

/** A TCP port nothing listens on now (taken by the OS, then let go). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
