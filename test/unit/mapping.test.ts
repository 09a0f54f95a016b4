import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileMapping, MappingError } from '../../src/mapping/mapping.js';
import { exceedsDepth } from '../../src/http/read-json.js';

test('a runaway mapping is stopped by the time or stack limit, not left to hang', async () => {
  const loop = compileMapping('($f := function($n){ $f($n + 1) }; $f(0))', 'test:1');
  await assert.rejects(loop.evaluate({}), MappingError);
  const slow = compileMapping('$sum([1..5000000].($ * 2))', 'test:2');
  const started = Date.now();
  await assert.rejects(slow.evaluate({}), MappingError);
  assert.ok(Date.now() - started < 10_000, 'the limit cut the evaluation short');
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
