/**
 * What the fuzzer sends: hostile requests over every route of the config, each in one category
 * (broken JSON, wrong types, prototype keys, deep nesting, huge numbers and strings, bad
 * multipart, bad percent-escapes, long headers and URLs, odd methods and media types). Requests
 * are raw bytes on the wire, so nothing is normalised by a client library on the way.
 */
import fc from 'fast-check';
import type { CompiledRoute } from '../../src/config/snapshot.js';
import { getAt, kindOf, otherKindArb, pathsOf, withAt, type Json } from '../helpers/hostile.js';
import { minimalBody, pathOf, type Seed } from './corpus.js';
import { modelsOf } from '../helpers/route-parts.js';
import { brokenMultipartArb } from './multipart-cases.js';

/** One request as it goes on the wire. */
export interface FuzzRequest {
  readonly category: string;
  readonly method: string;
  /** The request target exactly as sent (may hold bytes a client library would refuse). */
  readonly target: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer | null;
  /** True when closing the connection without an answer is a fair response (broken framing). */
  readonly mayClose: boolean;
}

/** The categories, each with the share of requests it gets. */
export const CATEGORIES = [
  'broken-json',
  'wrong-types',
  'prototype-keys',
  'deep-nesting',
  'huge-values',
  'bad-multipart',
  'bad-escapes',
  'long-headers',
  'long-url',
  'odd-methods',
] as const;

/** Where the requests go and as whom. */
export interface Targets {
  readonly routes: readonly CompiledRoute[];
  /** Valid requests per route id. */
  readonly seeds: ReadonlyMap<string, readonly Seed[]>;
  readonly key: string;
}

const json = (key: string): [string, string][] => [
  ['authorization', `Bearer ${key}`],
  ['content-type', 'application/json'],
];

/** The valid body and path a mutation starts from, for a route with a JSON body. */
function baseOf(t: Targets, route: CompiledRoute, pick: number): { target: string; body: Json } {
  const seeds = t.seeds.get(route.id) ?? [];
  const seed = seeds.length > 0 ? seeds[pick % seeds.length]! : null;
  return seed ? { target: seed.path, body: seed.body as Json } : { target: pathOf(route, 'task_AAAAAAAAAAAAAAAAAAAAAAAA'), body: minimalBody(route) as Json };
}

/** A route with a JSON body, its base request, and a random path inside the body. */
function jsonRequestArb(t: Targets) {
  const routes = t.routes.filter((r) => r.body?.contentTypes.includes('application/json'));
  return fc.tuple(fc.constantFrom(...routes), fc.nat(), fc.nat()).map(([route, pick, at]) => {
    const base = baseOf(t, route, pick);
    const paths = pathsOf(base.body);
    return { route, ...base, path: paths.length > 0 ? paths[at % paths.length]! : null };
  });
}

const bodyReq = (category: string, route: CompiledRoute, target: string, key: string, body: string | Buffer, extra: [string, string][] = []): FuzzRequest => ({
  category,
  method: route.method,
  target,
  headers: [...json(key), ...extra],
  body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'),
  mayClose: false,
});

function brokenJson(t: Targets): fc.Arbitrary<FuzzRequest> {
  const damage = fc.oneof(
    fc.nat().map((n) => (s: string) => s.slice(0, n % (s.length + 1))),
    fc.tuple(fc.nat(), fc.constantFrom(',', '}', ']', '"', '\\', '\u0000', 'NaN', 'Infinity', '-', '.', 'e', '/*x*/', "'", '\ud800', '\ufeff')).map(
      ([n, ins]) =>
        (s: string) =>
          s.slice(0, n % (s.length + 1)) + ins + s.slice(n % (s.length + 1)),
    ),
    fc.constantFrom('{}{}', ' x', ',', '\u0000', ']').map((tail) => (s: string) => s + tail),
    fc.constant((s: string) => '\ufeff' + s),
    fc.constant((s: string) => s.replace(/":/, '":1,"x":')),
  );
  const invalidUtf8 = fc
    .tuple(fc.nat(), fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80]))
    .map(([n, bytes]) => (s: string) => {
      const b = Buffer.from(s, 'utf8');
      const at = n % (b.length + 1);
      return Buffer.concat([b.subarray(0, at), Buffer.from(bytes), b.subarray(at)]);
    });
  return fc
    .tuple(jsonRequestArb(t), fc.oneof(damage, invalidUtf8))
    .map(([r, f]) => bodyReq('broken-json', r.route, r.target, t.key, f(JSON.stringify(r.body))));
}

function wrongTypes(t: Targets): fc.Arbitrary<FuzzRequest> {
  return jsonRequestArb(t)
    .filter((r) => r.path !== null)
    .chain((r) => otherKindArb(kindOf(getAt(r.body, r.path!))).map((v) => ({ r, v })))
    .chain(({ r, v }) =>
      fc.constantFrom<Json>(v, null).map((value) => bodyReq('wrong-types', r.route, r.target, t.key, JSON.stringify(withAt(r.body, r.path!, value)))),
    );
}

function prototypeKeys(t: Targets): fc.Arbitrary<FuzzRequest> {
  const name = fc.constantFrom('__proto__', 'constructor', 'prototype', '__defineGetter__', 'hasOwnProperty', 'toString', 'valueOf', 'toJSON');
  const value = fc.constantFrom<Json>({ polluted: true }, { prototype: { polluted: true } }, 'x', 1, null, [1]);
  return fc.tuple(jsonRequestArb(t), name, value).map(([r, key, v]) => {
    // Into the body itself or into an object inside it.
    const objects = [[], ...pathsOf(r.body)].filter((p) => {
      let node: Json = r.body;
      for (const seg of p) node = (node as Record<string, Json>)[seg as string]!;
      return node !== null && typeof node === 'object' && !Array.isArray(node);
    });
    const at = objects[key.length % objects.length] ?? [];
    return bodyReq('prototype-keys', r.route, r.target, t.key, JSON.stringify(withAt(r.body, [...at, key], v)));
  });
}

function deepNesting(t: Targets): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(jsonRequestArb(t), fc.integer({ min: 50, max: 100_000 }), fc.boolean()).map(([r, depth, arrays]) => {
    const deep = arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    const text = JSON.stringify(r.path ? withAt(r.body, r.path, '__DEEP__') : r.body).replace('"__DEEP__"', deep);
    return bodyReq('deep-nesting', r.route, r.target, t.key, text.includes(deep) ? text : `{"x":${deep}}`);
  });
}

function hugeValues(t: Targets): fc.Arbitrary<FuzzRequest> {
  const literal = fc.oneof(
    fc.constantFrom('1e308', '-1e308', '1e400', '-1e400', '5e-324', '-0', '123456789012345678901234567890', '0.0000000000000000000000001', '9007199254740993'),
    fc.integer({ min: 1024, max: 4 * 1024 * 1024 }).map((n) => JSON.stringify('a'.repeat(n))),
    fc.integer({ min: 1024, max: 256 * 1024 }).map((n) => JSON.stringify('\u{1F600}'.repeat(n))),
    fc.integer({ min: 1000, max: 200_000 }).map((n) => `[${'1,'.repeat(n)}1]`),
    fc.integer({ min: 1000, max: 50_000 }).map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}}`),
  );
  return fc.tuple(jsonRequestArb(t), literal).map(([r, lit]) => {
    const text = JSON.stringify(r.path ? withAt(r.body, r.path, '__HUGE__') : r.body).replace('"__HUGE__"', lit);
    return bodyReq('huge-values', r.route, r.target, t.key, text.includes(lit) ? text : `{"x":${lit}}`);
  });
}

function badMultipart(t: Targets): fc.Arbitrary<FuzzRequest> {
  const routes = t.routes.filter((r) => r.body?.contentTypes.includes('multipart/form-data'));
  return fc.constantFrom(...routes).chain((route) =>
    brokenMultipartArb([...modelsOf(route).exact][0] ?? 'fuzz').map((c) => ({
      category: 'bad-multipart',
      method: route.method,
      target: pathOf(route, 'x'),
      headers: [
        ['authorization', `Bearer ${t.key}`],
        ['content-type', c.contentType],
      ] as [string, string][],
      body: c.body,
      mayClose: false,
    })),
  );
}

const BAD_ESCAPES = [
  '%',
  '%G1',
  '%E0%A4%A',
  '%00',
  '%2F',
  '%2e%2e',
  '%2E%2E%2F',
  '%C0%AE',
  '..',
  '.',
  '%FF',
  '%25',
  '%u2028',
  '%0d%0a',
  '%EF%BF%BF',
  '%F0%9F%98',
];

function badEscapes(t: Targets): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(fc.constantFrom(...t.routes), fc.constantFrom(...BAD_ESCAPES), fc.boolean(), fc.nat()).map(([route, bad, inQuery, pick]) => {
    const plain = pathOf(route, '__BAD__');
    const inPath = plain.includes('__BAD__') ? plain.replace(/__BAD__/g, bad) : plain.replace(/(\?|$)/, `${bad}$1`);
    const target = inQuery ? `${pathOf(route, 'x')}${plain.includes('?') ? '&' : '?'}${['id', 'key', 'Action', 'x'][pick % 4]}=${bad}` : inPath;
    const body = route.body ? JSON.stringify(baseOf(t, route, pick).body) : null;
    return { category: 'bad-escapes', method: route.method, target, headers: json(t.key), body: body === null ? null : Buffer.from(body), mayClose: false };
  });
}

function longHeaders(t: Targets): fc.Arbitrary<FuzzRequest> {
  const headerSets = fc.oneof(
    fc.integer({ min: 1000, max: 40_000 }).map((n): [string, string][] => [
      ['authorization', `Bearer ${t.key}${'k'.repeat(n)}`],
      ['content-type', 'application/json'],
    ]),
    fc
      .integer({ min: 50, max: 400 })
      .map((n): [string, string][] => [...json(t.key), ...Array.from({ length: n }, (_, i): [string, string] => [`x-h${i}`, 'v'])]),
    fc.constantFrom<[string, string][]>(
      [
        ['authorization', 'Bearer '],
        ['content-type', 'application/json'],
      ],
      [
        ['authorization', `Basic ${t.key}`],
        ['content-type', 'application/json'],
      ],
      [
        ['authorization', `Bearer ${t.key}`],
        ['authorization', 'Bearer other'],
        ['content-type', 'application/json'],
      ],
      [...json(t.key), ['content-type', 'text/plain']],
      [
        ['authorization', `Bearer ${t.key}`],
        ['content-type', 'application/json; charset=utf-16'],
      ],
      [
        ['authorization', `Bearer ${t.key}`],
        ['content-type', 'APPLICATION/JSON'],
      ],
      [
        ['authorization', `Bearer ${t.key}`],
        ['content-type', 'multipart/form-data'],
      ],
      [...json(t.key), ['content-encoding', 'gzip']],
      [...json(t.key), ['content-encoding', 'identity, br']],
      [...json(t.key), ['expect', 'the-unexpected']],
      [...json(t.key), ['x-goog-api-key', t.key.repeat(300)]],
      [
        ['x-goog-api-key', 'k'.repeat(5000)],
        ['content-type', 'application/json'],
      ],
    ),
  );
  return fc.tuple(fc.constantFrom(...t.routes), headerSets, fc.nat()).map(([route, headers, pick]) => ({
    category: 'long-headers',
    method: route.method,
    target: pathOf(route, 'x'),
    headers,
    body: route.body ? Buffer.from(JSON.stringify(baseOf(t, route, pick).body)) : null,
    // A header section past the server's limit may be cut off without an answer.
    mayClose: headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0) > 16 * 1024,
  }));
}

function longUrl(t: Targets): fc.Arbitrary<FuzzRequest> {
  const tail = fc.oneof(
    fc.integer({ min: 1000, max: 100_000 }).map((n) => `/${'a'.repeat(n)}`),
    fc.integer({ min: 100, max: 3000 }).map((n) => `?${Array.from({ length: n }, (_, i) => `p${i}=v`).join('&')}`),
    fc.integer({ min: 100, max: 2000 }).map((n) => `?${'key=x&'.repeat(n)}`),
    fc.integer({ min: 1000, max: 20_000 }).map((n) => `/${'%41'.repeat(n)}`),
  );
  return fc.tuple(fc.constantFrom(...t.routes), tail).map(([route, extra]) => ({
    category: 'long-url',
    method: route.method,
    target: pathOf(route, 'x') + extra,
    headers: json(t.key),
    body: null,
    mayClose: extra.length > 16 * 1024,
  }));
}

function oddMethods(t: Targets): fc.Arbitrary<FuzzRequest> {
  const method = fc.oneof(
    fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'get', 'Post', 'M-SEARCH', 'PURGE'),
    fc.stringMatching(/^[A-Z]{1,12}$/),
  );
  return fc.tuple(fc.constantFrom(...t.routes), method).map(([route, m]) => ({
    category: 'odd-methods',
    method: m,
    target: pathOf(route, 'x'),
    headers: json(t.key),
    body: m === 'GET' || m === 'TRACE' ? null : Buffer.from('{}'),
    // Node refuses some methods in its parser: a 400 there, or a close for what it cannot answer.
    mayClose: true,
  }));
}

/** A request of a random category over the routes and seeds given. */
export function hostileRequestArb(t: Targets): fc.Arbitrary<FuzzRequest> {
  const byCategory: Record<(typeof CATEGORIES)[number], fc.Arbitrary<FuzzRequest>> = {
    'broken-json': brokenJson(t),
    'wrong-types': wrongTypes(t),
    'prototype-keys': prototypeKeys(t),
    'deep-nesting': deepNesting(t),
    'huge-values': hugeValues(t),
    'bad-multipart': badMultipart(t),
    'bad-escapes': badEscapes(t),
    'long-headers': longHeaders(t),
    'long-url': longUrl(t),
    'odd-methods': oddMethods(t),
  };
  return fc.oneof(...CATEGORIES.map((c) => byCategory[c]));
}

/** The request as bytes: its own connection (`Connection: close`), the body with its length. */
export function wireBytes(r: FuzzRequest): Buffer {
  const lines = [`${r.method} ${r.target} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close', ...r.headers.map(([k, v]) => `${k}: ${v}`)];
  if (r.body !== null) lines.push(`content-length: ${r.body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), r.body ?? Buffer.alloc(0)]);
}
