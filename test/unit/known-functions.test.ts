/**
 * The functions a mapping may call are known at load (src/mapping/known-functions.ts): the list of
 * jsonata's built-ins is jsonata's own, a call of anything else is found in the AST wherever it is
 * (a call, a partial application, `~>`, a path step), names the expression binds count as defined,
 * and the name suggested is the nearest one (src/config/did-you-mean.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import jsonata from 'jsonata';
import { nearestName } from '../../src/config/did-you-mean.js';
import { GATEWAY_FUNCTIONS } from '../../src/mapping/jsonata-functions.js';
import { checkFunctionCalls, JSONATA_FUNCTIONS, KNOWN_FUNCTIONS } from '../../src/mapping/known-functions.js';
import { compileMapping } from '../../src/mapping/mapping.js';

test("the list of jsonata's built-ins is the one its source binds (an upgrade that changes it fails here)", () => {
  const source = readFileSync(createRequire(import.meta.url).resolve('jsonata'), 'utf8');
  const bound = [...source.matchAll(/staticFrame\.bind\('([A-Za-z0-9]+)'/g)].map((m) => m[1]);
  // $now and $millis are bound in each evaluation's own frame.
  const perEvaluation = [...source.matchAll(/environment\.bind\('([A-Za-z0-9]+)', defineFunction/g)].map((m) => m[1]);
  assert.ok(bound.length > 60, `found ${bound.length} bindings: the pattern still matches jsonata's source`);
  assert.deepEqual([...JSONATA_FUNCTIONS].sort(), [...bound, ...perEvaluation].sort());
});

test('every known name is a function when a mapping runs', async () => {
  const probe = compileMapping(`[${[...KNOWN_FUNCTIONS].map((n) => `$type($${n})`).join(', ')}]`, 'test');
  const types = (await probe.evaluate({})) as string[];
  assert.deepEqual(new Set(types), new Set(['function']));
  assert.ok(KNOWN_FUNCTIONS.has('segment') && Object.keys(GATEWAY_FUNCTIONS).every((n) => KNOWN_FUNCTIONS.has(n)));
});

const unknownIn = (expr: string) => [...checkFunctionCalls(jsonata(expr).ast()).unknown];

test('a call of an unknown function is found wherever it stands', () => {
  assert.deepEqual(unknownIn('$segmnt(model)'), ['segmnt']);
  assert.deepEqual(unknownIn('"/v1/" & $segmnt(model) & "/" & $lowercse(x)'), ['segmnt', 'lowercse']);
  assert.deepEqual(unknownIn('model ~> $segmnt'), ['segmnt']);
  assert.deepEqual(unknownIn('model ~> $segmnt()'), ['segmnt']);
  assert.deepEqual(unknownIn('$segmnt(?, 1)'), ['segmnt']);
  assert.deepEqual(unknownIn('a.b.$segmnt()'), ['segmnt']);
  assert.deepEqual(unknownIn('items[$fliter($, true)].{"x": $map(y, function($v) { $strng($v) })}'), ['fliter', 'strng']);
  assert.deepEqual(unknownIn('body ? { "a": $nope(1) } : $nope(2)'), ['nope']);
});

test('built-ins, the gateway functions and names the expression binds are defined; reading an unset variable is not a call', () => {
  assert.deepEqual(unknownIn('$segment($substring(model, 0, 3)) & $now() & $millis()'), []);
  assert.deepEqual(unknownIn('($pct := function($p) { $round($p * 100) }; $pct(task.progress))'), []);
  assert.deepEqual(unknownIn('$map(xs, function($v, $i, $all) { $v })'), []);
  assert.deepEqual(unknownIn('(function($f) { $f(1) })($string)'), []);
  assert.deepEqual(unknownIn('items@$it#$n.{"i": $n, "v": $it}'), []);
  assert.deepEqual(unknownIn('$$.a & $.b & $unsetVariable'), []);
  const { bound } = checkFunctionCalls(jsonata('($pct := function($p) { $p }; $pcnt(1))').ast());
  assert.deepEqual([...bound].sort(), ['p', 'pct']);
});

test('the nearest name: a slip of the keyboard, case aside; nothing when no name is close', () => {
  assert.equal(nearestName('segmnt', KNOWN_FUNCTIONS), 'segment');
  assert.equal(nearestName('base_ulr', ['name', 'profile', 'base_url', 'secrets']), 'base_url');
  assert.equal(nearestName('Segment', KNOWN_FUNCTIONS), 'segment');
  assert.equal(nearestName('encodeUrlComponnet', KNOWN_FUNCTIONS), 'encodeUrlComponent');
  assert.equal(nearestName('lenght', KNOWN_FUNCTIONS), 'length');
  assert.equal(nearestName('frobnicate', KNOWN_FUNCTIONS), null);
  assert.equal(nearestName('limits', ['name', 'profile', 'base_url', 'secrets', 'groups', 'models']), null);
});
