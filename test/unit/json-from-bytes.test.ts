/**
 * parseJsonBytes must agree with JSON.parse(raw.toString('utf8')) on every body: the same value
 * for JSON (long literals decoded apart or not), the same SyntaxError message for anything else.
 * Checked on random JSON texts and damaged ones with the long-literal threshold lowered, and on
 * the cases the quote pairing must get right: escaped quotes and backslashes, long keys, control
 * characters, non-ASCII and broken UTF-8 next to a literal, unterminated literals.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LONG_LITERAL, longLiterals, parseJsonBytes } from '../../src/json/from-bytes.js';

type Outcome = { value: unknown } | { error: string };

function outcome(parse: () => unknown): Outcome {
  try {
    return { value: parse() };
  } catch (err) {
    return { error: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

function assertSame(raw: Buffer, threshold: number, label = ''): void {
  const want = outcome(() => JSON.parse(raw.toString('utf8')));
  const got = outcome(() => parseJsonBytes(raw, threshold));
  assert.deepEqual(got, want, label || raw.toString('utf8').slice(0, 200));
}

const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const strings = fc.oneof(
  fc.string({ unit: anyUnit, maxLength: 12 }),
  fc.base64String({ maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('"', '\\', 'a', ':', ' '), maxLength: 10 }),
);
const jsonValue = fc.jsonValue({ maxDepth: 4 }).chain((v) => fc.constant(v));
const values = fc.oneof(jsonValue, fc.dictionary(strings, fc.oneof(strings, jsonValue, fc.array(strings, { maxLength: 4 })), { maxKeys: 5 }));

test('random JSON, compact or spaced: the same value as JSON.parse', () => {
  fc.assert(
    fc.property(values, fc.constantFrom(undefined, 1, 2), fc.integer({ min: 0, max: 10 }), (v, space, threshold) => {
      assertSame(Buffer.from(JSON.stringify(v, null, space), 'utf8'), threshold);
    }),
    { numRuns: 2000 },
  );
});

test('random damage to JSON: the same value or the same SyntaxError as JSON.parse', () => {
  const damaged = fc
    .tuple(values, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean()), { minLength: 1, maxLength: 4 }))
    .map(([v, edits]) => {
      const bytes = [...Buffer.from(JSON.stringify(v), 'utf8')];
      for (const [at, byte, insert] of edits) {
        const i = bytes.length === 0 ? 0 : at % bytes.length;
        if (insert) bytes.splice(i, 0, byte);
        else bytes.splice(i, 1);
      }
      return Buffer.from(bytes);
    });
  fc.assert(
    fc.property(damaged, fc.integer({ min: 0, max: 6 }), (raw, threshold) => assertSame(raw, threshold)),
    { numRuns: 3000 },
  );
});

test('a large base64 body parses to the same value', () => {
  const data = Buffer.alloc(200_000, 7).toString('base64');
  const raw = Buffer.from(
    JSON.stringify({ contents: [{ parts: [{ text: 'make it «watercolour» 🎨' }, { inlineData: { mimeType: 'image/png', data } }] }], again: data }),
  );
  assertSame(raw, LONG_LITERAL);
  assert.equal((parseJsonBytes(raw) as { again: string }).again, data);
});

test('the cases quote pairing must get right', () => {
  const long = (unit: string) => unit.repeat(Math.ceil(40 / unit.length));
  const cases: Record<string, string> = {
    escapedQuote: `{"a":"${long('x')}\\"${long('y')}"}`,
    escapedBackslashThenQuote: `{"a":"${long('x')}\\\\","b":"${long('z')}"}`,
    threeBackslashes: `["${long('x')}\\\\\\"${long('x')}"]`,
    longKey: `{"${long('k')}" : "${long('v')}", "${long('k2')}"\n:\t1}`,
    control: `{"a":"${long('x')}\u0001${long('x')}"}`,
    newline: `["${long('x')}\n"]`,
    nonAscii: `{"a":"${long('é')}","b":"${long('x')}"}`,
    unterminated: `{"a":"${long('x')}`,
    unterminatedAfter: `{"a":"${long('x')}","b":"${long('y')}`,
    trailing: `{"a":"${long('x')}"} x`,
    twoValues: `"${long('x')}" "${long('y')}"`,
    root: `"${long('x')}"`,
    empty: '',
    stringsOnly: `["${long('a')}","${long('b')}",{"c":["${long('d')}"]}]`,
    protoKey: `{"__proto__":"${long('p')}","x":{"__proto__":["${long('q')}"]}}`,
  };
  for (const [name, text] of Object.entries(cases)) assertSame(Buffer.from(text, 'utf8'), 30, name);
  // Broken UTF-8 next to the quotes of a long literal decodes as it does in the whole text.
  const broken = Buffer.concat([
    Buffer.from('["'),
    Buffer.from([0xc3]),
    Buffer.from('", "'),
    Buffer.from(long('x')),
    Buffer.from('"'),
    Buffer.from([0xe2, 0x82]),
    Buffer.from(']'),
  ]);
  assertSame(broken, 30, 'broken utf-8 outside');
  const brokenInside = Buffer.concat([Buffer.from('["'), Buffer.from(long('x')), Buffer.from([0xc3]), Buffer.from('"]')]);
  assertSame(brokenInside, 30, 'broken utf-8 inside');
});

test('the long literals found are exactly the long plain values: escapes are paired, keys and escaped contents left alone', () => {
  const x = 'x'.repeat(40);
  const found = (text: string) => longLiterals(Buffer.from(text, 'utf8'), 30).map(([s, e]) => Buffer.from(text, 'utf8').toString('utf8', s, e));
  // Had the escaped quote closed the first literal, the pairing would be off by one from there on.
  assert.deepEqual(found(`{"a":"q\\"${x}","b":"${x}1","c":"\\\\","d":"${x}2"}`), [`${x}1`, `${x}2`]);
  assert.deepEqual(found(`{"${x}k" : "${x}v", "${x}k2"\n:\t"${x}v2"}`), [`${x}v`, `${x}v2`]);
  assert.deepEqual(found(`["${x}\\n", "${x}é", "${x}ok", "short"]`), [`${x}ok`]);
});
