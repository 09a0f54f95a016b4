import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { test } from 'node:test';
import { interpolateEnv } from '../../src/config/env.js';
import { Secret } from '../../src/config/secret.js';

test('${VAR} and ${VAR:-default} are resolved; unset ones are reported with their path', () => {
  const { value, missing } = interpolateEnv({ a: '${A}', b: ['x-${B:-dflt}-y'], c: { d: '${NOPE}' }, n: 3 }, { A: 'one' });
  assert.deepEqual(value, { a: 'one', b: ['x-dflt-y'], c: { d: '' }, n: 3 });
  assert.deepEqual(missing, [{ path: ['c', 'd'], name: 'NOPE' }]);
});

test('an environment value is data: it cannot inject another reference or YAML', () => {
  const { value } = interpolateEnv({ a: '${A}' }, { A: '${B}\nkey: value', B: 'leak' });
  assert.deepEqual(value, { a: '${B}\nkey: value' });
});

test('a Secret never prints its value', () => {
  const s = new Secret('sk-very-secret');
  assert.equal(String(s), '[secret]');
  assert.equal(JSON.stringify({ s }), '{"s":"[secret]"}');
  assert.ok(!inspect({ s }).includes('very-secret'));
  assert.equal(s.reveal(), 'sk-very-secret');
});
