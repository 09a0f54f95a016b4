/**
 * Tasks whose submission a crash cut off (docs/deploying.md, "Tasks cut off by a crash"): a real gateway
 * process is killed after the vendor created the task but before its answer was recorded; the
 * next process adopts the task where the profile can find it by the reference we sent
 * (lambda-native: our id as external_task_id), and elsewhere (zeta-openai) fails it, refunds it
 * once and logs a possible orphan.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { listen, type Simulator } from '../../src/sim/http.js';
import { openStore } from '../../src/store/open-store.js';
import type { TaskRecord } from '../../src/store/store.js';
import { simulatorsFor, startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli, type Running } from '../helpers/process.js';
import { until } from '../helpers/until.js';

/**
 * Channels of their own group, each in front of a gate, with short timeouts and deadline: a record
 * is cut off (docs/deploying.md) 100 + 0 + (500 + 2,000 + 500) + 5,000 ms after it was written.
 */
function writeExtraConfig(dir: string, gates: { lambda: string; zeta: string }, secrets: { lambda: Simulator; zeta: Simulator }): void {
  mkdirSync(join(dir, 'channels.d'), { recursive: true });
  writeFileSync(
    join(dir, 'channels.d', 'cut.yaml'),
    `version: 1
groups:
  cut:
    description: Tokens of the cut-off test; only the gated channels serve them.
routing: { deadline_ms: 100, backoff_max_ms: 0 }
channels:
  - name: lambda-cut
    profile: lambda-native
    base_url: ${gates.lambda}
    secrets: { access_key: "${secrets.lambda.secrets.access_key}", secret_key: "${secrets.lambda.secrets.secret_key}" }
    groups: [cut]
    models: [lambda-3.0]
    timeouts: { connect_ms: 500, headers_ms: 2000, body_ms: 500 }
  - name: zeta-cut
    profile: zeta-openai
    base_url: ${gates.zeta}
    secrets: { key: "${secrets.zeta.secrets.key}" }
    groups: [cut]
    models: [epsilon-video-3]
    timeouts: { connect_ms: 500, headers_ms: 2000, body_ms: 500 }
`,
  );
}

describe('a task submission cut off by a crash', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-cut-'));
  const db = join(dir, 'gateway.db');
  const sims = new Map<string, Simulator>();
  const running: Running[] = [];
  const gates: { url: string; close(): Promise<void> }[] = [];
  let env: NodeJS.ProcessEnv;
  /** While true, a gate passes a submission to its vendor, then never answers the gateway. */
  let cutting = true;
  const created = new Set<string>();

  /** A gate in front of `sim`: everything passes, except that a cut submission's answer never comes back. */
  async function gate(sim: Simulator): Promise<string> {
    const g = await listen(async (req, res, body, url) => {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k))) as Record<
        string,
        string
      >;
      const answer = await fetch(`${sim.url}${url.pathname}${url.search}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : body });
      const bytes = Buffer.from(await answer.arrayBuffer());
      if (cutting && req.method === 'POST') {
        created.add(sim.profile);
        return new Promise(() => undefined);
      }
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(bytes);
    });
    gates.push(g);
    return g.url;
  }

  before(async () => {
    env = {
      ...(await simulatorsFor(sims, { finishMs: 300 })),
      GATEWAY_DB: db,
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_CONFIG_EXTRA: join(dir, 'extra'),
      GATEWAY_WATCH: '0',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
    };
    const lambda = sims.get('lambda-native')!;
    const zeta = sims.get('zeta-openai')!;
    writeExtraConfig(join(dir, 'extra'), { lambda: await gate(lambda), zeta: await gate(zeta) }, { lambda, zeta });
  });
  after(async () => {
    for (const r of running) await r.stop('SIGKILL');
    for (const g of gates) await g.close();
    await Promise.all([...sims.values()].map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function books(tokenId: string): Promise<{ used: number; balanced: boolean; rows: [string, string, number][]; tasks: TaskRecord[] }> {
    const store = await openStore(db);
    try {
      const balance = (await store.ledgerBalance(tokenId))!;
      const rows = (await store.ledger(tokenId, null, 100)).map((r): [string, string, number] => [r.kind, r.ref, r.amount]);
      const tasks = await store.getTasks([...new Set(rows.map((r) => r[1]))]);
      return { used: balance.used, balanced: balance.debit - balance.refund - balance.settle === balance.used, rows, tasks };
    } finally {
      await store.close();
    }
  }

  test('lambda-native: adopted by the next process through our id, completed and charged once; zeta-openai: failed, refunded once, logged as a possible orphan', {
    timeout: 60_000,
  }, async () => {
    const made = runCli(['tokens', 'create', '--group', 'cut', '--quota', '100'], env);
    assert.equal(made.status, 0, made.stderr);
    const key = made.stdout.trim();
    const tokenId = /created token (\S+)/.exec(made.stderr)![1]!;

    const first = await startGatewayProcess(env);
    running.push(first.proc);
    const submit = (model: string) =>
      fetch(`${first.base}/v1/videos`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, prompt: 'cut off', seconds: '4', size: '1280x720' }),
      }).catch(() => null);
    const answers = [submit('lambda-3.0'), submit('epsilon-video-3')];
    await until('both vendors to have created their task', () => created.size === 2);
    await first.proc.stop('SIGKILL');
    assert.deepEqual(await Promise.all(answers), [null, null], 'no client ever got an id');
    const lambda = sims.get('lambda-native')!;
    assert.equal(lambda.stats.submits, 1);

    const atCrash = await books(tokenId);
    assert.deepEqual(atCrash.tasks.map((t) => t.status).sort(), ['submitting', 'submitting']);
    assert.equal(atCrash.used, 2, 'both were debited before the vendor was asked');

    cutting = false;
    const second = await startGatewayProcess(env);
    running.push(second.proc);
    const ended = await until(
      'both records to end',
      async () => {
        const b = await books(tokenId);
        return b.tasks.every((t) => t.status === 'completed' || t.status === 'failed') ? b : null;
      },
      40_000,
    );
    const byChannel = new Map(ended.tasks.map((t) => [t.channel, t]));
    const adopted = byChannel.get('lambda-cut')!;
    const failed = byChannel.get('zeta-cut')!;

    assert.equal(adopted.status, 'completed', JSON.stringify(adopted));
    assert.equal(lambda.tasks!.get(adopted.upstreamId!)?.kind, 'text2video', "the record took the vendor's id of the task it had made");
    assert.equal(lambda.stats.submits, 1, 'found, not submitted again');
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, 'submission_interrupted');
    assert.equal(failed.upstreamId, null);

    assert.ok(ended.balanced, 'the ledger balances');
    const refunds = ended.rows.filter(([kind]) => kind === 'refund');
    assert.deepEqual(
      refunds.map(([, ref]) => ref),
      [failed.id],
      'only the unadoptable task was refunded, once',
    );
    const moves = (kind: string) => ended.rows.filter(([k, ref]) => k === kind && ref === adopted.id).map(([, , amount]) => amount);
    assert.equal(moves('debit').length, 1, 'the adopted task was debited once');
    assert.equal(ended.used, moves('debit')[0]! - moves('settle').reduce((a, b) => a + b, 0), 'what is used is what the adopted task cost');

    // Info lines are written in batches, within 100 ms (src/log.ts): the adoption's may trail its write.
    const adoptedLine = new RegExp(`"task":"${adopted.id}"[^\\n]*"msg":"adopted a task whose submission was cut off`);
    await until('the adoption to be logged', () => adoptedLine.test(second.proc.output()), 5_000);
    const log = second.proc.output();
    assert.match(
      log,
      new RegExp(`"task":"${failed.id}"[^\\n]*"msg":"a submission cut off by a crash was failed and refunded; the vendor may have created the task`),
    );
  });
});
