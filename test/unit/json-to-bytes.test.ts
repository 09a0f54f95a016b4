/**
 * encodeJson must give exactly JSON.stringify's bytes, whatever the value: checked on random
 * values with the long-string threshold lowered (so the splicing path runs on them), and on the
 * cases where JSON.stringify does something particular: escapes, non-ASCII and lone surrogates,
 * -0 and 1e21, undefined and function members, toJSON, keys. A value that makes JSON.stringify
 * throw makes encodeJson throw too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { encodeJson, LONG_STRING } from '../../src/json/to-bytes.js';

/** The bytes encodeJson gives, or the error's class name when it throws. */
function bytesOf(encode: () => string | Buffer | undefined): Buffer | string {
  try {
    const out = encode();
    return out === undefined ? 'undefined' : Buffer.isBuffer(out) ? out : Buffer.from(out, 'utf8');
  } catch (err) {
    return (err as Error).constructor.name;
  }
}

function assertSame(value: unknown, threshold: number, label = ''): void {
  const want = bytesOf(() => JSON.stringify(value));
  const got = bytesOf(() => encodeJson(value, threshold));
  assert.deepEqual(got, want, label);
}

/** Any UTF-16 code unit, lone surrogates and control characters included. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const wildString = fc.oneof(fc.string({ unit: anyUnit, maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 12 }), fc.base64String({ maxLength: 40 }));

test('random values: the same bytes as JSON.stringify, long strings spliced in or not', () => {
  const value = fc.anything({
    key: wildString,
    values: [
      wildString,
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.constant(-0),
      fc.constant(1e21),
      fc.constant(() => 1),
    ],
    maxDepth: 4,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    withTypedArray: true,
  });
  fc.assert(
    fc.property(value, fc.integer({ min: 0, max: 8 }), (v, threshold) => assertSame(v, threshold)),
    { numRuns: 2000 },
  );
});

test('a large body with a long base64 string comes back as one Buffer equal to JSON.stringify', () => {
  const data = Buffer.alloc(300_000, 7).toString('base64');
  const body = {
    contents: [{ role: 'user', parts: [{ text: 'make it a watercolour, «é» 🎨' }, { inlineData: { mimeType: 'image/png', data } }] }],
    n: -0,
    big: 1e21,
    gone: undefined,
  };
  const out = encodeJson(body);
  assert.ok(Buffer.isBuffer(out), 'spliced into bytes');
  assert.ok(out.equals(Buffer.from(JSON.stringify(body), 'utf8')));
  // The root itself, and several long strings in an array.
  assertSame(data, LONG_STRING);
  assertSame([data, 'x', data.slice(1), { k: data }], LONG_STRING);
});

test('small bodies are JSON.stringify text, unchanged', () => {
  const body = { model: 'm', prompt: 'a lighthouse', n: 1 };
  assert.equal(encodeJson(body), JSON.stringify(body));
});

test('long strings JSON.stringify would escape, long keys, toJSON and non-ASCII long strings', () => {
  const long = (unit: string) => unit.repeat(Math.ceil(LONG_STRING / unit.length) + 1);
  const cases: Record<string, unknown> = {
    quote: { s: long('ab"c') },
    backslash: { s: long('a\\b') },
    control: { s: long('ab\n\u0001') },
    loneHigh: { s: long('ab') + '\ud800' },
    loneLow: ['\udc00' + long('x')],
    pair: { s: long('😀') },
    latin1: { s: long('é') },
    cjk: { s: long('水') },
    key: { [long('k')]: 1, v: long('v') },
    toJSON: { a: { toJSON: () => long('t') }, d: new Date(0), b: { toJSON: (k: string) => k + long('u') } },
    rootToJSON: { toJSON: () => long('r') },
    rootToJSONUndefined: { toJSON: () => undefined, s: long('s') },
    members: { u: undefined, f: () => 1, sym: Symbol('s'), arr: [undefined, () => 1, long('w')], nums: [-0, 1e21, 1e-7, NaN, Infinity, 0.1] },
    boxed: { s: new String(long('b')), n: new Number(5) },
    nested: [[[[{ s: long('n') }]]]],
  };
  for (const [name, value] of Object.entries(cases)) assertSame(value, LONG_STRING, name);
  // A value JSON.stringify cannot write fails the same way.
  assertSame({ s: long('x'), big: 10n }, LONG_STRING, 'bigint');
  const cyclic: Record<string, unknown> = { s: long('c') };
  cyclic.self = cyclic;
  assertSame(cyclic, LONG_STRING, 'cycle');
});
