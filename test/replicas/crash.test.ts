/**
 * Crash safety of tasks with a REAL gateway process: the simulators run in this test process (so
 * they outlive the gateway), `gateway start` points every channel of channels.yaml at them, ~30
 * tasks are submitted, the gateway is SIGKILLed right after the last id arrives, and a new process
 * on the same GATEWAY_DB must bring every id a client received to its terminal state: completed
 * with the vendor's bytes, or failed as the prompt asked, with failed ones refunded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Simulator } from '../../src/sim/http.js';
import { openStore } from '../../src/store/open-store.js';
import type { TaskRecord } from '../../src/store/store.js';
import { simulatorsFor, startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli, type Running } from '../helpers/process.js';

const FINISH_MS = 1500;
const TASKS = 30;
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** fetch with a bound: no request may hang the test. */
const http = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });

interface Sent {
  readonly id: string;
  readonly prompt: string;
  /** The reason the vendor is asked to fail with, or null for a task that completes. */
  readonly failWith: string | null;
}

describe('a gateway process killed with tasks in flight', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-crash-'));
  const db = join(dir, 'gateway.db');
  const sims = new Map<string, Simulator>();
  let env: NodeJS.ProcessEnv;
  const running: Running[] = [];

  before(async () => {
    env = {
      ...(await simulatorsFor(sims, { finishMs: FINISH_MS })),
      GATEWAY_DB: db,
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_DEMO_KEY: 'gw-not-used-by-start',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
    };
    delete env.GATEWAY_PUBLIC_URL;
  });
  after(async () => {
    for (const r of running) await r.stop('SIGKILL');
    await Promise.all([...sims.values()].map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function startGateway(): Promise<{ proc: Running; base: string }> {
    const started = await startGatewayProcess(env);
    running.push(started.proc);
    return started;
  }

  /** Reads task records straight from the store file (WAL lets a second process read it). */
  async function records(ids: readonly string[]): Promise<Map<string, TaskRecord>> {
    const store = await openStore(db);
    try {
      return new Map((await store.getTasks(ids)).map((t) => [t.id, t]));
    } finally {
      await store.close();
    }
  }

  test('every id a client received ends completed (vendor bytes) or failed as asked; failed ones are refunded', { timeout: 120_000 }, async (t) => {
    const zeta = sims.get('zeta-openai');
    assert.ok(zeta, 'channels.yaml has a zeta-openai channel (epsilon-video)');

    const created = runCli(['tokens', 'create', '--group', 'default', '--quota', '1000', '--name', 'crash'], env);
    assert.equal(created.status, 0, created.stderr);
    const key = created.stdout.trim();
    assert.match(key, /^gw-[A-Za-z0-9_-]{43}$/);

    const first = await startGateway();
    const auth = { authorization: `Bearer ${key}` };

    // ~30 submissions at once, over both submit routes and both body types; every fourth fails.
    const started = Date.now();
    const sent = await Promise.all(
      Array.from({ length: TASKS }, async (_, i): Promise<Sent> => {
        const failWith = i % 4 === 3 ? `crash_fail_${i}` : null;
        const prompt = `crash task ${i} ${failWith ? `[sim:fail=${failWith}]` : `[sim:finish=${FINISH_MS}]`}`;
        let res: Response;
        if (i % 3 === 2) {
          const form = new FormData();
          for (const [k, v] of Object.entries({ model: 'epsilon-video-3', prompt, seconds: '4', size: '1280x720' })) form.append(k, v);
          res = await http(`${first.base}/v1/videos`, { method: 'POST', headers: auth, body: form });
        } else {
          res = await http(`${first.base}${i % 3 === 0 ? '/v1/video/generations' : '/v1/videos'}`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'epsilon-video-3', prompt, seconds: '4', size: '1280x720' }),
          });
        }
        const text = await res.text();
        assert.equal(res.status, 200, `submission ${i}: ${text}`);
        const id = (JSON.parse(text) as { id: string }).id;
        assert.match(id, /^task_[A-Za-z0-9_-]{24}$/);
        return { id, prompt, failWith };
      }),
    );
    // Right after the last id arrived: no graceful anything.
    await first.proc.stop('SIGKILL');
    const killedAfter = Date.now() - started;
    assert.equal(first.proc.child.signalCode, 'SIGKILL');
    assert.equal(new Set(sent.map((s) => s.id)).size, TASKS, 'distinct ids');
    assert.equal(zeta.stats.submits, TASKS, 'the vendor accepted each task once');

    // Every id the clients hold was written before it left; none had ended when the process died.
    const atCrash = await records(sent.map((s) => s.id));
    assert.equal(atCrash.size, TASKS, 'every received id is in the store after SIGKILL');
    const unfinished = [...atCrash.values()].filter((t) => t.status === 'queued' || t.status === 'in_progress');
    for (const t of atCrash.values()) assert.ok(t.upstreamId, `task ${t.id} has its vendor id`);
    t.diagnostic(`SIGKILL ${killedAfter} ms after the first submission; ${unfinished.length} of ${TASKS} tasks unfinished in the store`);
    if (killedAfter < FINISH_MS) assert.equal(unfinished.length, TASKS, `killed ${killedAfter} ms after the first submission, before any vendor finished`);

    // A new process on the same file resumes them.
    const second = await startGateway();
    if (unfinished.length > 0) {
      const [, resumed] = await second.proc.waitFor(/"tasks":(\d+)[^\n]*"msg":"resumed unfinished tasks"/, 5_000);
      assert.equal(Number(resumed), unfinished.length, 'the restart resumed exactly the unfinished tasks');
    }

    // The background poller alone ends them (no client query refreshes them here): the resume
    // spreads over one poll interval (5 s by default), so allow 30 s, looking every 250 ms.
    let now = atCrash;
    for (let i = 0; i < 120; i++) {
      now = await records(sent.map((s) => s.id));
      if ([...now.values()].every((t) => t.status === 'completed' || t.status === 'failed')) break;
      await tick(250);
    }
    const stuck = [...now.values()].filter((t) => t.status !== 'completed' && t.status !== 'failed');
    assert.deepEqual(
      stuck.map((t) => `${t.id}:${t.status}`),
      [],
      'the resumed poller ended every task',
    );

    // Through the HTTP API: every id, its terminal state, the bytes of each completed one.
    let completed = 0;
    for (const s of sent) {
      const rec = now.get(s.id)!;
      let task: any;
      for (let i = 0; i < 40; i++) {
        const r = await http(`${second.base}/v1/videos/${s.id}`, { headers: auth });
        assert.equal(r.status, 200, `query of ${s.id}`);
        task = await r.json();
        if (task.status === 'completed' || task.status === 'failed') break;
        await tick(250);
      }
      assert.equal(task.id, s.id);
      if (s.failWith) {
        assert.equal(task.status, 'failed', `${s.prompt}: ${JSON.stringify(task)}`);
        assert.equal(task.error?.code, s.failWith, `${s.prompt}: the vendor's reason`);
        const dl = await http(`${second.base}/v1/videos/${s.id}/content`, { headers: auth });
        assert.equal(dl.status, 409, `a failed task has nothing to download: ${s.prompt}`);
        await dl.arrayBuffer();
      } else {
        assert.equal(task.status, 'completed', `${s.prompt}: ${JSON.stringify(task)}`);
        assert.equal(task.progress, 100);
        const dl = await http(`${second.base}/v1/videos/${s.id}/content`, { headers: auth });
        assert.equal(dl.status, 200, `download of ${s.prompt}`);
        const bytes = Buffer.from(await dl.arrayBuffer());
        const expected = zeta.result!(rec.upstreamId!);
        assert.ok(expected, `the vendor finished ${rec.upstreamId}`);
        assert.ok(bytes.equals(expected), `${s.prompt}: the downloaded bytes are the vendor's`);
        completed++;
      }
    }
    t.diagnostic(`${completed} completed, ${TASKS - completed} failed`);
    assert.equal(completed, sent.filter((s) => !s.failWith).length);
    assert.equal(zeta.stats.submits, TASKS, 'the restart submitted nothing again');

    // The price of each completed task stays charged; each failed one went back.
    const listed = runCli(['tokens', 'list'], env);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`crash {2}group=default {2}quota=1000 {2}used=${completed}\\b`), listed.stdout);
    for (const s of sent) {
      const rec = now.get(s.id)!;
      assert.equal(rec.refunded, s.failWith !== null, `${s.prompt}: refunded only when failed`);
    }

    assert.equal(await second.proc.stop('SIGTERM'), 0, 'the second process stops cleanly');
  });
});
