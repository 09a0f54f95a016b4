/**
 * trimHeapWhenIdle (src/heap-trim.ts): full collections only in quiet spells, until the young
 * generation is small or the spell's allowance is spent, then one compacting collection when the
 * old generation has room to give back, and again after the process was busy.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { type HeapTrimOptions, trimHeapWhenIdle } from '../../src/heap-trim.js';

/**
 * Runs the trimmer, looking every 1 ms, for `looks` looks, then stops it. `busy` answers each look
 * (by its number from 0, and the time of the trimmer's own collection it is told); unset, every look
 * is quiet. `quietLooks` is 1 unless given. The trimmer's timer never holds a process open; this
 * does, until the looks are done.
 */
async function trimFor(
  looks: number,
  opts: Omit<HeapTrimOptions, 'intervalMs' | 'busy'> & { readonly busy?: (look: number, ownMs: number) => boolean },
): Promise<void> {
  const keepAlive = setInterval(() => undefined, 60_000);
  try {
    await new Promise<void>((done) => {
      let look = 0;
      const stop = trimHeapWhenIdle({
        quietLooks: 1,
        ...opts,
        intervalMs: 1,
        busy: (ownMs) => {
          const b = opts.busy?.(look, ownMs) ?? false;
          if (++look === looks) setImmediate(() => (stop(), done()));
          return b;
        },
      });
    });
  } finally {
    clearInterval(keepAlive);
  }
}

test('heap trim: collects while quiet until the young generation is small, then compacts once; never while busy; again after a busy spell', async () => {
  // Each look takes the next state; the test ends when every state was looked at.
  const busy = [true, true, false, false, false, false, true, false, false, false, false];
  let young = 32 * 2 ** 20;
  const seen: string[] = [];
  await trimFor(busy.length, {
    maxCollections: 6,
    busy: (look) => {
      const b = busy[look]!;
      seen.push(b ? 'busy' : 'quiet');
      // A busy spell grows the young generation again.
      if (b) young = 32 * 2 ** 20;
      return b;
    },
    youngBytes: () => young,
    slackBytes: () => 4 * 2 ** 20,
    gc: () => {
      seen.push('gc');
      // The second collection of a quiet spell shrinks it (as V8 does once a low rate is on record).
      if (seen.filter((s) => s === 'gc').length % 2 === 0) young = 1 * 2 ** 20;
    },
    compact: () => void seen.push('compact'),
  });
  assert.deepEqual(seen, [
    ...['busy', 'busy', 'quiet', 'gc', 'quiet', 'gc', 'quiet', 'compact', 'quiet'],
    ...['busy', 'quiet', 'gc', 'quiet', 'gc', 'quiet', 'compact', 'quiet'],
  ]);
});

test('heap trim: no compacting collection when the old generation has little room to give back, nor in a spell that did not collect', async () => {
  const seen: string[] = [];
  let young = 32 * 2 ** 20;
  await trimFor(6, {
    youngBytes: () => young,
    slackBytes: () => 1 * 2 ** 20,
    gc: () => {
      seen.push('gc');
      young = 1 * 2 ** 20;
    },
    compact: () => void seen.push('compact'),
  });
  await trimFor(4, {
    youngBytes: () => 1 * 2 ** 20,
    slackBytes: () => 8 * 2 ** 20,
    gc: () => void seen.push('gc'),
    compact: () => void seen.push('compact'),
  });
  assert.deepEqual(seen, ['gc']);
});

test('heap trim: the time of its own collection is not the process being busy', async () => {
  const owns: number[] = [];
  let young = 32 * 2 ** 20;
  await trimFor(3, {
    busy: (_look, ownMs) => {
      owns.push(ownMs);
      return false;
    },
    youngBytes: () => young,
    slackBytes: () => 0,
    gc: () => {
      const until = performance.now() + 20;
      while (performance.now() < until);
      young = 1 * 2 ** 20;
    },
  });
  // The look after the collection is told how long it took; the others, nothing.
  assert.equal(owns[0], 0);
  assert.ok(owns[1]! >= 20, `told ${owns[1]} ms`);
  assert.equal(owns[2], 0);
});

test('heap trim: a quiet spell gets at most maxCollections when the young generation never shrinks', async () => {
  let gcs = 0;
  await trimFor(10, { maxCollections: 3, youngBytes: () => 32 * 2 ** 20, gc: () => void gcs++ });
  assert.equal(gcs, 3);
});

test('heap trim: the first collection waits for quietLooks quiet looks in a row', async () => {
  const seen: string[] = [];
  const busy = [false, false, true, false, false, false, false];
  let young = 32 * 2 ** 20;
  await trimFor(busy.length, {
    quietLooks: 3,
    busy: (look) => {
      const b = busy[look]!;
      seen.push(b ? 'busy' : 'quiet');
      return b;
    },
    youngBytes: () => young,
    slackBytes: () => 4 * 2 ** 20,
    gc: () => {
      seen.push('gc');
      young = 1 * 2 ** 20;
    },
    compact: () => void seen.push('compact'),
  });
  assert.deepEqual(seen, ['quiet', 'quiet', 'busy', 'quiet', 'quiet', 'quiet', 'gc', 'quiet', 'compact']);
});

test("heap trim: this Node's V8 knows the flag the compacting collection sets (an unknown one is an error line on stderr each time)", () => {
  const script = "const v8 = require('node:v8'); v8.setFlagsFromString('--compact-on-every-full-gc'); v8.setFlagsFromString('--no-compact-on-every-full-gc');";
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(r.status, 0);
  assert.equal(r.stderr, '');
  // And the check can fail: a flag V8 does not know says so there.
  const unknown = spawnSync(process.execPath, ['-e', "require('node:v8').setFlagsFromString('--no-such-gc-flag')"], { encoding: 'utf8', timeout: 10_000 });
  assert.match(unknown.stderr, /unrecognized flag/);
});
