/**
 * The hold of a synchronous request survives its process: a REAL gateway is SIGKILLed while a priced
 * generateContent call waits on the vendor (a gate that never answers), so the client gets nothing
 * and the debit stays. Once the hold's expiry passes, the next process gives it back at start,
 * exactly once: the token's `used` returns, the ledger shows the refund for that request and
 * balances, and a third start gives nothing back again.
 *
 * And the settlement written off the request path (issue 41, src/quota/hold-endings.ts): a
 * gateway SIGKILLed after the answer and before the settlement's batch leaves the hold, which
 * ends at its expiry settled when the request log recorded the answer and refunded when not (the
 * cost docs/tokens-and-quota.md states); one killed after the batch leaves nothing to end.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'libsql';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { listen, type Simulator } from '../../src/sim/http.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { simulatorsFor, startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli, type Running } from '../helpers/process.js';
import { until } from '../helpers/until.js';

const MODEL = 'alpha-3-pro-image-preview';

/**
 * A channel of its own group, in front of the gate, with short timeouts and deadline so the hold's
 * lifetime (docs/tokens-and-quota.md: deadline + one backoff + the slowest call + 5 s) is 100 + 0 + 4,000 + 5,000 ms.
 */
const LIFETIME_MS = 9_100;
function writeExtraConfig(dir: string, gateUrl: string): void {
  mkdirSync(join(dir, 'channels.d'));
  writeFileSync(
    join(dir, 'channels.d', 'held.yaml'),
    `version: 1
groups:
  held:
    description: Tokens of the stranded-hold test; only the gated channel serves them.
routing: { deadline_ms: 100, backoff_max_ms: 0 }
channels:
  - name: alpha-held
    profile: alpha-native
    base_url: ${gateUrl}
    secrets: { key: held-key }
    groups: [held]
    models: [${MODEL}]
    timeouts: { connect_ms: 500, headers_ms: 3000, body_ms: 500 }
`,
  );
}

/**
 * A channel of its own group that answers (the alpha simulator). Its holds live 100 + 0 + 26,000 + 5,000 ms: the
 * three processes of the test must all have started and answered before the first of them expires, or a
 * start's own sweep would end it early (on a loaded machine a start takes seconds).
 */
function writeAnsweringChannel(dir: string, alpha: Simulator): void {
  writeFileSync(
    join(dir, 'channels.d', 'answered.yaml'),
    `version: 1
groups:
  answered:
    description: Tokens of the settlement tests; only the answering channel serves them.
channels:
  - name: alpha-answers
    profile: alpha-native
    base_url: ${alpha.url}
    secrets: ${JSON.stringify(alpha.secrets)}
    groups: [answered]
    models: [${MODEL}]
    timeouts: { connect_ms: 500, headers_ms: 25000, body_ms: 500 }
`,
  );
}

describe('a synchronous request cut off by a crash', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-holds-'));
  const db = join(dir, 'gateway.db');
  const sims = new Map<string, Simulator>();
  const running: Running[] = [];
  let gate: { url: string; close(): Promise<void> };
  let arrived: () => void = () => undefined;
  const atVendor = new Promise<void>((resolve) => (arrived = resolve));
  let env: NodeJS.ProcessEnv;
  // The test's own connections to the store file, open from the start to the end. libsql's close()
  // leaves a connection's files open until it is garbage collected; a connection opened after
  // another process had deleted and remade the -shm file then shared that closed one's old -shm
  // (SQLite keeps one per file and process) and read the database without the WAL: a debit committed
  // before the answer was not there (seen on Node 24). While this one is open, no closing process
  // removes the -wal or -shm.
  let reader: Store;
  let sqlite: Database.Database;

  before(async () => {
    reader = await openStore(db);
    sqlite = new Database(db);
    // The vendor takes the request and never answers.
    gate = await listen(async () => {
      arrived();
      await new Promise(() => undefined);
    });
    mkdirSync(join(dir, 'extra'));
    writeExtraConfig(join(dir, 'extra'), gate.url);
    const simEnv = await simulatorsFor(sims);
    writeAnsweringChannel(join(dir, 'extra'), sims.get('alpha-native')!);
    env = {
      ...simEnv,
      GATEWAY_DB: db,
      GATEWAY_CONFIG_DIR: PROJECT_ROOT,
      GATEWAY_CONFIG_EXTRA: join(dir, 'extra'),
      GATEWAY_WATCH: '0',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
    };
  });
  after(async () => {
    for (const r of running) await r.stop('SIGKILL');
    sqlite?.close();
    await reader?.close();
    await gate?.close();
    await Promise.all([...sims.values()].map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(more: NodeJS.ProcessEnv = {}): Promise<{ proc: Running; base: string }> {
    const started = await startGatewayProcess({ ...env, ...more });
    running.push(started.proc);
    return started;
  }

  /** The token's used and ledger, read from the store file. */
  async function books(tokenId: string) {
    const balance = (await reader.ledgerBalance(tokenId))!;
    const rows = (await reader.ledger(tokenId, null, 100)).map((r) => [r.kind, r.ref, r.amount]);
    return { used: balance.used, balanced: balance.debit - balance.refund - balance.settle === balance.used, rows };
  }

  /** The holds recorded in the store file. */
  function holds(): { ref: string; expires_at: number }[] {
    return rows('SELECT ref, expires_at FROM holds') as { ref: string; expires_at: number }[];
  }

  /** Rows of a query of the store file, read as another process would. */
  function rows(sql: string, ...args: unknown[]): unknown[] {
    return sqlite.prepare(sql).all(...args);
  }

  /** A token of `group`: its key and id. */
  function token(group: string, name: string): { key: string; id: string } {
    const created = runCli(['tokens', 'create', '--group', group, '--quota', '10', '--name', name], env);
    assert.equal(created.status, 0, created.stderr);
    return { key: created.stdout.trim(), id: /created token ([0-9a-f-]+)/.exec(created.stderr)![1]! };
  }

  /** A priced generateContent call answered 200; resolves with the ref of its hold (its ledger row's). */
  async function answered(base: string, t: { key: string; id: string }): Promise<string> {
    const res = await fetch(new URL(`/v1beta/models/${MODEL}:generateContent`, base), {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'a lighthouse' }] }], generationConfig: { imageConfig: { aspectRatio: '1:1' } } }),
    });
    assert.equal(res.status, 200, await res.text());
    await res.arrayBuffer().catch(() => undefined);
    const [row] = rows('SELECT ref FROM ledger WHERE token_id = ?', t.id) as { ref: string }[];
    return row!.ref;
  }

  test('is given back once its hold expires, at the next start, exactly once', { timeout: 90_000 }, async () => {
    const created = runCli(['tokens', 'create', '--group', 'held', '--quota', '10', '--name', 'held'], env);
    assert.equal(created.status, 0, created.stderr);
    const key = created.stdout.trim();
    const tokenId = /created token ([0-9a-f-]+)/.exec(created.stderr)![1]!;

    const first = await start();
    // The client waits for an answer that will never come; its connection dies with the process.
    const url = new URL(`/v1beta/models/${MODEL}:generateContent`, first.base);
    const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'a lighthouse' }] }], generationConfig: { imageConfig: { aspectRatio: '1:1' } } });
    const client = request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    const clientEnded = new Promise<string>((resolve) => {
      client.on('response', (res) => resolve(`HTTP ${res.statusCode}`));
      client.on('error', (err) => resolve(err.message));
    });
    const sentAt = Date.now();
    client.end(body);
    await atVendor;
    await first.proc.stop('SIGKILL');
    assert.match(await clientEnded, /socket hang up|ECONNRESET/, 'the client got no answer');

    const cut = await books(tokenId);
    assert.equal(cut.used, 1, 'the price (1 unit, alpha at 1K) stayed debited');
    assert.equal(cut.rows.length, 1);
    const ref = cut.rows[0]![1] as string;
    assert.deepEqual(cut.rows, [['debit', ref, 1]]);

    // The expiry is a point in time: wait for the clock to pass it, then start again.
    await delay(sentAt + LIFETIME_MS + 100 - Date.now());
    const second = await start();
    const back = await books(tokenId);
    assert.equal(back.used, 0, 'the price went back at the start');
    assert.deepEqual(
      back.rows,
      [
        ['debit', ref, 1],
        ['refund', ref, 1],
      ],
      'the ledger shows the refund of that request',
    );
    assert.ok(back.balanced, 'and balances');
    assert.match(second.proc.output(), /"holds":1[^\n]*"msg":"ended expired holds"/);
    assert.deepEqual(holds(), [], 'no hold is left');
    await second.proc.stop('SIGTERM');

    const third = await start();
    await third.proc.stop('SIGTERM');
    assert.doesNotMatch(third.proc.output(), /gave back|expired holds/, 'nothing is given back twice');
    assert.deepEqual((await books(tokenId)).rows, back.rows);
  });

  test('answered, then killed before its settlement was written: settled at expiry if the request log has the answer, refunded if not; killed after it: nothing to end', {
    timeout: 120_000,
  }, async () => {
    const logged = token('answered', 'logged');
    const unlogged = token('answered', 'unlogged');
    const written = token('answered', 'written');

    // A settlement that cannot be written for a minute; the request log's batch is written within its second.
    const a = await start({ GATEWAY_SETTLE_FLUSH_MS: '60000' });
    const refA = await answered(a.base, logged);
    await until('the request log has the answer', () => rows('SELECT id FROM requests WHERE id = ? AND status = 200', refA).length === 1);
    await a.proc.stop('SIGKILL');

    // No request log: nothing but the hold says the request was answered.
    const b = await start({ GATEWAY_SETTLE_FLUSH_MS: '60000', GATEWAY_REQUEST_LOG_DAYS: '0' });
    const refB = await answered(b.base, unlogged);
    await b.proc.stop('SIGKILL');

    // The default: the settlement is written within GATEWAY_SETTLE_FLUSH_MS (200 ms) of the answer.
    const c = await start();
    const refC = await answered(c.base, written);
    await until('the settlement is written', () => !holds().some((h) => h.ref === refC));
    await c.proc.stop('SIGKILL');

    assert.deepEqual(
      holds()
        .map((h) => h.ref)
        .sort(),
      [refA, refB].sort(),
      'the killed settlements left their holds',
    );
    for (const t of [logged, unlogged, written]) assert.equal((await books(t.id)).used, 1, 'each answered request is charged meanwhile');

    // Expiry is a point in time each hold records: wait for the clock to pass the last.
    await delay(Math.max(...holds().map((h) => h.expires_at)) + 100 - Date.now());
    const d = await start();
    assert.match(d.proc.output(), /"holds":2[^\n]*"msg":"ended expired holds"/);
    assert.match(d.proc.output(), new RegExp(`"ref":"${refA}"[^\\n]*"msg":"settled the hold of a request the request log has answered"`));
    assert.match(d.proc.output(), new RegExp(`"ref":"${refB}"[^\\n]*"msg":"gave back the hold of a request that never finished"`));
    assert.deepEqual(holds(), [], 'no hold is left');
    const [bookA, bookB, bookC] = [await books(logged.id), await books(unlogged.id), await books(written.id)];
    assert.deepEqual([bookA.used, bookA.rows], [1, [['debit', refA, 1]]], 'settled from the request log: charged once, nothing moved');
    assert.deepEqual(
      [bookB.used, bookB.rows],
      [
        0,
        [
          ['debit', refB, 1],
          ['refund', refB, 1],
        ],
      ],
      'nothing recorded its answer: refunded once (the cost of a crash)',
    );
    assert.deepEqual([bookC.used, bookC.rows], [1, [['debit', refC, 1]]], 'settled before the crash: nothing to end');
    assert.ok(bookA.balanced && bookB.balanced && bookC.balanced, 'every ledger balances');
    await d.proc.stop('SIGTERM');

    const e = await start();
    await e.proc.stop('SIGTERM');
    assert.doesNotMatch(e.proc.output(), /gave back|settled the hold|expired holds/, 'nothing ends twice');
    assert.deepEqual((await books(unlogged.id)).rows, bookB.rows);
  });
});
