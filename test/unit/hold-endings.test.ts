/**
 * The writer of hold endings (src/quota/hold-endings.ts): a request hands its settlement over and
 * goes on (nothing is written on its path); settlements are written in batches, a refund at the
 * next turn; a store that refuses is tried again until it takes them, none dropped; closing writes
 * what is held, and says what it could not.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Metrics } from '../../src/metrics/metrics.js';
import { HoldEndings } from '../../src/quota/hold-endings.js';
import type { HoldEnd, HoldEnding } from '../../src/store/store.js';

// The writer's timers are unref'd (they never keep a process alive): this one keeps the tests' loop running while they wait.
let alive: NodeJS.Timeout;
before(() => {
  alive = setInterval(() => undefined, 1_000);
});
after(() => clearInterval(alive));

const ending = (ref: string, outcome: 'settle' | 'refund' = 'settle'): HoldEnding => ({ ref, outcome, tokenId: 't', model: 'm', amount: 1 });

/** A store's endHolds that records its batches and fails while `refusing`; `written` resolves at each batch it takes. */
function fakeStore() {
  const batches: string[][] = [];
  let refusing = 0;
  let tried = 0;
  let wake: () => void = () => undefined;
  return {
    batches,
    get tried() {
      return tried;
    },
    refuse(times: number) {
      refusing = times;
    },
    next: () => new Promise<void>((resolve) => (wake = resolve)),
    async write(endings: readonly HoldEnding[]): Promise<HoldEnd[]> {
      tried++;
      if (refusing > 0) {
        refusing--;
        throw new Error('store away');
      }
      batches.push(endings.map((e) => e.ref));
      wake();
      return endings.map((e) => (e.ref.startsWith('late') ? 'charged' : 'ended'));
    },
  };
}

function logLines() {
  const lines: { level: number; msg: string }[] = [];
  const log = pino(
    new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  return { log, lines };
}

test('a settlement is handed over without a store call; a batch of them is written at the flush, in one call', async () => {
  const store = fakeStore();
  const endings = new HoldEndings({ write: (e) => store.write(e), log: logLines().log, metrics: new Metrics(), flushMs: 60_000 });
  for (let i = 0; i < 3; i++) endings.end(ending(`s${i}`));
  assert.equal(store.tried, 0, 'nothing written on the requests path');
  assert.equal(endings.held, 3);
  await endings.flush();
  assert.deepEqual(store.batches, [['s0', 's1', 's2']]);
  assert.equal(endings.held, 0);
  await endings.close();
});

test('settlements are written by themselves once flushMs has passed, at most maxBatch a call', async () => {
  const store = fakeStore();
  const endings = new HoldEndings({ write: (e) => store.write(e), log: logLines().log, metrics: new Metrics(), flushMs: 20, maxBatch: 2 });
  const first = store.next();
  endings.end(ending('a'));
  endings.end(ending('b'));
  endings.end(ending('c'));
  await first;
  // The rest waits its flushMs, so this is set before it is written.
  await store.next();
  assert.deepEqual(store.batches, [['a', 'b'], ['c']]);
  await endings.close();
});

test('a refund is written at once, with the settlements waiting, not after they wait', async () => {
  const store = fakeStore();
  const endings = new HoldEndings({ write: (e) => store.write(e), log: logLines().log, metrics: new Metrics(), flushMs: 60_000 });
  endings.end(ending('s'));
  const written = store.next();
  endings.end(ending('r', 'refund'));
  assert.equal(store.tried, 1, 'its write started before end() returned');
  await written;
  assert.deepEqual(store.batches, [['s', 'r']], 'the settlement waiting goes with it');
  await endings.close();
});

test('a store that refuses is tried again, backing off, until it takes every ending: none is dropped', async () => {
  const store = fakeStore();
  const { log, lines } = logLines();
  const endings = new HoldEndings({ write: (e) => store.write(e), log, metrics: new Metrics(), flushMs: 10 });
  store.refuse(3);
  const written = store.next();
  endings.end(ending('a'));
  endings.end(ending('b'));
  await written;
  await endings.flush();
  assert.equal(store.tried, 4, 'three refusals, then written');
  assert.deepEqual(store.batches, [['a', 'b']]);
  assert.equal(lines.filter((l) => /the store did not take them/.test(l.msg)).length, 1, 'warned once for the whole outage');
  assert.ok(lines.some((l) => l.msg === 'hold endings are written again'));
  await endings.close();
});

test('a settlement the store charged again is logged as a warning', async () => {
  const store = fakeStore();
  const { log, lines } = logLines();
  const endings = new HoldEndings({ write: (e) => store.write(e), log, metrics: new Metrics(), flushMs: 60_000 });
  endings.end(ending('late-1'));
  await endings.flush();
  assert.ok(lines.some((l) => l.level === 40 && l.msg === 'a request outlived its hold; charged again'));
  await endings.close();
});

test('close writes what is held; with the store still refusing it gives up after its tries and says how many are left to expiry', async () => {
  const store = fakeStore();
  const { log, lines } = logLines();
  const endings = new HoldEndings({ write: (e) => store.write(e), log, metrics: new Metrics(), flushMs: 60_000, maxBatch: 2 });
  for (const r of ['a', 'b', 'c']) endings.end(ending(r));
  await endings.close();
  assert.deepEqual(store.batches, [['a', 'b'], ['c']]);

  const away = fakeStore();
  const stopping = new HoldEndings({ write: (e) => away.write(e), log, metrics: new Metrics(), flushMs: 60_000 });
  stopping.end(ending('x'));
  away.refuse(Number.POSITIVE_INFINITY);
  await stopping.close(3);
  assert.equal(away.tried, 3);
  assert.equal(stopping.held, 1);
  assert.ok(lines.some((l) => l.level === 50 && /"?stopped with hold endings unwritten/.test(l.msg)));
});

test('a full buffer leaves an ending to its hold expiry, counted', async () => {
  const store = fakeStore();
  const metrics = new Metrics();
  const endings = new HoldEndings({ write: (e) => store.write(e), log: logLines().log, metrics, flushMs: 60_000, maxBuffered: 2 });
  for (const r of ['a', 'b', 'c']) endings.end(ending(r));
  assert.equal(endings.held, 2);
  const text = await metrics.registry.metrics();
  assert.match(text, /gateway_hold_endings_dropped_total 1/);
  assert.match(text, /gateway_hold_endings_pending 2/);
  await endings.close();
});
