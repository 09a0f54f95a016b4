/**
 * The hold of a synchronous request survives its process: a REAL gateway is SIGKILLed while a priced
 * generateContent call waits on the vendor (a gate that never answers), so the client gets nothing
 * and the debit stays. Once the hold's expiry passes, the next process gives it back at start,
 * exactly once: the token's `used` returns, the ledger shows the refund for that request and
 * balances, and a third start gives nothing back again.
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
import { simulatorsFor, startGatewayProcess } from '../helpers/gateway-process.js';
import { runCli, type Running } from '../helpers/process.js';

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

describe('a synchronous request cut off by a crash', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-holds-'));
  const db = join(dir, 'gateway.db');
  const sims = new Map<string, Simulator>();
  const running: Running[] = [];
  let gate: { url: string; close(): Promise<void> };
  let arrived: () => void = () => undefined;
  const atVendor = new Promise<void>((resolve) => (arrived = resolve));
  let env: NodeJS.ProcessEnv;

  before(async () => {
    // The vendor takes the request and never answers.
    gate = await listen(async () => {
      arrived();
      await new Promise(() => undefined);
    });
    mkdirSync(join(dir, 'extra'));
    writeExtraConfig(join(dir, 'extra'), gate.url);
    env = {
      ...(await simulatorsFor(sims)),
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
    await gate?.close();
    await Promise.all([...sims.values()].map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(): Promise<{ proc: Running; base: string }> {
    const started = await startGatewayProcess(env);
    running.push(started.proc);
    return started;
  }

  /** The token's used and ledger, and the holds still recorded, read from the store file. */
  async function books(tokenId: string) {
    const store = await openStore(db);
    try {
      const balance = (await store.ledgerBalance(tokenId))!;
      const rows = (await store.ledger(tokenId, null, 100)).map((r) => [r.kind, r.ref, r.amount]);
      return { used: balance.used, balanced: balance.debit - balance.refund - balance.settle === balance.used, rows };
    } finally {
      await store.close();
    }
  }

  /** The holds recorded in the store file. */
  function holds(): { ref: string; expires_at: number }[] {
    const sqlite = new Database(db);
    try {
      return sqlite.prepare('SELECT ref, expires_at FROM holds').all() as { ref: string; expires_at: number }[];
    } finally {
      sqlite.close();
    }
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
    assert.match(second.proc.output(), /"holds":1[^\n]*"msg":"gave back expired holds"/);
    assert.deepEqual(holds(), [], 'no hold is left');
    await second.proc.stop('SIGTERM');

    const third = await start();
    await third.proc.stop('SIGTERM');
    assert.doesNotMatch(third.proc.output(), /gave back/, 'nothing is given back twice');
    assert.deepEqual((await books(tokenId)).rows, back.rows);
  });
});
