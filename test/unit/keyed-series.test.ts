/**
 * KeyedCounter and KeyedHistogram (src/metrics/keyed-series.ts) update prom-client's own series
 * entries in place. Whatever mix of their fast calls and prom-client's own (inc, observe, reset,
 * remove, zero), the exposition must be exactly a stock Counter's or Histogram's given the same
 * updates through prom-client's API: the same series, values, buckets, sums and order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { KeyedCounter, KeyedHistogram } from '../../src/metrics/keyed-series.js';

const route = fc.constantFrom('images', 'alpha', 'a"b\\c');
const status = fc.constantFrom('200', '400', '502');
const seconds = fc.oneof(fc.constantFrom(0, 0.01, 0.0101, 1, 300, 301, 1e9), fc.double({ min: 0, max: 400, noNaN: true }));

type Op = { op: 'fast' | 'api'; route: string; status: string; seconds: number } | { op: 'reset' } | { op: 'remove' | 'zero'; route: string; status: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ op: fc.constantFrom('fast' as const, 'api' as const), route, status, seconds }) },
  { weight: 1, arbitrary: fc.constant({ op: 'reset' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('remove' as const, 'zero' as const), route, status }) },
);

function pair() {
  const keyed = new Registry();
  const stock = new Registry();
  const config = { name: 'm_seconds', help: 'h', labelNames: ['route', 'status'] as const, buckets: [0.01, 1, 300] };
  const counters = {
    keyed: new KeyedCounter({ name: 'm_total', help: 'h', labelNames: ['route', 'status'] as const, registers: [keyed] }),
    stock: new Counter({ name: 'm_total', help: 'h', labelNames: ['route', 'status'] as const, registers: [stock] }),
  };
  const histograms = { keyed: new KeyedHistogram({ ...config, registers: [keyed] }), stock: new Histogram({ ...config, registers: [stock] }) };
  return { keyed, stock, counters, histograms };
}

test('the exposition is a stock metric’s, whatever mix of fast and prom-client calls', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
      const { keyed, stock, counters, histograms } = pair();
      for (const o of ops) {
        if (o.op === 'reset') {
          for (const m of [counters.keyed, counters.stock, histograms.keyed, histograms.stock]) m.reset();
          continue;
        }
        const labels = { route: o.route, status: o.status };
        if (o.op === 'remove') {
          for (const m of [counters.keyed, counters.stock, histograms.keyed, histograms.stock]) m.remove(labels);
        } else if (o.op === 'zero') {
          histograms.keyed.zero(labels);
          histograms.stock.zero(labels);
        } else if (o.op === 'fast' || o.op === 'api') {
          if (o.op === 'fast') {
            counters.keyed.count({ ...labels });
            histograms.keyed.record({ ...labels }, o.seconds);
          } else {
            counters.keyed.inc({ ...labels });
            histograms.keyed.observe({ ...labels }, o.seconds);
          }
          counters.stock.inc({ ...labels });
          histograms.stock.observe({ ...labels }, o.seconds);
        }
      }
      assert.equal(await keyed.metrics(), await stock.metrics());
    }),
    { numRuns: 300 },
  );
});

test('a label left out or not named goes through prom-client, which refuses it as before', () => {
  const { counters, histograms } = pair();
  assert.throws(() => counters.keyed.count({ route: 'x', status: '200', other: 'y' } as never), /label/i);
  assert.throws(() => histograms.keyed.record({ route: 'x', status: '200', other: 'y' } as never, 1), /label/i);
  // One label missing is a series of its own, as with inc.
  counters.keyed.count({ route: 'x' } as never);
  counters.stock.inc({ route: 'x' } as never);
});
