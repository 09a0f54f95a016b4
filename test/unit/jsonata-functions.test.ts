/**
 * The gateway's `$substring` against jsonata's own: the same result for any string (surrogate
 * pairs, lone surrogates), any start (negative, fractional, huge) and any length, also as a method
 * on the context value; and no time-out where jsonata's own ran out of the mapping time limit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import jsonata from 'jsonata';
import { pathProblem, segment, substring, UNSAFE_PATH_VALUE } from '../../src/mapping/jsonata-functions.js';
import { compileMapping } from '../../src/mapping/mapping.js';

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.array(fc.constantFrom('a', '\ud83d\ude00', '\ud800', '\udc00', 'é', '\u0000'), { maxLength: 10 }).map((a) => a.join('')),
);
const index = fc.oneof(
  fc.integer({ min: -15, max: 15 }),
  fc.double({ min: -15, max: 15, noNaN: true }),
  fc.constantFrom(Infinity, -Infinity, 0, -0, 1e9, -1e9),
);

test('the same results as jsonata 2.2.2 for any string, start and length', async () => {
  const withLength = jsonata('$substring(s, a, b)');
  const withoutLength = jsonata('$substring(s, a)');
  await fc.assert(
    fc.asyncProperty(text, index, fc.option(index, { nil: undefined }), async (s, a, b) => {
      const expected = b === undefined ? await withoutLength.evaluate({ s, a }) : await withLength.evaluate({ s, a, b });
      assert.equal(substring(s, a, b), expected, JSON.stringify({ s, a, b }));
    }),
    { numRuns: 3000 },
  );
});

test('registered in every mapping: the context form, an undefined string, and a 20 MB data URI', async () => {
  assert.equal(await compileMapping('s.$substring(1, 2)', 't').evaluate({ s: 'h\ud83d\ude00llo' }), '\ud83d\ude00l');
  assert.equal(await compileMapping('$substring(nothing, 0, 2)', 't').evaluate({}), undefined);
  // jsonata's own builds an array of 20 million code points first (slow, and it was past the 250 ms
  // limit mappings then had).
  const big = `data:image/png;base64,${'A'.repeat(20 * 1024 * 1024)}`;
  const m = compileMapping('$type(s) = "string" and $substring(s, 0, 5) = "data:" ? $substringAfter(s, ",") : s', 't');
  assert.equal(((await m.evaluate({ s: big })) as string).length, 20 * 1024 * 1024);
  assert.equal(await compileMapping('$substring(s, -3)', 't').evaluate({ s: big }), 'AAA');
});

test('$segment encodes a path value, and refuses empty values, dot-segments (also encoded), slashes, control characters and overlong ones', async () => {
  assert.equal(segment('asset-01'), 'asset-01');
  assert.equal(segment('a b:c?d#e'), 'a%20b%3Ac%3Fd%23e');
  assert.equal(segment(42), '42');
  assert.equal(segment('abc.def'), 'abc.def', 'a dot inside a segment is fine');
  for (const bad of [
    '',
    '.',
    '..',
    '%2e%2e',
    '%2E%2e',
    '%252e%252e',
    '%25252e%25252e',
    'a/b',
    'a%2Fb',
    'a%252Fb',
    'a\\b',
    'a%5Cb',
    '\r\n',
    'a\u0000',
    '%0d%0a',
    '%zz',
    'x'.repeat(1025),
  ]) {
    assert.throws(
      () => segment(bad),
      (err: { code?: string }) => err.code === UNSAFE_PATH_VALUE,
      JSON.stringify(bad.slice(0, 20)),
    );
  }
  for (const bad of [undefined, null, true, {}, [], NaN])
    assert.throws(
      () => segment(bad),
      (err: { code?: string }) => err.code === UNSAFE_PATH_VALUE,
      String(bad),
    );
  // As every mapping has it: a refusal is a mapping error with the code, on both the fast path and jsonata.
  for (const expr of ['"/assets/" & $segment(id)', '($x := id; "/assets/" & $substring($segment($x), 0))']) {
    await assert.rejects(compileMapping(expr, 't').evaluate({ id: '..' }), (err: { jsonataCode?: string }) => err.jsonataCode === UNSAFE_PATH_VALUE, expr);
    assert.equal(await compileMapping(expr, 't').evaluate({ id: 'a b' }), '/assets/a%20b');
  }
});

test('a vendor path is well formed when every segment after the leading slash is: the root is, empty and dot segments are not', () => {
  for (const ok of ['/', '/v1/videos/abc', '/v1beta/models/m:generateContent', '/api/v3/assets/asset-1?x=..']) assert.equal(pathProblem(ok), null, ok);
  for (const bad of ['//', '/a//b', '/a/', '/a/../b', '/a/./b', '/a/%2e%2E/b', '/a/x%2Fy', '/a/%0d%0a', '/a/b\nc'])
    assert.notEqual(pathProblem(bad), null, bad);
});
