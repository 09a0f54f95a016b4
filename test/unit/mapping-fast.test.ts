/**
 * Differential tests of the mapping fast path (src/mapping/mapping-fast.ts) against jsonata itself:
 * for every input, the fast path must give exactly what jsonata gives, or BAIL. Also pins that the
 * alpha mappings really take the fast path, so the optimisation cannot be lost silently.
 * `FC_SEED=<n>` replays a failing property run.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import type jsonata from 'jsonata';
import { parse as parseYaml, parseDocument } from 'yaml';
import { compileMapping, limitedJsonata, MAPPING_LIMITS, MappingError } from '../../src/mapping/mapping.js';
import { BAIL, compileFast, FastBudgetExceeded } from '../../src/mapping/mapping-fast.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { formatIssue } from '../../src/config/issues.js';
import { fallbackWarnings, type GoldenData, goldenData, loadShipped } from '../helpers/shipped-mappings.js';

/** fast: the same value; bail: jsonata threw; lost: jsonata answered what the fast path left to it; budget: both failed, the fast path on its budget; none: not compiled. */
type Outcome = 'fast' | 'bail' | 'lost' | 'budget' | 'none';
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

/** Runs both; fails unless the fast path bailed, agreed with jsonata exactly, or ran over its budget where jsonata failed too. */
async function differential(source: string, input: unknown): Promise<Outcome> {
  const { expr, fast } = compile(source);
  // fast first: jsonata tags input arrays it returns, and the fast path must see the input pristine
  let got: unknown = BAIL;
  let overBudget: FastBudgetExceeded | undefined;
  try {
    got = fast ? fast(input) : BAIL;
  } catch (err) {
    if (!(err instanceof FastBudgetExceeded)) throw err;
    overBudget = err;
  }
  let want: unknown;
  let error: { code?: string } | undefined;
  try {
    want = await expr.evaluate(input);
  } catch (err) {
    error = err as { code?: string };
  }
  if (!fast) return 'none';
  if (overBudget) {
    assert.ok(error, `the fast path ran over its budget (${overBudget.message}) where jsonata answered: ${source}\ninput: ${JSON.stringify(input)}`);
    return 'budget';
  }
  if (got === BAIL) return error ? 'bail' : 'lost';
  const show = () => `${source}\ninput: ${JSON.stringify(input)}`;
  assert.equal(error, undefined, `jsonata threw ${error?.code} where the fast path answered: ${show()}`);
  assert.deepStrictEqual(canon(got), canon(want), show());
  assert.equal(JSON.stringify(got), JSON.stringify(want), show());
  return 'fast';
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
function requestInput(body: unknown, model: unknown): Obj {
  return { body, params: { model }, query: {}, model, public_model: model, channel: { name: 'c', settings: {} }, now: NOW };
}
/** Random JSON-ish inputs over a few keys, with the values jsonata treats specially. */
const keys = ['a', 'b', 'c', 'x', '0', 'constructor', '_jsonata_function', 'sequence', 'outerWrapper', 'tupleStream'];
const scalar = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -0,
    1,
    2,
    0.1,
    1 / 3,
    1e21,
    1e-7,
    1e308,
    -1e308,
    NaN,
    Infinity,
    '',
    'a',
    'b',
    'x y/é',
    '12',
    '1e3',
    '-0.5',
    '0x1F',
    '\ud800',
    'true',
    'ab1, b2',
    '2026-01-01T00:00:00Z',
  ),
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

/** A request mapping's input (docs/channels-yaml.md, "Mapping inputs"), with the task fields a submission adds and the task a remix starts from. */
function shippedRequest(body: unknown, model: unknown): Obj {
  return { ...requestInput(body, model), task: { id: 'task_golden' }, source: { id: 'task_source', upstream_id: 'up-0', model, public_model: model } };
}

/** A response, error, task or answer mapping's input: the union of what those mappings see. */
function shippedResponse(status: unknown, headers: unknown, body: unknown, request: unknown, model: unknown): Obj {
  const task = { id: 'task_golden', upstream_id: 'up-1', context: {}, model, public_model: model, created_at: NOW };
  return {
    status,
    headers,
    body,
    model,
    public_model: model,
    now: NOW,
    request,
    task,
    tasks: [task],
    result: { url: 'https://vendor.example/r.mp4' },
    index: 0,
    channel: { name: 'c', settings: {} },
  };
}

/** The golden inputs of `data` (every `step`-th), and hand-made variants of the first few. */
function shippedInputs(data: readonly GoldenData[], step: number): Obj[] {
  const out: Obj[] = [];
  for (const d of data) {
    d.requests.forEach((r, i) => {
      if (i % step === 0) out.push(shippedRequest(r.body, r.model));
      if (i < 2) for (const body of [null, [], [r.body], 'x', 7, {}]) out.push(shippedRequest(body, r.model));
      if (i < 1) for (const model of [null, 7, '']) out.push(shippedRequest(r.body, model));
    });
    d.answers.forEach((a, i) => {
      const model = d.requests[0]?.model ?? 'm';
      if (i % step === 0) out.push(shippedResponse(a.status, a.headers, a.body, a.request, model));
      if (i < 2) for (const body of [null, [], [a.body], 'x', {}]) out.push(shippedResponse(a.status, a.headers, body, a.request, model));
      if (i < 1) for (const status of ['200', null, undefined, 500.5]) out.push(shippedResponse(status, a.headers, a.body, a.request, model));
    });
  }
  out.push({}, { status: 200 }, { body: {} });
  return out;
}

/** Every place (object key or array index) of a JSON value, as paths from its root. */
function placesOf(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (v === null || typeof v !== 'object' || at.length > 8) return out;
  for (const [k, x] of Object.entries(v)) {
    const here = [...at, Array.isArray(v) ? Number(k) : k];
    out.push(here);
    placesOf(x, here, out);
  }
  return out;
}

/** A golden input with one place replaced by a generated value (or removed). */
function mutated(base: Obj, pick: number, v: unknown): Obj {
  const copy = structuredClone(base);
  const places = placesOf(copy);
  const path = places[pick % places.length]!;
  let parent = copy as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  if (v === undefined) delete parent[path[path.length - 1]!];
  else parent[path[path.length - 1]!] = v;
  return copy;
}

test('no shipped mapping falls back to jsonata', () => {
  const { mappings, issues } = loadShipped();
  assert.ok(mappings.length > 150, `${mappings.length} shipped mappings found`);
  // `gateway check` warns for each one that would (scripts/mapping-fallbacks.mjs lists them by construct)
  assert.deepEqual(fallbackWarnings(issues).map(formatIssue), []);
  for (const m of mappings) assert.notEqual(compile(m.source).fast, null, `${m.where} compiles to the fast path`);
});

test('a mapping that falls back is reported by the config load with its file:line and construct', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fast-fallback-'));
  try {
    cpSync(join(PROJECT_ROOT, 'test/golden-made-up/config'), dir, { recursive: true });
    const channels = join(dir, 'channels.yaml');
    writeFileSync(
      channels,
      readFileSync(channels, 'utf8').replace(`path: '"/v2/draw/" & $segment(model)'`, `path: '"/v2/draw/" & $segment(model) & $string($millis())'`),
    );
    const warnings = fallbackWarnings(loadShipped(dir).issues);
    assert.deepEqual(
      warnings.map((w) => [w.file, w.severity, w.message]),
      [['channels.yaml', 'warning', 'mapping falls back to jsonata ($millis)']],
    );
    assert.ok(warnings[0]!.line > 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every shipped mapping agrees with jsonata on its golden inputs, their variants and mutations of them', async () => {
  const { mappings } = loadShipped();
  const golden = goldenData();
  const all = [...golden.values()];
  // route, family and price mappings see requests and task records of every profile: a sample of each
  const everyProfile = shippedInputs(all, 24);
  // every other golden input of the mapping's own profile (every one runs end to end in `gateway golden`)
  const byProfile = new Map([...golden].map(([name, d]) => [name, shippedInputs([d], 2)]));
  let total = 0;
  const quiet: string[] = [];
  const lost: string[] = [];
  for (const m of mappings) {
    const inputs = (m.profile && byProfile.get(m.profile)) || everyProfile;
    let fast = 0;
    for (const inp of inputs) {
      const outcome = await differential(m.source, inp);
      if (outcome === 'fast') fast++;
      // the shipped config is all inside the fast path: only jsonata's own errors go back to it
      if (outcome === 'lost') lost.push(`${m.where} on ${JSON.stringify(inp).slice(0, 300)}`);
    }
    const golden = inputs.filter((i) => Object.keys(i).length > 3);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...golden), fc.nat(), fc.option(value, { nil: undefined }), async (base, pick, v) => {
        if ((await differential(m.source, mutated(base, pick, v))) === 'fast') fast++;
      }),
      { ...FC, numRuns: 6 },
    );
    total += inputs.length + 6;
    if (fast === 0) quiet.push(m.where);
  }
  assert.ok(total > 8_000, `${total} inputs`);
  // each mapping answers on the fast path at least on some input (a mapping that always bails would be a lost optimisation)
  assert.deepEqual(quiet, []);
  assert.deepEqual(lost.slice(0, 10), [], `${lost.length} golden inputs left to jsonata`);
});

test('a bail falls back to jsonata, with its value or its error', async () => {
  // a replacement by a function is left to jsonata at run time
  const m = compileMapping('$replace(a, /x/, b ? function($m) { "y" } : "z")', 'test:1');
  assert.equal(m.fast, true);
  assert.equal(await m.evaluate({ a: 'axa', b: true }), 'aya');
  assert.equal(await m.evaluate({ a: 'axa', b: false }), 'aza');
  assert.deepEqual({ ...m.stats }, { fast: 1, jsonata: 1 });
  const add = compileMapping('a + 1', 'test:2');
  await assert.rejects(add.evaluate({ a: 'x' }), { name: 'MappingError', jsonataCode: 'T2001' });
  assert.deepEqual({ ...add.stats }, { fast: 0, jsonata: 1 });
  const outside = compileMapping('a.*', 'test:3');
  assert.equal(outside.fast, false);
  assert.deepEqual([...((await outside.evaluate({ a: { b: 1, c: 2 } })) as unknown[])], [1, 2]);
});

/** One or more expressions per construct of the subset; each must compile to the fast path. */
const SUBSET = [
  'a',
  'a.b',
  'a.b.c',
  'a[]',
  'a.b[]',
  'a[][]',
  '$',
  '$$',
  '$.a',
  '$$.a.b',
  'constructor',
  'a.constructor',
  '`0`',
  'a."b"',
  '"lit"',
  '12.5',
  'true',
  'false',
  'null',
  '-a',
  '-a.b',
  '- -1',
  'a ?? "d"',
  'a.b ?? b ?? c',
  'a ?: "d"',
  'a ? b : c',
  'a ? b',
  'a.b ? 1 : 0',
  'a and b',
  'a or b.c',
  'a = b',
  'a != b',
  'a = "a"',
  'a = 1',
  'a != null',
  'a < b',
  'a >= 1',
  'a < "b"',
  'a > b.c',
  'a + b',
  'a - 1',
  'a * b',
  'a / b',
  'a % 2',
  'a + b.c * 2',
  'a & b',
  '"x" & a & b.c',
  'a & 1.5 & true & null',
  '$string(a)',
  '$exists(a.b)',
  '$not(a)',
  '$boolean(a)',
  '$number(a)',
  '$encodeUrlComponent(a)',
  '$string(a + 1)',
  '{ "k": a, "1": b, "j": a.b[], "0": c }',
  '{}',
  '{ "n": { "m": a.b, "o": b } }',
  '[a, b]',
  '[a, [b], c[]]',
  '[]',
  '[[]]',
  '[a.b, 1, [2, a]]',
  '()',
  '(a; b)',
  '( $u := a; $v := $u.b ?? 0; { "u": $u, "v": $v + 1 } )',
  '( $x := a; ( $x := b; $x ) & $x )',
  '( $x := a; $x := $x.b; $x )',
  '( $string := a; $string )',
  '( $y := a[]; $y )',
  // the alpha response mapping over random inputs too
  '( $u := body.usageMetadata; $p := $u.promptTokenCount ?? 0; { "candidates": body.candidates[], "total": $p + ($u.c ?? 0), "t": $u.trafficType ?? "ON_DEMAND" } )',
  // filters: numeric indexes (negative, fractional, several), predicates, on steps and on any value
  'a[0]',
  'a[-1]',
  'a[1.5]',
  'a[[0, 2]]',
  'a[b]',
  'a[b = 1]',
  'a[$ > 1]',
  'a.b[0]',
  'a[0].b',
  'a[0][0]',
  'a.b[c][0]',
  '$.a[-1].b',
  '( $v := a; $v[0] )',
  '( $v := a; $v[b = 1].c )',
  '[a, b][1]',
  'a[]' + '[0]',
  'a[b][]',
  // mapping over arrays: expressions as steps, object and array constructors per item, `$` in a step
  'a.(b + 1)',
  'a.{ "k": b }',
  'a.[b, c]',
  'a.$string($)',
  'a.$',
  '(a).b',
  'a.($ & "x")',
  '$$.a.($$.b)',
  'a.b.(c ? 1 : 0)',
  // grouping, tuples (`#$i` positions, `@$v` focus)
  'a{ "k": b }',
  'a{ b: c }',
  'a.{ b: c }',
  '{ a: b }',
  'a#$i.{ "i": $i, "v": $ }',
  'a#$i[$i > 0]',
  'a@$x.b',
  'a@$x.b.{ "x": $x, "b": $ }',
  // operators: in, ranges, deep equality
  'a in ["x", 1, true]',
  'a in b',
  '"a" in a',
  '[1..3]',
  '[a..b]',
  '$count([0..a])',
  'a = b',
  'a = { "b": 1 }',
  '[a] = [b]',
  // lambdas and closures, recursion, function values
  '( $f := function($x) { $x & "!" }; $f(a) )',
  '( $f := function($x, $y) { $x + $y }; $f(a, b) )',
  '( $down := function($n) { $n > 0 ? $down($n - 1) : "done" }; $type(a) = "number" and a < 50 ? $down(a) )',
  '( $fact := function($n) { $n <= 1 ? 1 : $n * $fact($n - 1) }; $type(a) = "number" and a < 20 ? $fact(a) )',
  '( $k := a; $f := function($x) { $x & $k }; $k := "z"; $f(b) )',
  '( $f := function($x) { $x }; $f() )',
  'function($x) { $x }(a)',
  '( $f := function($x)<n:n> { $x * 2 }; $f(a) )',
  '( $f := $uppercase; $f(a) )',
  // higher-order functions, with one to three parameters, native functions passed as values
  '$map(a, function($v) { $v })',
  '$map(a, function($v, $i) { $string($v) & $i })',
  '$map(a, function($v, $i, $arr) { $count($arr) })',
  '$map(a, $string)',
  '$filter(a, function($v) { $v })',
  '$filter(a, function($v, $i) { $i > 0 })',
  '$reduce(a, function($x, $y) { $x + $y })',
  '$reduce(a, function($x, $y) { $x & $y }, "s")',
  '$reduce(a, function($x, $y, $i) { $x + $i }, 0)',
  '$sort(a)',
  '$sort(a, function($l, $r) { $l.b > $r.b })',
  '$sort(a.b)',
  // chaining
  'a ~> $string()',
  'a ~> $count()',
  'a ~> $type',
  'a ~> $substring(1) ~> $uppercase()',
  'a ~> function($x) { $x }',
  // regular expressions and the string functions that take them
  '$contains(a, /^a/)',
  '$contains(a, "b")',
  '$match(a, /([a-z])([0-9]*)/)',
  '$match(a, /b/, 1)',
  '$match(a, /x/)[0].groups',
  '$replace(a, /a(b)?/, "[$1]")',
  '$replace(a, "a", "b")',
  '$replace(a, /./, "$0$$", 2)',
  '$split(a, /[ ,]/)',
  '$split(a, "")',
  '$split(a, "b", 1)',
  // built-ins of the config and their neighbours, with jsonata's argument rules (context, optional, types)
  '$count(a)',
  '$type(a)',
  '$exists(a)',
  '$lookup(a, "b")',
  '$lookup(a, b)',
  '$keys(a)',
  '$string(a, true)',
  '$string()',
  '$join(a, ",")',
  '$join(a)',
  '$substring(a, 1, 2)',
  '$substring(a, -2)',
  '$round(a, 2)',
  '$round(a)',
  '$uppercase(a)',
  '$lowercase(a)',
  '$append(a, b)',
  '$merge([a, b])',
  '$merge(a)',
  '$min(a)',
  '$max(a)',
  '$sum(a)',
  '$floor(a)',
  '$substringBefore(a, "b")',
  '$substringAfter(a, ",")',
  '$toMillis(a)',
  '$distinct(a)',
  '$reverse(a)',
  '$abs(a)',
  '$trim(a)',
  '$length(a)',
  '$segment(a)',
  '$encodeUrlComponent(a)',
  '$number(a)',
  '$not(a)',
  '$boolean(a)',
  '$spread(a)',
  '$zip(a, b)',
  '$average(a)',
  '$pad(a, 3)',
  '$formatBase(a, 2)',
  '$base64encode(a)',
];

test('each construct of the subset agrees with jsonata on random inputs', async () => {
  for (const source of SUBSET) {
    assert.notEqual(compile(source).fast, null, `${source} compiles to the fast path`);
    // Agreement only: whether 25 random inputs include one the construct answers (a string $segment
    // takes, say) depends on the seed; the grid of special values below checks that each does.
    await fc.assert(
      fc.asyncProperty(input, async (inp) => {
        await differential(source, inp);
      }),
      { ...FC, numRuns: 25 },
    );
  }
});

/** Values jsonata treats specially, for an exhaustive grid: random inputs hit them too rarely. */
const SPECIAL: unknown[] = [
  undefined,
  null,
  true,
  false,
  0,
  -0,
  1,
  2,
  0.1,
  1 / 3,
  1e21,
  1e-7,
  1e308,
  NaN,
  Infinity,
  -Infinity,
  '',
  ' 12',
  'a',
  'b',
  '12',
  '1e3',
  '-0.5',
  '0x1F',
  '0x1Fzz',
  '0b2',
  '\ud800',
  'x y/é',
  'ab1, b2',
  'aab',
  '2026-01-01T00:00:00Z',
  {},
  { b: 1 },
  { b: 'a', c: { d: 1 } },
  { c: [1] },
  { _jsonata_function: true, b: 1 },
  { constructor: 1 },
  [],
  [0],
  [1],
  [''],
  [null],
  [undefined],
  [0, ''],
  [[]],
  [[1]],
  [{ b: 1 }],
  [{ b: 1 }, { b: 2 }],
  [3, 1, 2],
  ['b', 'a'],
  [
    { b: 2, c: 1 },
    { b: 1, c: 0 },
  ],
  [1, 'x'],
  [1.5, -2.25],
  [{ b: 1 }, { b: { c: 1 } }],
];

test('each construct of the subset agrees with jsonata on a grid of special values', async () => {
  const partners = [undefined, 1, 'a', [{ b: 2 }, 3]];
  for (const source of SUBSET) {
    let fast = 0;
    for (const a of SPECIAL) for (const b of partners) if ((await differential(source, { a, b, c: a })) === 'fast') fast++;
    assert.ok(fast > 0, `${source} never answered on the fast path`);
  }
});

test('a runaway stops on its own budget and fails with its file:line, without asking jsonata', async () => {
  const cases: [string, string][] = [
    ['( $f := function($x) { 1 + $f($x) }; $f(1) )', 'D1011'], // nested calls: depth
    ['( $f := function($x) { $f($x) }; $f(1) )', 'G0002'], // a tail call loops at constant depth: steps
    ['$append([1..60000], [1..60000])', 'D2015'], // sequence
    ['$sum($map([1..3000], function($x) { $count([1..1000][$ > $x]) }))', 'G0002'], // steps
  ];
  for (const [source, code] of cases) {
    const m = compileMapping(source, 'runaway.yaml:7');
    assert.equal(m.fast, true, source);
    await assert.rejects(m.evaluate({}), (err: unknown) => {
      assert.ok(err instanceof MappingError, String(err));
      assert.equal(err.where, 'runaway.yaml:7');
      assert.equal(err.jsonataCode, code, source);
      assert.match(err.message, /^mapping at runaway\.yaml:7 failed: [DG]\d{4} the mapping ran over its budget/);
      return true;
    });
    assert.deepEqual({ ...m.stats }, { fast: 0, jsonata: 0 }, `${source}: jsonata is not asked to run it again`);
  }
  // the same expressions within their budget answer
  const fine = compileMapping('$sum($map([1..30], function($x) { $count([1..100][$ > $x]) }))', 'fine.yaml:1');
  assert.equal(await fine.evaluate({}), 2535);
  assert.deepEqual({ ...fine.stats }, { fast: 1, jsonata: 0 });
});

test('expressions outside the subset are left to jsonata entirely', () => {
  const outside = [
    'a.*',
    '**.a',
    'a.b.%.c',
    'a^(b)',
    'a^(>b).c',
    'a ~> |b|{ "c": 1 }|',
    '$substring(?, 1)',
    '$now()',
    '$millis()',
    '$random()',
    '$shuffle(a)',
    '$eval("1")',
    '$single(a)',
    '$each(a, function($v, $k) { $k })',
    '$sift(a, function($v) { $v })',
    '[$x := 1, $x]',
    '{ "k": $x := 1 }',
    '( $f := $now; $f() )',
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
  // recursion: a tail call runs in jsonata's trampoline (no depth), another call nests
  const gcd = '( $gcd := function($a, $b) { $b = 0 ? $a : $gcd($b, $a % $b) }; $gcd(a, b) )';
  assert.equal(compile(gcd).fast!({ a: 1071, b: 462 }), 21);
  const loop = '( $loop := function($n) { $n = 0 ? "done" : $loop($n - 1) }; $loop(a) )';
  const deep: [string, unknown][] = [
    [gcd, { a: 12, b: 18 }],
    [loop, { a: 400 }],
    ['( $f := function($n) { $n = 0 ? 0 : 1 + $f($n - 1) }; $f(a) )', { a: 50 }],
  ];
  for (const [source, inp] of deep) assert.equal(await differential(source, inp), 'fast', source);
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
  /** An array of `length` with only the items `at` gives: the others are holes. */
  const sparse = (length: number, at: Record<number, unknown>): unknown[] => Object.assign(new Array(length), at);
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
    // a sparse array (a deleted item): jsonata flattens with forEach, so a hole is no item at all,
    // where an undefined item is one (found by the shipped-mappings property with FC_SEED=-393919148)
    ['[a.{"x": 1}]', { a: sparse(2, { 1: { b: 1 } }) }, [bare({ x: 1 })]],
    ['[a.{"x": 1}]', { a: [undefined, { b: 1 }] }, [bare({ x: 1 }), bare({ x: 1 })]],
    ['[a.b.{"x": 1}]', { a: { b: sparse(1, {}) } }, []],
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
  // variables holding arrays, holes, arrays jsonata flagged, long arrays: all modelled as jsonata does
  const modelled: [string, unknown][] = [
    ['( $v := a; $v.b )', { a: [{ b: 1 }] }],
    ['( $v := a; $v.b )', { a: [{ b: 1 }, { b: [2, 3] }] }],
    ['a.b', { a: [undefined, { b: 1 }] }],
    ['a.b', { a: [{ b: seq }] }],
    ['a.b', { a: Array.from({ length: 5000 }, () => ({ b: 1 })) }],
  ];
  for (const [source, inp] of modelled) assert.equal(await differential(source, inp), 'fast', source);
  // what jsonata rejects is left to it, to report its own error
  const rejected: [string, unknown][] = [
    ['a + 1', { a: 'x' }],
    ['-a', { a: [1, 2] }],
    ['a < b', { a: 1, b: 'x' }],
    ['a.b[0] > 1', { a: { b: [true] } }],
    ['$substring(a, "x")', { a: 'abc' }],
    ['{ a: 1 }', { a: 1 }],
    ['$sort(a)', { a: [1, 'x'] }],
    ['$error("no")', {}],
  ];
  for (const [source, inp] of rejected) assert.equal(await differential(source, inp), 'bail', source);
});

/** Objects over a few keys whose values are mostly arrays: arrays of objects, nested arrays, nulls, scalars. */
const arrayShaped = fc.letrec<{ v: unknown; arr: unknown[]; obj: Obj }>((tie) => ({
  v: fc.oneof({ maxDepth: 4, depthSize: 'small' }, fc.constantFrom(null, 0, 1, '', 'x', true, false), tie('arr'), tie('arr'), tie('obj'), tie('obj')),
  arr: fc.array(tie('v'), { maxLength: 3 }),
  obj: fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('v'), { maxKeys: 3 }),
})).obj;

const ARRAY_PATHS = [
  'a',
  'a.b',
  'a.b.c',
  'a.b.c.a',
  'a[]',
  'a.b[]',
  'a.b.c[]',
  '$.a.b',
  '$$.a.b.c',
  '$exists(a.b.c)',
  '$exists(a.b) ? "y" : "n"',
  'a.b ? 1 : 0',
  'a.b.c ?? "d"',
  'a.b ?: "d"',
  'a.b and a.c',
  '{ "k": a.b, "j": a.b.c[] }',
  'a.b & "x"',
  '"x" & a.b.c',
  '[a.b, a.c, [a.b]]',
  'a.b = 1',
  'a.b != null',
  '$boolean(a.b)',
  '$not(a.b.c)',
  '$string(a.b)',
  '-a.b',
  'a.b + 1',
  '( $v := a.b; { "v": $v, "e": $exists($v) } )',
  '( $v := a; $v.b )',
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
    assert.ok(fast > runs / 4, `${source}: ${fast} fast answers of ${runs}`);
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
    for (const body of bodies)
      for (const model of ['alpha-3-pro-image-preview', null]) if ((await differential(source, requestInput(body, model))) === 'fast') fast++;
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
