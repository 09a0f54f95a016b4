import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STEPS_EXCEEDED, STRING_EXCEEDED } from '../../src/mapping/jsonata-budget.js';
import { compileMapping, MAPPING_LIMITS, MappingError } from '../../src/mapping/mapping.js';
import { exceedsDepth } from '../../src/http/read-json.js';
import { busyWait } from '../helpers/config-gateway.js';

/**
 * `source` made to run on jsonata: reading the clock is left to jsonata by the fast path, so the
 * whole expression is (for what only jsonata's evaluation shows: its hook, its awaits).
 */
const onJsonata = (source: string) => `($clock := $millis(); ${source})`;

/** Rejects unless `m` fails with a MappingError naming its file:line and jsonata's (or the budget's) code. */
async function failsWith(source: string, code: string): Promise<void> {
  const m = compileMapping(source, 'runaway.yaml:7');
  await assert.rejects(m.evaluate({}), (err: MappingError) => {
    assert.ok(err instanceof MappingError, source);
    assert.equal(err.jsonataCode, code, `${source}: ${err.message}`);
    assert.equal(err.where, 'runaway.yaml:7');
    assert.ok(err.message.startsWith(`mapping at runaway.yaml:7 failed: ${code} `), err.message);
    return true;
  });
}

// Each runaway stops on a count of its own work (steps, depth, items, characters), so it fails the
// same way on any machine however busy; none of these asserts a duration.
test('a loop by tail recursion (no deeper stack) spends its budget of steps', () => failsWith('($f := function($n){ $f($n + 1) }; $f(0))', STEPS_EXCEEDED));

test('a recursion without end goes over the stack depth', () => failsWith('($f := function($n){ 1 + $f($n + 1) }; $f(0))', 'D1011'));

test('an expression nested deeper than the stack limit fails', () =>
  failsWith('['.repeat(MAPPING_LIMITS.stack + 10) + '1' + ']'.repeat(MAPPING_LIMITS.stack + 10), 'D1011'));

test('a range longer than the sequence limit fails before it is built', () => failsWith('$sum([1..5000000].($ * 2))', 'D2015'));

test('the items of the arrays a node gives count as steps: a few ranges within the sequence limit spend the budget', () =>
  failsWith(onJsonata('$sum([1..3].$sum([1..99999]))'), STEPS_EXCEEDED));

test('a string doubled again and again stops at the budget for strings', () => failsWith('($f := function($s){ $f($s & $s) }; $f("x"))', STRING_EXCEEDED));

test('the budget is per evaluation: evaluations of one shared expression, in flight together, each get all of it', async () => {
  // Each evaluation alone takes 60% of the budget (a tail-recursive loop, 9 steps a turn): a count
  // shared between the two in flight (or kept from one evaluation to the next) would fail them.
  const turns = Math.ceil((MAPPING_LIMITS.steps * 0.6) / 9);
  const m = compileMapping(onJsonata('($f := function($n, $acc){ $n = 0 ? $acc : $f($n - 1, $acc + 1) }; $f(n, 0))'), 'loop.yaml:1');
  const again = compileMapping(m.source, 'loop.yaml:2');
  assert.deepEqual(await Promise.all([m.evaluate({ n: turns }), again.evaluate({ n: turns })]), [turns, turns]);
  await assert.rejects(m.evaluate({ n: 2 * turns }), { name: 'MappingError', jsonataCode: STEPS_EXCEEDED }, 'twice the work is over the budget');
});

test('an evaluation kept waiting by a busy event loop still succeeds: no limit counts wall-clock time', async () => {
  const m = compileMapping(onJsonata('$sum($map(items, function($v, $i){ $v * $i }))'), 'busy.yaml:3');
  const items = Array.from({ length: 100 }, (_, i) => i);
  const want = items.reduce((s, v, i) => s + v * i, 0);
  let settled = 0;
  const runs = Array.from({ length: 200 }, () => m.evaluate({ items }).then((v) => (settled++, v)));
  // jsonata awaits every node, so 200 evaluations started together interleave; 400 ms of blocking
  // in the middle of them (a microtask runs between their steps) is time each one spends waiting.
  let inFlight = -1;
  queueMicrotask(() => {
    inFlight = runs.length - settled;
    busyWait(400);
  });
  setImmediate(() => busyWait(400));
  assert.deepEqual(
    await Promise.all(runs),
    runs.map(() => want),
  );
  assert.equal(inFlight, runs.length, 'every evaluation was under way while the loop was blocked');
  assert.equal(m.fast, false, 'jsonata evaluated it');
});

test('a syntax error is thrown at compile time', () => {
  assert.throws(() => compileMapping('{ "a": ', 'test:3'));
});

test('nesting depth is measured without recursion', () => {
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  assert.equal(exceedsDepth(deep, 32), true);
  assert.equal(exceedsDepth({ a: [{ b: 1 }] }, 3), false);
  assert.equal(exceedsDepth({ a: [{ b: {} }] }, 3), true);
});
