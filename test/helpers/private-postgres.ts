import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from './services.js';
import { faultProxy, type FaultProxy } from './tcp-proxy.js';

/** Debian's PostgreSQL 15 server binaries (`postgresql-15`); the version CI's shared server runs. */
const PG_BIN = '/usr/lib/postgresql/15/bin';
const INITDB = join(PG_BIN, 'initdb');
const PG_CTL = join(PG_BIN, 'pg_ctl');
/** Where util-linux's `runuser` lives on Debian (usrmerge or not). */
const RUNUSER = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find((p) => existsSync(p)) ?? null;
/** Every external command gets this long; pg_ctl's own `-t` is shorter so it reports first, with its reason. */
const COMMAND_TIMEOUT_MS = 60_000;
const PG_CTL_WAIT_S = 50;

/** A PostgreSQL 15 cluster of the test's own on a free port (so a test may stop it), in a temporary directory. */
export interface PrivatePostgres {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  readonly url: string;
  /** pg_ctl stop -m MODE -w (fast: clients are disconnected cleanly; immediate: the server dies as on a crash, recovery at next start). */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** pg_ctl start -w on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server (immediate) if running and removes the directory. Safe to call twice. */
  destroy(): Promise<void>;
}

/** Whether this machine can run one (the initdb binary exists and runuser exists); tests skip with a message otherwise (CI must have it). */
export function canRunPrivatePostgres(): boolean {
  if (!existsSync(INITDB) || !existsSync(PG_CTL)) return false;
  // Only root needs to change user: initdb and postgres refuse to run as root.
  return !isRoot() || (RUNUSER !== null && postgresUser() !== null);
}

/**
 * Creates a cluster (initdb, trust authentication, superuser `postgres`) and starts it, listening on
 * 127.0.0.1 and on a Unix socket in its own directory; the caller destroys it. Slow-ish: about a
 * second for initdb and a fraction for the start, so make one per test file, not per test.
 */
export async function privatePostgres(): Promise<PrivatePostgres> {
  if (!canRunPrivatePostgres()) throw new Error(`cannot run a private PostgreSQL here: needs ${INITDB}${isRoot() ? ', runuser and a postgres user' : ''}`);
  const dir = await mkdtemp(join(tmpdir(), 'gw-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'log');
  const owner = isRoot() ? postgresUser() : null;
  if (owner) await chown(dir, owner.uid, owner.gid);
  const port = await freePort();
  let running = false;

  /** Runs a PostgreSQL binary as the cluster's owner; failures carry the command's output and the server log's tail. */
  const pgRun = async (what: string, bin: string, args: string[]) => {
    const [file, argv] = owner ? [RUNUSER!, ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
    try {
      await run(file, argv, dir);
    } catch (err) {
      const e = err as Error & { stdout?: string; stderr?: string };
      throw new Error(
        `private PostgreSQL (${dir}, port ${port}): ${what} failed: ${e.message.split('\n')[0]}\n` +
          `${e.stdout ?? ''}${e.stderr ?? ''}\n--- ${log}, last lines ---\n${await logTail(log)}`,
        { cause: err },
      );
    }
  };

  const start = async () => {
    // -o goes through pg_ctl's `sh -c`, hence the quotes around the directory; -p, -k and
    // listen_addresses here (not in postgresql.conf) keep initdb's defaults untouched otherwise.
    const options = `-p ${port} -k '${dir}' -c listen_addresses=127.0.0.1 -c fsync=off`;
    await pgRun('pg_ctl start', PG_CTL, ['-D', data, '-o', options, '-l', log, '-w', '-t', String(PG_CTL_WAIT_S), 'start']);
    running = true;
  };
  const stop = async (mode: 'fast' | 'immediate') => {
    await pgRun(`pg_ctl stop -m ${mode}`, PG_CTL, ['-D', data, '-m', mode, '-w', '-t', String(PG_CTL_WAIT_S), 'stop']);
    running = false;
  };

  const live = { data, dir };
  let destroying: Promise<void> | null = null;
  const destroy = () =>
    (destroying ??= (async () => {
      // `running` can be stale if a stop failed half-way; the pid file is what pg_ctl goes by.
      if (running || existsSync(join(data, 'postmaster.pid'))) await stop('immediate');
      alive.delete(live);
      await rm(dir, { recursive: true, force: true });
    })().catch((err: unknown) => {
      // Left in place (a server may still run in it) and `destroy()` may be tried again.
      destroying = null;
      throw err;
    }));

  alive.add(live);
  try {
    await pgRun('initdb', INITDB, ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '-N']);
    await start();
  } catch (err) {
    await destroy().catch(() => undefined);
    throw err;
  }
  return { port, url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop, start, destroy };
}

/** Clusters not destroyed yet, for the exit hook below. */
const alive = new Set<{ data: string; dir: string }>();
// A test file that dies before its `after` hooks run would leave a postmaster running for good:
// pg_ctl detaches it. On the way out (synchronous code only), SIGQUIT it (PostgreSQL's immediate
// shutdown) and remove what can be removed.
process.once('exit', () => {
  for (const { data, dir } of alive) {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGQUIT');
    } catch {
      // no pid file: not running
    }
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // a dying server may still be writing in it; /tmp is cleaned eventually
    }
  }
});

/** execFile as a promise, bounded, with a clean environment; rejects with `stdout` and `stderr` attached. */
function run(file: string, args: string[], cwd: string): Promise<void> {
  // PG* variables of the caller's (PGPORT, PGDATA, PGHOST...) must not steer this cluster; cwd is the
  // cluster directory because the postgres user may not be able to enter the caller's.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PG')));
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env, timeout: COMMAND_TIMEOUT_MS, encoding: 'utf8', maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { stdout, stderr }));
      else resolve();
    });
  });
}

/** The last lines of the server log, or why there are none. */
async function logTail(path: string, lines = 30): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch (err) {
    return `(no log: ${(err as Error).message})`;
  }
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

let postgresIds: { uid: number; gid: number } | null | undefined;
/** The `postgres` user's uid and gid (from NSS, as `getent` sees it), or null if there is none. */
function postgresUser(): { uid: number; gid: number } | null {
  if (postgresIds !== undefined) return postgresIds;
  try {
    const fields = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8', timeout: 5_000 }).split(':');
    const uid = Number(fields[2]);
    const gid = Number(fields[3]);
    postgresIds = Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
  } catch {
    postgresIds = null;
  }
  return postgresIds;
}

/**
 * Whether a test file can start a PostgreSQL of its own; when it cannot, a test says why, skipped,
 * or failing with `CI=true` (CI has the binaries: these tests must run there).
 */
export function privatePostgresOrSkip(what: string): boolean {
  if (canRunPrivatePostgres()) return true;
  const why = 'needs PostgreSQL 15 server binaries (/usr/lib/postgresql/15/bin, Debian package postgresql-15) and, as root, runuser and a postgres user';
  if (process.env.CI === 'true')
    test(`${what}: a PostgreSQL of the test's own can run`, () => assert.fail(`CI=true: these tests must run in CI, not skip; ${why}`));
  else test(what, { skip: why }, () => undefined);
  return false;
}

/**
 * A PostgreSQL of the enclosing suite's own behind a fault proxy (./tcp-proxy.ts): started before its
 * tests, both gone after. Read `server` and `proxy` once the suite's tests (or later hooks) run.
 */
export function postgresBehindProxy(): { readonly server: PrivatePostgres; readonly proxy: FaultProxy } {
  let server: PrivatePostgres | undefined;
  let proxy: FaultProxy | undefined;
  before(async () => {
    server = await privatePostgres();
    proxy = await faultProxy(server.port);
  });
  after(async () => {
    await proxy?.close();
    await server?.destroy();
  });
  return {
    get server() {
      return server!;
    },
    get proxy() {
      return proxy!;
    },
  };
}
