/**
 * Differential tests of the mapping fast path (src/mapping/mapping-fast.ts) against jsonata itself:
 * for every input, the fast path must give exactly what jsonata gives, or BAIL. Also pins that the
 * alpha mappings really take the fast path, so the optimisation cannot be lost silently.
 * `FC_SEED=<n>` replays a failing property run.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import type jsonata from 'jsonata';
import { parse as parseYaml, parseDocument } from 'yaml';
import { compileMapping, limitedJsonata, MAPPING_LIMITS } from '../../src/mapping/mapping.js';
import { BAIL, compileFast } from '../../src/mapping/mapping-fast.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';

type Outcome = 'fast' | 'bail' | 'none';
type Obj = Record<string, unknown>;
const NOW = '2026-01-01T00:00:00.000Z';
const FC = { seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined, numRuns: 300 };

/**
 * What a result means to its users: JSON-visible data with key order, undefined and prototypes
 * kept. Arrays lose non-index properties: jsonata tags its arrays (`sequence`, `keepSingleton`,
 * even on input arrays it returns), which no serialisation sees.
 */
function canon(v: unknown): unknown {
  if (v === undefined) return { undefined: true };
  if (Array.isArray(v)) return { array: Array.from(v, canon) };
  if (v !== null && typeof v === 'object') {
    return { proto: Object.getPrototypeOf(v) === null ? null : 'object', entries: Object.keys(v).map((k) => [k, canon((v as Obj)[k])]) };
  }
  return v;
}

const compiled = new Map<string, { expr: jsonata.Expression; fast: ReturnType<typeof compileFast> }>();
function compile(source: string) {
  let c = compiled.get(source);
  if (!c) {
    // The reference is jsonata with the gateway's limits and functions ($segment), as every mapping runs.
    const expr = limitedJsonata(source);
    c = { expr, fast: compileFast(expr.ast(), MAPPING_LIMITS) };
    compiled.set(source, c);
  }
  return c;
}

/** Runs both; fails unless the fast path bailed or agreed with jsonata exactly. */
async function differential(source: string, input: unknown): Promise<Outcome> {
  const { expr, fast } = compile(source);
  // fast first: jsonata tags input arrays it returns, and the fast path must see the input pristine
  const got = fast ? fast(input) : BAIL;
  let want: unknown;
  let error: { code?: string } | undefined;
  try {
    want = await expr.evaluate(input);
  } catch (err) {
    error = err as { code?: string };
  }
  if (!fast) return 'none';
  if (got === BAIL) return 'bail';
  const show = () => `${source}\ninput: ${JSON.stringify(input)}`;
  assert.equal(error, undefined, `jsonata threw ${error?.code} where the fast path answered: ${show()}`);
  assert.deepStrictEqual(canon(got), canon(want), show());
  assert.equal(JSON.stringify(got), JSON.stringify(want), show());
  return 'fast';
}

/** Every mapping expression of every profile in channels.yaml, by `profile.operation.field`. */
function channelMappings(): Map<string, string> {
  const doc = parseYaml(readFileSync(join(PROJECT_ROOT, 'channels.yaml'), 'utf8')) as { profiles: Record<string, { operations: Record<string, Obj> }> };
  const out = new Map<string, string>();
  for (const [pname, p] of Object.entries(doc.profiles)) {
    for (const [oname, op] of Object.entries(p.operations)) {
      const req = (op.request ?? {}) as Obj;
      const res = (op.response ?? {}) as Obj;
      const fields: [string, unknown][] = [
        ['request.path', req.path],
        ['request.query', req.query],
        ['request.headers', req.headers],
        ['request.body', req.body],
        ['response.body', res.body],
        ['error', op.error],
      ];
      for (const [f, e] of fields) if (typeof e === 'string') out.set(`${pname}.${oname}.${f}`, e);
    }
  }
  return out;
}

interface Golden {
  name: string;
  request: { path: string; body?: unknown };
  upstream_response?: { status: number; headers?: Obj; body?: unknown; raw_body?: string };
}
function goldenCases(): Golden[] {
  const dir = join(PROJECT_ROOT, 'test/golden/alpha-native');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ name: f, ...(parseDocument(readFileSync(join(dir, f), 'utf8')).toJS() as Omit<Golden, 'name'>) }));
}
function modelOf(g: Golden): string {
  return /\/models\/([^/:]+):/.exec(g.request.path)?.[1] ?? 'alpha-3-pro-image-preview';
}
function requestInput(body: unknown, model: unknown): Obj {
  return { body, params: { model }, query: {}, model, public_model: model, channel: { name: 'c', settings: {} }, now: NOW };
}
function responseInput(status: unknown, body: unknown, model: string): Obj {
  return { status, headers: {}, body, model, public_model: model, now: NOW };
}
function upstreamBody(g: Golden): unknown {
  const u = g.upstream_response;
  if (!u) return undefined;
  if (u.raw_body === undefined) return u.body;
  try {
    return JSON.parse(u.raw_body);
  } catch {
    return null; // what the gateway gives the error mapping for an unparseable body
  }
}

/** Hand-made variants of a vendor answer: missing, null, wrong types, singleton and empty arrays, overflow. */
function bodyVariants(b: unknown): unknown[] {
  const o = b !== null && typeof b === 'object' && !Array.isArray(b) ? (b as Obj) : {};
  const u = (o.usageMetadata ?? {}) as Obj;
  const cands = o.candidates;
  return [
    b,
    undefined,
    null,
    [],
    [b],
    'text',
    42,
    {},
    { ...o, candidates: Array.isArray(cands) ? cands[0] : cands },
    { ...o, candidates: [] },
    { ...o, candidates: null },
    { ...o, candidates: 'x' },
    { ...o, usageMetadata: null },
    { ...o, usageMetadata: [u] },
    { ...o, usageMetadata: [] },
    { ...o, usageMetadata: 'x' },
    { ...o, usageMetadata: { ...u, promptTokenCount: '10' } },
    { ...o, usageMetadata: { ...u, promptTokenCount: null } },
    { ...o, usageMetadata: { ...u, promptTokenCount: [3] } },
    { ...o, usageMetadata: { promptTokenCount: 1e308, candidatesTokenCount: 1e308 } },
    { ...o, usageMetadata: { promptTokenCount: 0.1, candidatesTokenCount: 0.2, trafficType: '' } },
    { ...o, usageMetadata: { promptTokenCount: -0, candidatesTokenCount: 0, trafficType: null } },
    { ...o, createTime: null },
    { ...o, createTime: ['t'] },
    { ...o, responseId: 7, promptFeedback: false, modelVersion: { a: 1 } },
    { ...o, error: { status: 'INVALID_ARGUMENT', message: null, details: [] } },
    { ...o, error: { status: ['UNAVAILABLE'], details: { reason: 'API_KEY_INVALID' } } },
    { ...o, error: [{ status: 'UNAVAILABLE' }] },
  ];
}

test('every channels.yaml mapping agrees with jsonata on the golden inputs and their variants', async () => {
  const mappings = channelMappings();
  assert.ok(mappings.size >= 4, 'channels.yaml mappings found');
  const golden = goldenCases();
  assert.ok(golden.length > 10, 'golden cases found');
  const inputs: Obj[] = [];
  for (const g of golden) {
    const model = modelOf(g);
    for (const m of [model, 'a/b c?d#é', '\ud800', '', 7, null, undefined]) inputs.push(requestInput(g.request.body, m));
    for (const body of [null, [], [g.request.body], undefined, 'x']) inputs.push(requestInput(body, model));
    const status = g.upstream_response?.status ?? 200;
    for (const body of bodyVariants(upstreamBody(g))) inputs.push(responseInput(status, body, model));
    for (const s of ['200', null, 0, 400, 401, 403, 429, 503, 504, 500.5, undefined]) inputs.push(responseInput(s, upstreamBody(g), model));
  }
  inputs.push({}, { status: 200 }, { body: { candidates: [] } });
  const counts: Record<string, Record<Outcome, number>> = {};
  for (const [name, source] of mappings) {
    const c = (counts[name] = { fast: 0, bail: 0, none: 0 });
    for (const input of inputs) c[await differential(source, input)]++;
  }
  // the alpha mappings on the hot path must compile, and answer fast on a good part of the variants
  for (const name of ['alpha-native.generateContent.request.path', 'alpha-native.generateContent.request.body', 'alpha-native.generateContent.response.body']) {
    assert.ok(counts[name]!.fast > inputs.length / 2, `${name}: ${JSON.stringify(counts[name])}`);
  }
});

test('the alpha request and response mappings take the fast path on every normal golden input', async () => {
  const mappings = channelMappings();
  const path = compileMapping(mappings.get('alpha-native.generateContent.request.path')!, 'channels.yaml');
  const body = compileMapping(mappings.get('alpha-native.generateContent.request.body')!, 'channels.yaml');
  const response = compileMapping(mappings.get('alpha-native.generateContent.response.body')!, 'channels.yaml');
  for (const m of [path, body, response]) assert.equal(m.fast, true, `${m.source} compiles to the fast path`);
  let requests = 0;
  let responses = 0;
  for (const g of goldenCases()) {
    const model = modelOf(g);
    const req = requestInput(g.request.body, model);
    assert.equal(await path.evaluate(req), `/v1beta/models/${encodeURIComponent(model)}:generateContent`);
    assert.equal(await body.evaluate(req), g.request.body);
    requests++;
    const u = g.upstream_response;
    const b = upstreamBody(g);
    if (u && u.status >= 200 && u.status < 300 && b !== null && typeof b === 'object' && !Array.isArray(b)) {
      const out = await response.evaluate(responseInput(u.status, b, model));
      assert.ok(out !== null && typeof out === 'object', g.name);
      responses++;
    }
  }
  assert.ok(responses >= 10, `${responses} successful golden answers`);
  assert.deepEqual({ ...path.stats }, { fast: requests, jsonata: 0 });
  assert.deepEqual({ ...body.stats }, { fast: requests, jsonata: 0 });
  assert.deepEqual({ ...response.stats }, { fast: responses, jsonata: 0 });
});

test('a bail falls back to jsonata, with its value or its error', async () => {
  const m = compileMapping('( $v := a; $v.b )', 'test:1');
  assert.equal(m.fast, true);
  assert.deepEqual([...((await m.evaluate({ a: [{ b: 1 }, { b: 2 }] })) as unknown[])], [1, 2]); // a variable holding an array: jsonata maps it
  assert.equal(await m.evaluate({ a: { b: 3 } }), 3);
  assert.deepEqual({ ...m.stats }, { fast: 1, jsonata: 1 });
  const add = compileMapping('a + 1', 'test:2');
  await assert.rejects(add.evaluate({ a: 'x' }), { name: 'MappingError', jsonataCode: 'T2001' });
  const filter = compileMapping('a[b = 1]', 'test:3');
  assert.equal(filter.fast, false);
  assert.deepEqual(await filter.evaluate({ a: [{ b: 1 }, { b: 2 }] }), { b: 1 });
});

/** Random JSON-ish inputs over a few keys, with the values jsonata treats specially. */
const keys = ['a', 'b', 'c', 'x', '0', 'constructor', '_jsonata_function', 'sequence', 'outerWrapper', 'tupleStream'];
const scalar = fc.oneof(
  fc.constantFrom(null, true, false, 0, -0, 1, 2, 0.1, 1 / 3, 1e21, 1e-7, 1e308, -1e308, NaN, Infinity, '', 'a', 'b', 'x y/é', '12', '1e3', '-0.5', '0x1F', '\ud800', 'true'),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 4 }),
);
const value = fc.letrec<{ v: unknown; arr: unknown[]; obj: Obj }>((tie) => ({
  v: fc.oneof({ maxDepth: 3 }, scalar, tie('arr'), tie('obj')),
  arr: fc.array(tie('v'), { maxLength: 3 }),
  obj: fc.dictionary(fc.constantFrom(...keys), tie('v'), { maxKeys: 4 }),
})).v;
const input = fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 6 });

/** One or more expressions per construct of the subset; each must compile to the fast path. */
const SUBSET = [
  'a', 'a.b', 'a.b.c', 'a[]', 'a.b[]', 'a[][]', '$', '$$', '$.a', '$$.a.b', 'constructor', 'a.constructor', '`0`', 'a."b"',
  '"lit"', '12.5', 'true', 'false', 'null', '-a', '-a.b', '- -1',
  'a ?? "d"', 'a.b ?? b ?? c', 'a ?: "d"', 'a ? b : c', 'a ? b', 'a.b ? 1 : 0',
  'a and b', 'a or b.c', 'a = b', 'a != b', 'a = "a"', 'a = 1', 'a != null', 'a < b', 'a >= 1', 'a < "b"', 'a > b.c',
  'a + b', 'a - 1', 'a * b', 'a / b', 'a % 2', 'a + b.c * 2',
  'a & b', '"x" & a & b.c', 'a & 1.5 & true & null',
  '$string(a)', '$exists(a.b)', '$not(a)', '$boolean(a)', '$number(a)', '$encodeUrlComponent(a)', '$string(a + 1)',
  '{ "k": a, "1": b, "j": a.b[], "0": c }', '{}', '{ "n": { "m": a.b, "o": b } }',
  '[a, b]', '[a, [b], c[]]', '[]', '[[]]', '[a.b, 1, [2, a]]',
  '()', '(a; b)', '( $u := a; $v := $u.b ?? 0; { "u": $u, "v": $v + 1 } )',
  '( $x := a; ( $x := b; $x ) & $x )', '( $x := a; $x := $x.b; $x )', '( $string := a; $string )', '( $y := a[]; $y )',
  // the alpha response mapping over random inputs too
  '( $u := body.usageMetadata; $p := $u.promptTokenCount ?? 0; { "candidates": body.candidates[], "total": $p + ($u.c ?? 0), "t": $u.trafficType ?? "ON_DEMAND" } )',
];

test('each construct of the subset agrees with jsonata on random inputs', async () => {
  for (const source of SUBSET) {
    assert.notEqual(compile(source).fast, null, `${source} compiles to the fast path`);
    let fast = 0;
    await fc.assert(
      fc.asyncProperty(input, async (inp) => {
        if ((await differential(source, inp)) === 'fast') fast++;
      }),
      FC,
    );
    assert.ok(fast > 0, `${source} never answered on the fast path`);
  }
});

/** Values jsonata treats specially, for an exhaustive grid: random inputs hit them too rarely. */
const SPECIAL: unknown[] = [
  undefined, null, true, false, 0, -0, 1, 2, 0.1, 1 / 3, 1e21, 1e-7, 1e308, NaN, Infinity, -Infinity,
  '', ' 12', 'a', 'b', '12', '1e3', '-0.5', '0x1F', '0x1Fzz', '0b2', '\ud800', 'x y/é',
  {}, { b: 1 }, { b: 'a', c: { d: 1 } }, { c: [1] }, { _jsonata_function: true, b: 1 }, { constructor: 1 },
  [], [0], [1], [''], [null], [undefined], [0, ''], [[]], [[1]], [{ b: 1 }], [{ b: 1 }, { b: 2 }],
];

test('each construct of the subset agrees with jsonata on a grid of special values', async () => {
  const partners = [undefined, null, 1, 'a', { b: 2 }, [3]];
  for (const source of SUBSET) {
    let fast = 0;
    for (const a of SPECIAL) for (const b of partners) if ((await differential(source, { a, b, c: a })) === 'fast') fast++;
    assert.ok(fast > 0, `${source} never answered on the fast path`);
  }
});

test('expressions outside the subset are left to jsonata entirely', () => {
  const outside = [
    'a[0]', 'a[b = 1]', 'a.(b)', '(a).b', 'a.$', 'a.*', '**.a', 'a.b.%.c', 'a^(b)', 'a@$x', 'a#$i', 'a{ "k": b }', '{ "k": 1 }.k',
    '$sum(a)', '$string(a, true)', '$string()', '$now()', 'function($x){ $x }', '$x', '$x[]', '$string',
    '{ a: 1 }', '{ "k": 1, "k": 2 }', '{ "_jsonata_lambda": 1 }', '{ "k": $x := 1 }', 'a ? $x := 1 : 2', '( $exists := a; b ?? 1 )',
    'a ~> $string()', 'a in b', '[1..3]', 'a.b[].c', '/x/', `${'('.repeat(120)}a${')'.repeat(120)}`,
  ];
  for (const source of outside) assert.equal(compile(source).fast, null, source);
});

test('jsonata corner cases the fast path reproduces', async () => {
  const cases: [string, unknown][] = [
    ['$string(a)', { a: 1 / 3 }], // 15 significant digits: "0.333333333333333"
    ['a[]', { a: [1] }], // the input array itself, not unwrapped
    ['a', { a: [{ b: 1 }] }], // a singleton array on the last step stays an array
    ['a[]', { a: { b: 1 } }],
    ['a[]', { a: null }],
    ['{ "b": 1, "1": 2, "a": 3, "0": 4 }', {}], // integer-like keys first, as in any JS object
    ['a + b', { a: 1e308, b: 1e308 }], // Infinity is returned, it only fails when used
    ['a != 1', {}], // undefined compares false for != too
    ['a ?? 1', { a: null }], // ?? tests existence, not null
    ['$not(a)', {}],
    ['a ? 1 : 2', { a: [0, ''] }],
    ['a ? 1 : 2', { a: [[], 1] }],
  ];
  for (const [source, inp] of cases) assert.equal(await differential(source, inp), 'fast', source);
  assert.equal(compile('$string(a)').fast!({ a: 1 / 3 }), '0.333333333333333');
  const arr = [1];
  assert.equal(compile('a[]').fast!({ a: arr }), arr);
});

/** The alpha family's mode expression, read from routes.yaml (the config under test, not a copy). */
function alphaMode(): string {
  const doc = parseYaml(readFileSync(join(PROJECT_ROOT, 'routes.yaml'), 'utf8')) as { families: { name: string; mode?: string }[] };
  const mode = doc.families.find((f) => f.name === 'alpha')?.mode;
  assert.equal(typeof mode, 'string', 'the alpha family has a mode expression');
  return mode!;
}

test('paths over arrays: jsonata corner cases the fast path reproduces', async () => {
  const bare = (o: Obj): Obj => Object.assign(Object.create(null) as Obj, o);
  const cases: [string, unknown, unknown][] = [
    // arrays of objects: mapped, flattened, a singleton unwrapped
    ['a.b', { a: [{ b: 1 }, { b: 2 }] }, [1, 2]],
    ['a.b', { a: [{ b: 1 }] }, 1],
    ['a.b[]', { a: [{ b: 1 }] }, [1]],
    ['a.b', { a: [{ b: 1 }, { c: 2 }] }, 1],
    ['a.b.c', { a: [{ b: [{ c: 1 }, { c: 2 }] }, { b: { c: 3 } }] }, [1, 2, 3]],
    // a path ending on array values: one is returned as is, several are spread one level
    ['a.b', { a: [{ b: [1] }] }, [1]],
    ['a.b', { a: [{ b: [] }] }, []],
    ['a.b', { a: [{ b: [[1, 2]] }] }, [[1, 2]]],
    ['a.b', { a: [{ b: [1, 2] }, { b: [3] }] }, [1, 2, 3]],
    ['a.b', { a: [{ b: [[1], 2] }, { b: [3] }] }, [[1], 2, 3]],
    ['a.b[]', { a: [{ b: [1] }] }, [1]],
    ['a.b[]', { a: [{ b: [] }] }, []],
    // nested arrays: searched through at any depth by the lookup, singletons unwrapped per item
    ['a.b', { a: [[{ b: 1 }], [{ b: 2 }]] }, [1, 2]],
    ['a.b', { a: [[{ b: [1] }]] }, 1], // the inner lookup spreads [1], then its singleton is unwrapped
    ['a.b', { a: [[{ b: [[1]] }]] }, [1]],
    ['a.b[]', { a: [[{ b: [[1]] }]] }, [[1]]],
    ['a.b', { a: [[[{ b: 1 }, { b: 2 }]], { b: 3 }] }, [1, 2, 3]],
    ['a.b.c', { a: [[{ b: [{ c: [1, 2] }] }]] }, [1, 2]],
    ['a.b', { a: [[]] }, undefined],
    // empty arrays, nulls, non-object items
    ['a.b', { a: [] }, undefined],
    ['a.b[]', { a: [] }, undefined],
    ['a', { a: [] }, []],
    ['a[]', { a: [] }, []],
    ['a.b', { a: [null, 1, 'x', true, { b: null }] }, null],
    ['a.b', { a: [null, { b: 1 }, 'x', { b: 2 }] }, [1, 2]],
    ['a.b.c', { a: [{ b: null }, { b: [null, { c: 0 }] }] }, 0],
    ['a.b', { a: [{ b: { c: 1 } }] }, { c: 1 }],
    ['a.b', { a: [{ constructor: 1 }, { b: 2 }] }, 2],
    ['a.constructor', { a: [{}, { constructor: 1 }] }, 1],
    // in the constructs of the subset
    ['$exists(a.b)', { a: [{ c: 1 }] }, false],
    ['$exists(a.b)', { a: [{ c: 1 }, { b: null }] }, true],
    ['a.b ? 1 : 0', { a: [{ b: 0 }, { b: '' }] }, 0],
    ['a.b ? 1 : 0', { a: [{ b: 0 }, { b: 'x' }] }, 1],
    ['a.b ? 1 : 0', { a: [{ b: [] }] }, 0],
    ['a.b ?? "d"', { a: [{ c: 1 }] }, 'd'],
    ['a.b ?? "d"', { a: [{ b: [] }] }, []],
    ['{ "k": a.b, "j": a.b[] }', { a: [{ b: 1 }] }, bare({ k: 1, j: [1] })], // jsonata's objects have no prototype
    ['{ "k": a.b }', { a: [{ c: 1 }] }, bare({})],
    ['a.b & "x"', { a: [{ b: 'y' }] }, 'yx'],
    ['[a.b, c]', { a: [{ b: 1 }, { b: [2, 3] }], c: 4 }, [1, 2, 3, 4]],
    ['a.b = 1', { a: [{ b: 1 }] }, true],
    ['a.b = 1', { a: [{ b: 1 }, { b: 1 }] }, false],
    ['$boolean(a.b)', { a: [{ b: 0 }, { b: 1 }] }, true],
    ['( $v := a.b; $v )', { a: [{ b: 1 }, { b: 2 }] }, [1, 2]],
    ['$.a.b', { a: [{ b: 1 }, { b: 2 }] }, [1, 2]],
    ['( $v := a; $v.b.c )', { a: { b: [{ c: 1 }, { c: 2 }] } }, [1, 2]],
  ];
  for (const [source, inp, expected] of cases) {
    assert.equal(await differential(source, inp), 'fast', `${source} on ${JSON.stringify(inp)}`);
    assert.deepStrictEqual(canon(compile(source).fast!(inp)), canon(expected), `${source} on ${JSON.stringify(inp)}`);
  }
  // a last step on a data array gives that very array, as jsonata does
  const arr = [1];
  assert.equal(compile('a.b').fast!({ a: [{ b: arr }] }), arr);
  // what the fast path leaves to jsonata: a variable holding an array, non-JSON holes, arrays jsonata flagged
  const seq = Object.assign([1, 2], { sequence: true });
  const bails: [string, unknown][] = [
    ['( $v := a; $v.b )', { a: [{ b: 1 }] }],
    ['a.b', { a: [undefined, { b: 1 }] }],
    ['a.b', { a: [{ b: seq }] }],
    ['a.b', { a: Array.from({ length: 5000 }, () => ({ b: 1 })) }],
  ];
  for (const [source, inp] of bails) assert.equal(await differential(source, inp), 'bail', source);
});

/** Objects over a few keys whose values are mostly arrays: arrays of objects, nested arrays, nulls, scalars. */
const arrayShaped = fc.letrec<{ v: unknown; arr: unknown[]; obj: Obj }>((tie) => ({
  v: fc.oneof({ maxDepth: 4, depthSize: 'small' }, fc.constantFrom(null, 0, 1, '', 'x', true, false), tie('arr'), tie('arr'), tie('obj'), tie('obj')),
  arr: fc.array(tie('v'), { maxLength: 3 }),
  obj: fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('v'), { maxKeys: 3 }),
})).obj;

const ARRAY_PATHS = [
  'a', 'a.b', 'a.b.c', 'a.b.c.a', 'a[]', 'a.b[]', 'a.b.c[]', '$.a.b', '$$.a.b.c',
  '$exists(a.b.c)', '$exists(a.b) ? "y" : "n"', 'a.b ? 1 : 0', 'a.b.c ?? "d"', 'a.b ?: "d"', 'a.b and a.c',
  '{ "k": a.b, "j": a.b.c[] }', 'a.b & "x"', '"x" & a.b.c', '[a.b, a.c, [a.b]]', 'a.b = 1', 'a.b != null',
  '$boolean(a.b)', '$not(a.b.c)', '$string(a.b)', '-a.b', 'a.b + 1',
  '( $v := a.b; { "v": $v, "e": $exists($v) } )', '( $v := a; $v.b )',
];

test('paths over arrays agree with jsonata on random array-shaped inputs', async () => {
  let arrays = 0; // fast answers where the path met an array before its last step
  for (const source of ARRAY_PATHS) {
    assert.notEqual(compile(source).fast, null, `${source} compiles to the fast path`);
    let fast = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(arrayShaped, async (inp) => {
        runs++;
        if ((await differential(source, inp)) === 'fast') {
          fast++;
          if (Array.isArray(inp.a)) arrays++;
        }
      }),
      FC,
    );
    // only a variable holding an array, and a jsonata error, leave an input to jsonata here
    if (source !== '( $v := a; $v.b )') assert.ok(fast > runs / 4, `${source}: ${fast} fast answers of ${runs}`);
  }
  assert.ok(arrays > 1000, `${arrays} fast answers over arrays`);
});

test('every family mode expression agrees with jsonata on the golden request bodies and array variants', async () => {
  const modes = new Map<string, string>();
  for (const file of ['routes.yaml', ...readdirSync(join(PROJECT_ROOT, 'routes.d')).map((f) => `routes.d/${f}`)]) {
    if (!file.endsWith('.yaml')) continue;
    const doc = parseYaml(readFileSync(join(PROJECT_ROOT, file), 'utf8')) as { families?: { name: string; mode?: unknown }[] };
    for (const f of doc.families ?? []) if (typeof f.mode === 'string') modes.set(`${file}:${f.name}`, f.mode);
  }
  assert.ok(modes.size >= 5, 'family modes found');
  const bodies: unknown[] = goldenCases().map((g) => g.request.body);
  const png = { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } };
  bodies.push(
    { contents: [] },
    { contents: [{ parts: [] }] },
    { contents: [{ parts: [png] }] },
    { contents: [{ parts: [{ text: 't' }, png] }, { parts: [png] }] },
    { contents: [{ parts: [{ inlineData: null }] }] },
    { contents: [null, 'x', { parts: null }] },
    { contents: [[{ parts: [png] }]] },
    { contents: { parts: { inlineData: [] } } },
    { image: ['a', 'b'], images: [] },
  );
  let fastModes = 0;
  for (const [name, source] of modes) {
    let fast = 0;
    for (const body of bodies) for (const model of ['alpha-3-pro-image-preview', null]) if ((await differential(source, requestInput(body, model))) === 'fast') fast++;
    if (fast > 0) fastModes++;
    if (source === alphaMode()) assert.equal(fast, bodies.length * 2, `${name} answers every body on the fast path`);
  }
  assert.ok(fastModes >= 2, `${fastModes} mode expressions take the fast path`);
});

test('the alpha mode expression takes the fast path on realistic bodies', async () => {
  const mode = compileMapping(alphaMode(), 'routes.yaml');
  assert.equal(mode.fast, true);
  const text = { contents: [{ role: 'user', parts: [{ text: 'a lighthouse at dawn' }] }], generationConfig: { responseModalities: ['IMAGE'] } };
  const reference = {
    contents: [
      { role: 'user', parts: [{ text: 'a cat' }] },
      { role: 'model', parts: [{ text: 'here' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] },
      { role: 'user', parts: [{ text: 'make it blue' }] },
    ],
  };
  const model = 'alpha-3-pro-image-preview';
  assert.equal(await mode.evaluate({ body: text, params: { model }, query: {}, model }), 'text');
  assert.equal(await mode.evaluate({ body: reference, params: { model }, query: {}, model }), 'reference');
  let golden = 0;
  for (const g of goldenCases()) {
    const want = await compile(alphaMode()).expr.evaluate(requestInput(g.request.body, model));
    assert.equal(await mode.evaluate(requestInput(g.request.body, model)), want, g.name);
    golden++;
  }
  assert.deepEqual({ ...mode.stats }, { fast: 2 + golden, jsonata: 0 });
});
