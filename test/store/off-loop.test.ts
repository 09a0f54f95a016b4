/**
 * Nothing slow on the event loop (issue 41, item 2): a REAL gateway on the embedded store, traced
 * by strace thread by thread while it answers priced requests (a hold, a settlement and a
 * request-log record each), makes no fsync, fdatasync or pwrite64 on the store's files (the
 * database, its -wal and -shm) from its main thread, from start to stop: SQLite's
 * writes and syncs are all on the store's thread (src/store/sqlite/store-thread.ts). The same
 * trace of a gateway with GATEWAY_STORE_THREAD=0 finds them on the main thread, so the test can
 * tell. strace is a Debian package `.ci/run` installs; where it is missing the test skips, except
 * under CI=true.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Simulator } from '../../src/sim/http.js';
import { ALPHA_BODY, ALPHA_PATH } from '../helpers/console-session.js';
import { simulatorsFor } from '../helpers/gateway-process.js';
import { CLI, runCli, startProcess } from '../helpers/process.js';
import { until } from '../helpers/until.js';
import { skipReason } from '../helpers/skip-reason.js';

const SYSCALLS = ['fsync', 'fdatasync', 'pwrite64'];
const ADMIN = 'off-loop-admin-key-0123456789';

function straceMissing(): string | null {
  if (spawnSync('strace', ['-V']).status === 0) return null;
  return skipReason('strace is not installed (apt-get install strace); the event-loop trace is skipped');
}

const missing = straceMissing();

describe('the embedded store off the event loop', { skip: missing ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-off-loop-'));
  const sims = new Map<string, Simulator>();
  let env: NodeJS.ProcessEnv;

  before(async () => {
    env = {
      ...process.env,
      ...(await simulatorsFor(sims)),
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_WATCH: '0',
      GATEWAY_ADMIN_KEY: ADMIN,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
    };
  });
  after(async () => {
    await Promise.all([...sims.values()].map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Starts a gateway under strace on a store of its own, sends `count` priced requests, waits for
   * their settlements and request-log records to be written, stops it, and counts the traced calls
   * of its main thread and of its other threads.
   */
  async function traced(name: string, more: NodeJS.ProcessEnv, count: number): Promise<{ main: Map<string, number>; others: Map<string, number> }> {
    const db = join(dir, `${name}.db`);
    const trace = join(dir, `${name}.trace`);
    const runEnv = { ...env, GATEWAY_DB: db, ...more };
    const created = runCli(['tokens', 'create', '--group', 'default', '--name', name, '--quota', String(count * 10)], runEnv);
    assert.equal(created.status, 0, created.stderr);
    const key = created.stdout.trim();
    const proc = startProcess('strace', ['-f', '-qq', '-y', '-e', `trace=${SYSCALLS.join(',')}`, '-o', trace, process.execPath, CLI, 'start'], {
      cwd: PROJECT_ROOT,
      env: runEnv,
    });
    // The gateway, strace's child: killed with it whatever happens (strace's death would leave it running).
    let gateway = 0;
    try {
      const [, base] = await proc.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"gateway listening"/, 60_000);
      // strace's child is the gateway; its pid is the main thread's id.
      gateway = Number(readFileSync(`/proc/${proc.child.pid}/task/${proc.child.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
      assert.ok(gateway > 0, 'the gateway runs under strace');
      for (let i = 0; i < count; i++) {
        const res = await fetch(base + ALPHA_PATH, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(ALPHA_BODY),
        });
        const text = await res.text();
        assert.equal(res.status, 200, text);
      }
      // Every request-log record written, and with them the settlements (their batch waits less):
      // what the admin API reads back from the store.
      await until(`the ${count} request-log records to be written`, async () => {
        const res = await fetch(`${base}/admin/requests?limit=${count}`, { headers: { authorization: `Bearer ${ADMIN}` } });
        const page = (await res.json()) as { requests: { status: number }[] };
        return page.requests.filter((r) => r.status === 200).length >= count;
      });
      const exited = new Promise((resolve) => proc.child.once('exit', resolve));
      process.kill(gateway, 'SIGTERM');
      await exited;
      const main = new Map<string, number>();
      const others = new Map<string, number>();
      for (const line of readFileSync(trace, 'utf8').split('\n')) {
        // `-y` names each descriptor's file: the store's are the database, its -wal and its -shm.
        const m = /^(\d+)\s+(\w+)\(\d+<([^>]*)>/.exec(line);
        if (!m || !SYSCALLS.includes(m[2]!) || !m[3]!.startsWith(db)) continue;
        const counts = Number(m[1]) === gateway ? main : others;
        counts.set(m[2]!, (counts.get(m[2]!) ?? 0) + 1);
      }
      return { main, others };
    } finally {
      if (gateway > 0 && proc.child.exitCode === null) process.kill(gateway, 'SIGKILL');
      await proc.stop('SIGKILL');
    }
  }

  test('priced requests answered with the store on its thread: no fsync, fdatasync or pwrite64 on the main thread; with GATEWAY_STORE_THREAD=0 there are', {
    timeout: 180_000,
  }, async () => {
    const threaded = await traced('threaded', {}, 100);
    assert.deepEqual(Object.fromEntries(threaded.main), {}, 'the main thread wrote and synced nothing');
    assert.ok((threaded.others.get('pwrite64') ?? 0) > 0, `the store's thread wrote the WAL (${JSON.stringify(Object.fromEntries(threaded.others))})`);

    const onLoop = await traced('on-loop', { GATEWAY_STORE_THREAD: '0' }, 100);
    assert.ok((onLoop.main.get('pwrite64') ?? 0) > 0, `on the loop, the main thread writes the WAL (${JSON.stringify(Object.fromEntries(onLoop.main))})`);
  });
});
