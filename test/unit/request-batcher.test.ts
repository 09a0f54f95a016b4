/**
 * The request log's writer (src/records/request-batcher.ts): batches by size and by time, one
 * write at a time, a bounded buffer, and a store that is away: tries, then drops, counted and
 * logged once.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { Metrics } from '../../src/metrics/metrics.js';
import { RequestBatcher } from '../../src/records/request-batcher.js';
import type { RequestRecord } from '../../src/store/store.js';
import { until } from '../helpers/until.js';

const rec = (n: number): RequestRecord => ({
  id: `r${n}`,
  at: n,
  requestId: `q${n}`,
  tokenId: null,
  route: 'r',
  model: null,
  channel: null,
  status: 200,
  error: null,
  ms: 1,
  taskId: null,
  units: null,
});

/** A logger whose lines a test reads. */
function capture() {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

async function metric(metrics: Metrics, name: string): Promise<string> {
  return (await metrics.text())
    .split('\n')
    .filter((l) => l.startsWith(name))
    .join('\n');
}

test('a batch is written once maxBatch records wait, without waiting for the timer', async () => {
  const batches: number[] = [];
  const b = new RequestBatcher({
    put: async (r) => void batches.push(r.length),
    log: pino({ level: 'silent' }),
    metrics: new Metrics(),
    maxBatch: 3,
    flushMs: 60_000,
  });
  for (let i = 0; i < 7; i++) b.add(rec(i));
  await until('two full batches', () => batches.length >= 2);
  assert.deepEqual(batches, [3, 3], 'two batches of three; the seventh waits for its time');
  assert.equal(b.buffered, 1);
  await b.close();
  assert.deepEqual(batches, [3, 3, 1], 'close writes what is left');
});

test('records fewer than a batch are written flushMs after they came, in one batch', async () => {
  const batches: RequestRecord[][] = [];
  const b = new RequestBatcher({
    put: async (r) => void batches.push([...r]),
    log: pino({ level: 'silent' }),
    metrics: new Metrics(),
    maxBatch: 100,
    flushMs: 50,
  });
  const started = Date.now();
  b.add(rec(1));
  b.add(rec(2));
  assert.equal(batches.length, 0, 'add never writes on the spot');
  await until('the timed batch', () => batches.length === 1);
  assert.ok(Date.now() - started >= 45, 'not before its time');
  assert.deepEqual(
    batches[0]!.map((r) => r.id),
    ['r1', 'r2'],
  );
  await b.close();
});

test('the buffer is bounded: past it records are dropped and counted, the writer never waits', async () => {
  const metrics = new Metrics();
  const { log, lines } = capture();
  let release: () => void = () => undefined;
  const written: number[] = [];
  // The store hangs on the first batch: records pile up to the bound. Later batches go through.
  let first = true;
  const b = new RequestBatcher({
    put: (r) => {
      if (!first) return Promise.resolve(void written.push(r.length));
      first = false;
      return new Promise<void>((resolve) => {
        release = () => {
          written.push(r.length);
          resolve();
        };
      });
    },
    log,
    metrics,
    maxBatch: 2,
    maxBuffered: 5,
    flushMs: 10,
  });
  for (let i = 0; i < 12; i++) b.add(rec(i));
  assert.equal(b.buffered, 5);
  assert.match(await metric(metrics, 'gateway_request_log_dropped_total'), /reason="full"} 7/);
  assert.equal(lines.filter((l) => l.level === 40).length, 1, 'logged once, not per record');
  assert.deepEqual(written, [], 'the writer waits for the store, the requests do not');
  release();
  await b.close();
  assert.deepEqual(written, [2, 2, 1]);
  assert.match(await metric(metrics, 'gateway_request_log_written_total'), / 5$/m);
});

test('a store that is away: each batch is tried maxAttempts times, then dropped, counted, and logged once', async () => {
  const metrics = new Metrics();
  const { log, lines } = capture();
  let up = false;
  let calls = 0;
  const kept: string[] = [];
  const b = new RequestBatcher({
    put: async (r) => {
      calls++;
      if (!up) throw new Error('connection refused');
      kept.push(...r.map((x) => x.id));
    },
    log,
    metrics,
    maxBatch: 2,
    maxAttempts: 3,
    flushMs: 10,
  });
  for (let i = 0; i < 4; i++) b.add(rec(i));
  await until('both batches given up', () => b.buffered === 0, 5_000);
  assert.equal(calls, 6, 'three tries of each of two batches');
  assert.match(await metric(metrics, 'gateway_request_log_dropped_total'), /reason="store"} 4/);
  const warnings = lines.filter((l) => l.level === 40);
  assert.equal(warnings.length, 1, 'logged once for the whole outage');
  assert.match(warnings[0]!.msg, /dropped/);
  // Back: the next records are written, and that is said once.
  up = true;
  b.add(rec(9));
  await until('written again', () => kept.length === 1);
  assert.deepEqual(kept, ['r9']);
  assert.equal(lines.filter((l) => /written again/.test(l.msg)).length, 1);
  await b.close();
});

test('after close nothing is taken', async () => {
  const written: number[] = [];
  const b = new RequestBatcher({ put: async (r) => void written.push(r.length), log: pino({ level: 'silent' }), metrics: new Metrics() });
  b.add(rec(1));
  await b.close();
  b.add(rec(2));
  assert.equal(b.buffered, 0);
  assert.deepEqual(written, [1]);
});
