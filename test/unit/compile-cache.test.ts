/**
 * The compile caches shared by every load of a process (src/mapping/compile-cache.ts, the expression
 * cache of mapping.ts, schema-compiler.ts): a reload reuses what it did not change and recompiles
 * what it did, locations in messages follow the file of the load they came from, ajv's rules on
 * `$id` and `$ref` are unchanged, and the caches stay bounded.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CompileCache, COMPILE_CACHE_LIMITS } from '../../src/mapping/compile-cache.js';
import { formatIssue } from '../../src/config/issues.js';
import { loadConfig } from '../../src/config/load.js';
import { compileMapping, expressionCache, MappingError } from '../../src/mapping/mapping.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { cachedSchemaCompiler, schemaCache } from '../../src/config/schema-compiler.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import { createAjv } from '../../src/schema/ajv.js';

const FIXTURE = join(PROJECT_ROOT, 'test/fixtures/reload');
const SCHEMA = 'schemas/public/alpha-generate-content.json';
const scratch: string[] = [];
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

/** Families block that replaces the fixture's (limitless) one, so family limits are compiled too. */
const FAMILIES = `families:
  - name: alpha
    models: [alpha-3-pro-image-preview]
    limits: { type: object, properties: { labels: { type: object, maxProperties: 3 } } }
`;

/** A scratch copy of test/fixtures/reload with the public schemas and a family with limits. */
function scratchConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-compile-cache-'));
  scratch.push(dir);
  cpSync(FIXTURE, dir, { recursive: true });
  cpSync(join(PROJECT_ROOT, 'schemas/public'), join(dir, 'schemas/public'), { recursive: true });
  writeFileSync(join(dir, 'routes.yaml'), readFileSync(join(dir, 'routes.yaml'), 'utf8').replace(/^families:[\s\S]*$/m, FAMILIES));
  return dir;
}

function load(dir: string): Snapshot {
  const { snapshot, issues } = loadConfig(dir, { env: {} });
  assert.ok(snapshot, issues.map(formatIssue).join('\n'));
  return snapshot;
}

/** Rewrites a file of the scratch dir through `edit`, failing when the edit changed nothing. */
function edit(dir: string, file: string, change: (text: string) => string): void {
  const before = readFileSync(join(dir, file), 'utf8');
  const after = change(before);
  assert.notEqual(after, before, `the edit of ${file} must change it`);
  writeFileSync(join(dir, file), after);
}

const op = (s: Snapshot) => s.profiles.get('alpha-native')!.operations.get('generateContent')!;
/** Cache misses (fresh compiles) that `fn` causes. */
function missesOf(cache: { stats(): { misses: number } }, fn: () => void): number {
  const before = cache.stats().misses;
  fn();
  return cache.stats().misses - before;
}

/** The small text-to-image body of bench/overhead: valid for the alpha route's schema. */
const OK_BODY = {
  contents: [{ role: 'user', parts: [{ text: 'a red bicycle' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
};
const RESPONSE_IN = { body: { candidates: [{ n: 1 }] }, public_model: 'alpha-3-pro-image-preview' };
/** A mapping's answer as plain JSON (the fast path builds null-prototype objects). */
const json = async (p: Promise<unknown>) => JSON.parse(JSON.stringify(await p)) as unknown;

test('a reload reuses every unchanged expression and recompiles only the one that changed', async () => {
  const dir = scratchConfig();
  const first = load(dir);
  assert.equal(
    missesOf(expressionCache, () => load(dir)),
    0,
    'an unchanged config compiles no expression again',
  );

  edit(dir, 'channels.yaml', (t) => t.replace('"modelVersion": public_model', '"modelVersion": public_model & "-v2"'));
  let second: Snapshot | undefined;
  assert.equal(
    missesOf(expressionCache, () => (second = load(dir))),
    1,
    'exactly the changed expression is compiled',
  );
  assert.deepEqual(await json(op(second!).response.body.evaluate(RESPONSE_IN)), { candidates: [{ n: 1 }], modelVersion: 'alpha-3-pro-image-preview-v2' });
  // The snapshot still serving in-flight requests keeps its own expression.
  assert.deepEqual(await json(op(first).response.body.evaluate(RESPONSE_IN)), { candidates: [{ n: 1 }], modelVersion: 'alpha-3-pro-image-preview' });
  // Per-snapshot counters are not shared through the cache.
  assert.notEqual(op(first).request.path.stats, op(load(dir)).request.path.stats);
});

test('after a reload that moved a line, a reused expression names its new file:line in errors', async () => {
  const dir = scratchConfig();
  // $number of a non-number fails in jsonata at run time (D3030), whatever path evaluates it.
  edit(dir, 'channels.yaml', (t) => t.replace('"modelVersion": public_model', '"modelVersion": $number(public_model)'));
  const before = load(dir);
  const line = Number(/:(\d+)$/.exec(op(before).response.body.where)![1]);
  assert.match(op(before).response.body.where, /channels\.yaml:\d+$/);

  edit(dir, 'channels.yaml', (t) => `# two lines\n# more\n${t}`);
  let after: Snapshot | undefined;
  assert.equal(
    missesOf(expressionCache, () => (after = load(dir))),
    0,
    'moving lines compiles nothing again',
  );
  const mapping = op(after!).response.body;
  assert.match(mapping.where, new RegExp(`channels\\.yaml:${line + 2}$`));

  const failure = async (s: Snapshot) => {
    const err = await op(s)
      .response.body.evaluate(RESPONSE_IN)
      .then(
        () => null,
        (e: unknown) => e,
      );
    assert.ok(err instanceof MappingError, 'the mapping fails');
    return err;
  };
  const newErr = await failure(after!);
  assert.match(newErr.message, new RegExp(`channels\\.yaml:${line + 2} failed: D3030`));
  assert.match(newErr.where, new RegExp(`channels\\.yaml:${line + 2}$`));
  const oldErr = await failure(before);
  assert.match(oldErr.message, new RegExp(`channels\\.yaml:${line} failed: D3030`));
});

test('one compiled expression evaluated concurrently under two locations keeps inputs and errors apart', async () => {
  // Outside mapping-fast's subset (it reads the clock), so every call runs jsonata's own evaluate().
  const source = '$millis() > 0 ? $sum(items.v) & "/" & tag';
  const a = compileMapping(source, 'a.yaml:1');
  const hits = expressionCache.stats().hits;
  const b = compileMapping(source, 'b.yaml:2');
  assert.equal(expressionCache.stats().hits, hits + 1, 'the second compile is answered by the cache');
  assert.equal(a.fast, false);
  const runs = Array.from({ length: 60 }, (_, i) => {
    const m = i % 2 ? a : b;
    return m.evaluate({ items: Array.from({ length: i + 1 }, () => ({ v: 1 })), tag: `t${i}` }).then((v) => assert.equal(v, `${i + 1}/t${i}`));
  });
  await Promise.all(runs);
  const bad = { items: [{ v: 'x' }], tag: 't' };
  await assert.rejects(a.evaluate(bad), (e: MappingError) => e.where === 'a.yaml:1' && e.message.startsWith('mapping at a.yaml:1 failed'));
  await assert.rejects(b.evaluate(bad), (e: MappingError) => e.where === 'b.yaml:2' && e.message.startsWith('mapping at b.yaml:2 failed'));
});

test('an unchanged schema file gives the same validator; a changed one a new validator with the new rule', () => {
  const dir = scratchConfig();
  const first = load(dir);
  const second = load(dir);
  const route = (s: Snapshot) => s.routes[0]!.body!.validate;
  assert.equal(route(second), route(first), 'the unchanged schema is reused');
  assert.equal(second.families[0]!.limits, first.families[0]!.limits, 'unchanged family limits are reused');
  assert.equal(route(first)(OK_BODY), true);

  edit(dir, SCHEMA, (t) => {
    const s = JSON.parse(t) as { required: string[] };
    s.required.push('labels');
    return JSON.stringify(s, null, 2);
  });
  edit(dir, 'routes.yaml', (t) => t.replace('maxProperties: 3', 'maxProperties: 1'));
  let third: Snapshot | undefined;
  assert.equal(
    missesOf(schemaCache, () => (third = load(dir))),
    2,
    'the changed schema and the changed limits are compiled',
  );
  assert.notEqual(route(third!), route(first));
  assert.equal(route(third!)(OK_BODY), false, 'the new rule (labels required) applies');
  assert.equal(route(first)(OK_BODY), true, 'the old snapshot keeps the old rule');
  const twoLabels = { labels: { a: '1', b: '2' } };
  assert.equal(first.families[0]!.limits!(twoLabels), true);
  assert.equal(third!.families[0]!.limits!(twoLabels), false);
});

test('the ajv options are part of the key: verbose validators are not handed out as terse ones', () => {
  const schema = () => ({ type: 'object', properties: { n: { type: 'integer', description: 'a whole number, options key test' } } });
  const terse = cachedSchemaCompiler({ allErrors: false }).compile(schema());
  const verbose = cachedSchemaCompiler({ allErrors: false, verbose: true }).compile(schema());
  assert.notEqual(terse, verbose);
  assert.equal(verbose({ n: 'x' }), false);
  assert.equal((verbose.errors![0]!.parentSchema as { description?: string }).description, 'a whole number, options key test');
  assert.equal(terse({ n: 'x' }), false);
  assert.equal(terse.errors![0]!.parentSchema, undefined);
  assert.equal(cachedSchemaCompiler({ allErrors: false, verbose: true }).compile(schema()), verbose, 'same options and text: reused');
});

test('a second schema with an $id already used in the load fails as ajv fails it, also when the first came from the cache', () => {
  const id = 'https://generation-gateway.local/test/compile-cache/dup.json';
  const one = () => ({ $id: id, type: 'object' });
  const other = () => ({ $id: id, type: 'array' });
  const plain = createAjv({ allErrors: false });
  plain.compile(one());
  const expected = (() => {
    try {
      plain.compile(other());
      return '';
    } catch (err) {
      return (err as Error).message;
    }
  })();
  assert.match(expected, /already exists/);

  cachedSchemaCompiler({ allErrors: false }).compile(one());
  const load2 = cachedSchemaCompiler({ allErrors: false });
  const hits = schemaCache.stats().hits;
  load2.compile(one());
  assert.equal(schemaCache.stats().hits, hits + 1, 'the first schema is answered by the cache');
  assert.throws(() => load2.compile(other()), { message: expected });
  // The identical text twice in one load is a clash too, as it was without the cache.
  const load3 = cachedSchemaCompiler({ allErrors: false });
  load3.compile(one());
  assert.throws(() => load3.compile(one()), { message: expected });
});

test('a schema referring to another by $id resolves it when that one came from the cache, and is not cached itself', () => {
  const base = 'https://generation-gateway.local/test/compile-cache/';
  const target = () => ({ $id: `${base}target.json`, type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] });
  const referrer = () => ({ $id: `${base}referrer.json`, type: 'object', properties: { inner: { $ref: 'target.json' } } });
  const first = cachedSchemaCompiler({ allErrors: false });
  first.compile(target());
  const v1 = first.compile(referrer());

  const second = cachedSchemaCompiler({ allErrors: false });
  const hits = schemaCache.stats().hits;
  second.compile(target());
  assert.equal(schemaCache.stats().hits, hits + 1);
  const v2 = second.compile(referrer());
  assert.equal(schemaCache.stats().hits, hits + 1, 'the referrer is not looked up in the cache');
  assert.notEqual(v2, v1, 'a schema with a reference out of itself is compiled in every load');
  assert.equal(v2({ inner: { n: 1 } }), true);
  assert.equal(v2({ inner: { n: 'x' } }), false);
  // Without the target in the load, the reference does not resolve: the cache does not leak it.
  assert.throws(() => cachedSchemaCompiler({ allErrors: false }).compile(referrer()), /can't resolve reference/);
});

test('a compile cache keeps at most its bound, dropping the least recently used first', () => {
  const cache = new CompileCache<object>({ maxEntries: 3, maxChars: 100 });
  for (const k of ['a', 'b', 'c']) cache.set(k, { k });
  assert.ok(cache.get('a'), 'a is used again');
  cache.set('d', { k: 'd' });
  assert.equal(cache.stats().entries, 3);
  assert.equal(cache.get('b'), undefined, 'b, the least recently used, is gone');
  assert.ok(cache.get('a'));

  const bySize = new CompileCache<object>({ maxEntries: 10, maxChars: 100 });
  for (const k of ['a', 'b', 'c']) bySize.set(k.repeat(40), {});
  assert.deepEqual([bySize.stats().entries, bySize.stats().size], [2, 80], 'the character bound holds');
  assert.equal(bySize.get('a'.repeat(40)), undefined, 'the oldest made room');
  bySize.set('x'.repeat(101), {});
  assert.equal(bySize.get('x'.repeat(101)), undefined, 'an entry larger than the whole bound is not kept');
  assert.ok(bySize.get('c'.repeat(40)));
});

test('the expression cache stays within its bound when far more expressions are compiled', () => {
  const { maxEntries } = COMPILE_CACHE_LIMITS.expressions;
  for (let i = 0; i < maxEntries + 200; i++) compileMapping(`{"n": ${i}, "bound": "test"}`, `bound.yaml:${i}`);
  assert.ok(expressionCache.stats().entries <= maxEntries, `${expressionCache.stats().entries} entries`);
  assert.ok(expressionCache.stats().size <= COMPILE_CACHE_LIMITS.expressions.maxChars);
  // The most recent ones are kept, the oldest have fallen out.
  assert.equal(
    missesOf(expressionCache, () => compileMapping(`{"n": ${maxEntries + 199}, "bound": "test"}`, 'x:1')),
    0,
  );
  assert.equal(
    missesOf(expressionCache, () => compileMapping('{"n": 0, "bound": "test"}', 'x:1')),
    1,
  );
});

test('a config of 1,000 channels fits: its second load compiles nothing', () => {
  const dir = scratchConfig();
  const channels = Array.from(
    { length: 1000 },
    (_, i) =>
      `  - { name: c${i}, profile: alpha-native, base_url: "http://127.0.0.1:${1024 + i}", secrets: { key: k }, groups: [default], models: [alpha-3-pro-image-preview], weight: ${1 + (i % 5)} }`,
  );
  edit(dir, 'channels.yaml', (t) => `${t.split('\nchannels:\n')[0]!}\nchannels:\n${channels.join('\n')}\n`);
  assert.equal(load(dir).channels.length, 1000);
  assert.equal(
    missesOf(expressionCache, () => load(dir)),
    0,
  );
  assert.equal(
    missesOf(schemaCache, () => load(dir)),
    0,
  );
});
