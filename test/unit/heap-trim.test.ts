/**
 * trimHeapWhenIdle (src/heap-trim.ts): full collections only in quiet spells, until the young
 * generation is small or the spell's allowance is spent, and again after the process was busy.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { trimHeapWhenIdle } from '../../src/heap-trim.js';

test('heap trim: collects while quiet until the young generation is small, never while busy, again after a busy spell', async () => {
  // Each look takes the next state; the test ends when every state was looked at.
  const busy = [true, true, false, false, false, false, true, false, false];
  let young = 32 * 2 ** 20;
  const seen: string[] = [];
  // The trimmer's timer never holds a process open; this does, until the looks are done.
  const keepAlive = setInterval(() => undefined, 60_000);
  await new Promise<void>((done) => {
    let looks = 0;
    const stop = trimHeapWhenIdle({
      intervalMs: 1,
      maxCollections: 6,
      busy: () => {
        const b = busy[looks++]!;
        if (looks === busy.length) setImmediate(() => (stop(), done()));
        seen.push(b ? 'busy' : 'quiet');
        return b;
      },
      youngBytes: () => young,
      gc: () => {
        seen.push('gc');
        // The second collection of a quiet spell shrinks it (as V8 does once a low rate is on record).
        if (seen.filter((s) => s === 'gc').length % 2 === 0) young = 1 * 2 ** 20;
      },
    });
  });
  clearInterval(keepAlive);
  assert.deepEqual(seen, ['busy', 'busy', 'quiet', 'gc', 'quiet', 'gc', 'quiet', 'quiet', 'busy', 'quiet', 'quiet']);
});

test('heap trim: a quiet spell gets at most maxCollections when the young generation never shrinks', async () => {
  let gcs = 0;
  let looks = 0;
  const keepAlive = setInterval(() => undefined, 60_000);
  await new Promise<void>((done) => {
    const stop = trimHeapWhenIdle({
      intervalMs: 1,
      maxCollections: 3,
      busy: () => {
        if (++looks === 10) setImmediate(() => (stop(), done()));
        return false;
      },
      youngBytes: () => 32 * 2 ** 20,
      gc: () => void gcs++,
    });
  });
  clearInterval(keepAlive);
  assert.equal(gcs, 3);
});
