/**
 * The gateway's `$substring` against jsonata's own: the same result for any string (surrogate
 * pairs, lone surrogates), any start (negative, fractional, huge) and any length, also as a method
 * on the context value; and no time-out where jsonata's own ran out of the mapping time limit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import jsonata from 'jsonata';
import { substring } from '../../src/config/jsonata-functions.js';
import { compileMapping } from '../../src/config/mapping.js';

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.array(fc.constantFrom('a', '\ud83d\ude00', '\ud800', '\udc00', 'é', '\u0000'), { maxLength: 10 }).map((a) => a.join('')),
);
const index = fc.oneof(fc.integer({ min: -15, max: 15 }), fc.double({ min: -15, max: 15, noNaN: true }), fc.constantFrom(Infinity, -Infinity, 0, -0, 1e9, -1e9));

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

test('registered in every mapping: the context form, an undefined string, and a 20 MB data URI within the time limit', async () => {
  assert.equal(await compileMapping('s.$substring(1, 2)', 't').evaluate({ s: 'h\ud83d\ude00llo' }), '\ud83d\ude00l');
  assert.equal(await compileMapping('$substring(nothing, 0, 2)', 't').evaluate({}), undefined);
  // jsonata's own builds an array of 20 million code points first and runs out of the 250 ms limit.
  const big = `data:image/png;base64,${'A'.repeat(20 * 1024 * 1024)}`;
  const m = compileMapping('$type(s) = "string" and $substring(s, 0, 5) = "data:" ? $substringAfter(s, ",") : s', 't');
  assert.equal(((await m.evaluate({ s: big })) as string).length, 20 * 1024 * 1024);
  assert.equal(await compileMapping('$substring(s, -3)', 't').evaluate({ s: big }), 'AAA');
});
