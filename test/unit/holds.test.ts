/**
 * Holds of synchronous requests (docs/tokens-and-quota.md, "When the quota moves"): what a settle or refund
 * does to the store once written, a request that outlives its hold is charged again, the sweep
 * gives back exactly the expired ones, and the lifetime covers every bound of the request.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CompiledOperation, RetryPolicy } from '../../src/config/snapshot.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { holdPrice } from '../../src/quota/account.js';
import { HoldEndings } from '../../src/quota/hold-endings.js';
import { holdLifetimeMs } from '../../src/quota/hold-expiry.js';
import { sweepExpiredHolds } from '../../src/quota/hold-sweep.js';
import type { ChannelChoice } from '../../src/routing/rank-channels.js';
import { openStore } from '../../src/store/open-store.js';

const log = silentLogger();

/** Endings written only when the test flushes them. */
const endingsOf = (store: Awaited<ReturnType<typeof openStore>>) =>
  new HoldEndings({ write: (e) => store.endHolds(e), log, metrics: new Metrics(), flushMs: 60_000 });

test('settle keeps the charge, refund gives it back, and only the first of them counts', async () => {
  const store = await openStore(':memory:');
  const endings = endingsOf(store);
  const t = await store.createToken({ name: 't', keyHash: 'k', group: 'default', models: null, quota: 10 });
  const a = await holdPrice(store, endings, t, 3, { ref: 'a', model: 'm', expiresAt: Date.now() + 60_000 });
  const b = await holdPrice(store, endings, t, 2, { ref: 'b', model: 'm', expiresAt: Date.now() + 60_000 });
  a.settle();
  a.refund();
  b.refund();
  b.settle();
  assert.equal(endings.held, 2, 'one ending each');
  await endings.close();
  assert.equal((await store.getToken(t.id))?.used, 3);
  assert.equal(await sweepExpiredHolds(store, log, Number.MAX_SAFE_INTEGER), 0, 'no hold is left behind');
  await store.close();
});

test('a request served after the sweep gave its hold back is charged again: the ledger shows both and balances', async () => {
  const store = await openStore(':memory:');
  const endings = endingsOf(store);
  const t = await store.createToken({ name: 't', keyHash: 'k', group: 'default', models: null, quota: 4 });
  const late = await holdPrice(store, endings, t, 4, { ref: 'late', model: 'm', expiresAt: 1_000 });
  const alive = await holdPrice(store, endings, { ...t, quota: null }, 0, { ref: 'free', model: 'm', expiresAt: 1_000 });
  assert.equal(await sweepExpiredHolds(store, log, 1_000), 1);
  assert.equal((await store.getToken(t.id))?.used, 0);
  late.settle();
  alive.settle();
  assert.equal(endings.held, 1, 'a free request holds nothing, so ends nothing');
  await endings.close();
  assert.equal((await store.getToken(t.id))?.used, 4, 'charged once in the end');
  assert.deepEqual(
    (await store.ledger(t.id, null, 10)).map((r) => [r.kind, r.ref, r.amount]),
    [
      ['debit', 'late', 4],
      ['refund', 'late', 4],
      ['debit', 'late', 4],
    ],
  );
  const b = (await store.ledgerBalance(t.id))!;
  assert.equal(b.debit - b.refund - b.settle, b.used);
  await store.close();
});

test('the sweep gives back expired holds in pages until none is left, and no live one', async () => {
  const store = await openStore(':memory:');
  const t = await store.createToken({ name: 't', keyHash: 'k', group: 'default', models: null, quota: null });
  for (let i = 0; i < 1_200; i++) await store.hold(t.id, 1, { ref: `r${i}`, model: 'm', expiresAt: i < 1_100 ? 5_000 : 9_000 });
  assert.equal(await sweepExpiredHolds(store, log, 5_000), 1_100);
  assert.equal((await store.getToken(t.id))?.used, 100);
  assert.equal(await sweepExpiredHolds(store, log, 5_000), 0, 'a second sweep finds nothing');
  await store.close();
});

test('a hold outlives the request: deadline, one backoff, the slowest call of any candidate (an await: its timeout and one more look; a stream: its max_ms)', () => {
  const retry: RetryPolicy = { maxAttempts: 3, backoffMs: 100, backoffMaxMs: 2_000, deadlineMs: 60_000, retryAfterS: 1 };
  const channel = (connectMs: number, headersMs: number, bodyMs: number) =>
    ({ channel: { timeouts: { connectMs, headersMs, bodyMs } } }) as unknown as ChannelChoice;
  const plain = { await: null, response: { stream: null } } as unknown as CompiledOperation;
  const awaiting = { await: { timeoutMs: 100_000 }, response: { stream: null } } as unknown as CompiledOperation;
  const streaming = { await: null, response: { stream: { maxMs: 600_000 } } } as unknown as CompiledOperation;
  const a = channel(10_000, 120_000, 60_000);
  const b = channel(1_000, 5_000, 1_000);
  assert.equal(
    holdLifetimeMs(retry, [a, b], () => plain),
    60_000 + 2_000 + 190_000 + 5_000,
  );
  assert.equal(
    holdLifetimeMs(retry, [b], (c) => (c === b ? awaiting : plain)),
    60_000 + 2_000 + 7_000 + 100_000 + 7_000 + 5_000,
  );
  // A streamed answer lasts up to its max_ms, not the body's idle timeout.
  assert.equal(
    holdLifetimeMs(retry, [a, b], (c) => (c === b ? streaming : plain)),
    60_000 + 2_000 + 1_000 + 5_000 + 600_000 + 5_000,
  );
});
