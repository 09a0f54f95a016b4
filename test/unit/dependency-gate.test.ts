/**
 * The one rule for optional dependencies on a request's path (src/dependencies/dependency-gate.ts),
 * on a dependency made here: a call past its budget marks it away, calls while away fail at once
 * without being made, a "not found" is not an outage, and only a probe that answers (and what must
 * be restored first) opens the gate again; each move is logged once and read by the gauge.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { DependencyAway, DependencyGate } from '../../src/dependencies/dependency-gate.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { until } from '../helpers/until.js';

class NotThere extends Error {}

/** A gate over a dependency whose health the test sets, with what it logged. */
function gateOver(o: { timeoutMs?: number; beforeBack?: () => Promise<void> } = {}) {
  const lines: { level: number; msg: string }[] = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)) as { level: number; msg: string });
        done();
      },
    }),
  );
  const dep = { healthy: true, probes: 0, moves: [] as boolean[] };
  const metrics = new Metrics();
  const gate = new DependencyGate({
    name: 'thing',
    log,
    metrics,
    help: '1 while the thing answers',
    timeoutMs: o.timeoutMs ?? 200,
    probeEveryMs: 20,
    probe: async () => {
      dep.probes++;
      if (!dep.healthy) await new Promise(() => undefined);
    },
    isOutage: (err) => !(err instanceof NotThere),
    ...(o.beforeBack ? { beforeBack: o.beforeBack } : {}),
    onMove: (up) => dep.moves.push(up),
    saying: { away: 'the thing is away', back: 'the thing is back' },
  });
  return { gate, dep, lines, metrics };
}

test('dependency gate: a call within its budget answers; a "not found" is thrown as it is and leaves the gate up', async () => {
  const { gate } = gateOver();
  assert.equal(await gate.run(async () => 42), 42);
  await assert.rejects(
    gate.run(async () => {
      throw new NotThere('no such key');
    }),
    NotThere,
  );
  assert.equal(gate.up, true);
  gate.close();
});

test('dependency gate: a call past its budget is cut (its signal aborted) and marks the dependency away; calls then fail at once, unmade', async () => {
  const { gate, dep, lines, metrics } = gateOver();
  dep.healthy = false;
  let aborted = false;
  const hung = gate.run(
    (signal) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => {
          aborted = true;
          reject(signal.reason);
        });
      }),
  );
  await assert.rejects(hung, DependencyAway);
  assert.equal(aborted, true, "the call's signal was aborted");
  assert.equal(gate.up, false);
  let made = 0;
  for (let i = 0; i < 10; i++) {
    await assert.rejects(
      gate.run(async () => {
        made++;
      }),
      DependencyAway,
    );
  }
  assert.equal(made, 0, 'no call is made while away');
  const text = await metrics.text();
  assert.match(text, /gateway_thing_up 0/);
  assert.match(text, /gateway_dependency_timeouts_total\{dependency="thing"\} 1/, 'only the one call was cut by the budget');
  assert.deepEqual(
    lines.filter((l) => l.msg.startsWith('the thing')).map((l) => [l.level, l.msg]),
    [[40, 'the thing is away']],
    'one warning',
  );
  gate.close();
});

test('dependency gate: an outage error marks it away too; only a probe that answers opens it, after what must be restored first', async () => {
  const order: string[] = [];
  const { gate, dep, lines, metrics } = gateOver({
    beforeBack: async () => {
      order.push(`restore while up=${gate.up}`);
    },
  });
  await assert.rejects(
    gate.run(async () => {
      throw new Error('ECONNREFUSED');
    }),
    DependencyAway,
  );
  assert.equal(gate.up, false);
  dep.healthy = false;
  await until('probes to be sent while it is away', () => dep.probes >= 2);
  assert.equal(gate.up, false, 'an unanswered probe keeps it away');
  dep.healthy = true;
  await until('the probe to open the gate', () => gate.up);
  assert.deepEqual(order, ['restore while up=false'], 'restored before the gate opened');
  assert.deepEqual(dep.moves, [false, true]);
  assert.match(await metrics.text(), /gateway_thing_up 1/);
  assert.deepEqual(
    lines.filter((l) => l.msg.startsWith('the thing')).map((l) => l.msg),
    ['the thing is away', 'the thing is back'],
  );
  const probes = dep.probes;
  assert.equal(await gate.run(async () => 'ok'), 'ok');
  await new Promise((r) => setImmediate(r));
  assert.equal(dep.probes, probes, 'no probe is sent while it is up');
  gate.close();
});
