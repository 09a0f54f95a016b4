/**
 * Path values are safe by construction (docs/channels-yaml.md, "Mapping functions"): every path parameter of every
 * route, and every id a body or query names (tasks, sources, assets), is fed traversal, encoded
 * slashes, dot-segments, CRLF and overlong values; every answer is a 4xx of shape A, and every
 * request target any simulator received during the run is a well-formed path.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { pathProblem } from '../../src/mapping/jsonata-functions.js';
import type { CompiledRoute } from '../../src/config/snapshot.js';
import { assertShapeA, Client, expectError } from '../helpers/hostile.js';
import { modelOf, modelsOf, taskOf } from '../helpers/route-parts.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const scale = Math.max(1, Number(process.env.FC_SCALE ?? 1) || 1);

/** Values a hostile client puts where an id goes, as text (the client percent-encodes them in a path). */
const HOSTILE = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '%252e%252e',
  '../../etc/passwd',
  'a/../b',
  'a/b',
  'a%2Fb',
  '..%2F..',
  'a\\b',
  '\r\nx-injected: 1',
  '\u0000',
  ' ',
  '',
  '/',
  'x'.repeat(5000),
  'asset://..',
  'asset://%2e%2e',
];

/** A value in the path as a client writes it: percent-encoded, or raw when it is a plain escape form. */
const inPath = (v: string) => (/^[A-Za-z0-9%._~-]*$/.test(v) ? v : encodeURIComponent(v));

/** Where a route takes an id from the client: path parameters, a query parameter, a body field. */
function idSlots(route: CompiledRoute): { params: string[]; query: string[]; body: string[][] } {
  const model = modelOf(route);
  const params = route.matcher.params.filter((p) => !(model?.from === 'path' && model.name === p));
  const query: string[] = [];
  const body: string[][] = [];
  for (const where of [taskOf(route)?.id, taskOf(route)?.source, route.resource?.id]) {
    if (!where) continue;
    if (where.from === 'query') query.push(where.name);
    if (where.from === 'body') body.push([...where.pointer]);
  }
  return { params, query, body };
}

describe('path values on every route', () => {
  let h: TaskHarness;
  let client: Client;
  let routes: CompiledRoute[];
  const vendorTargets = () => Object.values(h.sims).flatMap((s) => s.targets);

  before(async () => {
    h = await startTaskHarness({ finishMs: 200 });
    client = new Client('127.0.0.1', Number(new URL(h.url).port));
    routes = h.snapshot.routes.filter((r) => {
      const s = idSlots(r);
      return s.params.length + s.query.length + s.body.length > 0;
    });
  });
  after(async () => {
    client?.close();
    await h?.close();
  });

  /** Sends one route a request whose every id slot holds `value`. */
  function send(route: CompiledRoute, value: string, raw = false) {
    const s = idSlots(route);
    let path = route.path.replace(/\{([^{}]+)\}/g, (_, name: string) =>
      s.params.includes(name) ? (raw ? value : inPath(value)) : ([...modelsOf(route).exact][0] ?? 'x'),
    );
    const q = new URLSearchParams(route.matchQuery);
    for (const name of s.query) q.set(name, value);
    if (q.size > 0) path += `?${q.toString()}`;
    let body: unknown = route.body ? { model: [...modelsOf(route).exact][0] ?? 'x', prompt: 'x' } : undefined;
    for (const pointer of s.body) {
      // A batch query takes an array of ids.
      const taskId = taskOf(route)?.id;
      const v = taskId?.from === 'body' && taskId.pointer.join('/') === pointer.join('/') ? [value] : value;
      body = { ...(body as object), [pointer[0]!]: v };
    }
    return client.send({
      method: route.method,
      path,
      body: body === undefined ? null : JSON.stringify(body),
      headers: { authorization: `Bearer ${h.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
  }

  test('the config has routes that take ids', () => {
    assert.ok(routes.length >= 8, routes.map((r) => r.id).join(', '));
  });

  test('the issue’s requests: a dot-segment asset id is refused as unknown and never reaches the vendor', async () => {
    const before = h.sims['delta-ark']!.targets.length;
    for (const path of ['/v1/kappa/asset/%2e%2e', '/v1/kappa/asset/..', '/v1/kappa/asset/%2E%2E']) {
      expectError(await client.send({ method: 'GET', path, headers: { authorization: `Bearer ${h.key}` } }), 'not_found', path);
    }
    const post = await client.send({
      method: 'POST',
      path: '/v1/kappa/asset/get',
      body: '{"asset_id":".."}',
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
    });
    expectError(post, 'not_found', 'asset_id ..');
    assert.deepEqual(h.sims['delta-ark']!.targets.slice(before), [], 'the vendor was asked nothing');
  });

  test('a dot-segment id that passed ownership is still refused by $segment, with no vendor call', async () => {
    // No vendor would give such an id; recorded by hand to reach the encoder behind the ownership check.
    const me = (await h.store.findTokenByHash((await h.store.listTokens())[0]!.keyHash))!;
    for (const id of ['..', '%2e%2e', 'a/b'])
      await h.store.putResource({ kind: 'asset', id, tokenId: me.id, channel: 'delta-ark', vendorId: id, createdAt: 0 });
    const before = h.sims['delta-ark']!.targets.length;
    const auth = { authorization: `Bearer ${h.key}` };
    const answers = [
      await client.send({
        method: 'POST',
        path: '/v1/kappa/asset/get',
        body: JSON.stringify({ asset_id: '..' }),
        headers: { ...auth, 'content-type': 'application/json' },
      }),
      await client.send({ method: 'GET', path: '/v1/kappa/asset/%252e%252e', headers: auth }),
      await client.send({ method: 'GET', path: '/v1/kappa/asset/a%2Fb', headers: auth }),
    ];
    for (const a of answers) assert.match(expectError(a, 'invalid_request').message, /vendor's path/);
    assert.deepEqual(h.sims['delta-ark']!.targets.slice(before), [], 'the vendor was asked nothing');
  });

  test('hostile ids in every path parameter, query id and body id: a 4xx of shape A, and only well-formed paths reach any vendor', async () => {
    // Real ids too, so vendors are asked something and the check below looks at real paths.
    const video = await h.post('/v1/videos', { model: 'epsilon-video-3', prompt: 'a paper boat' });
    assert.equal(video.status, 200, video.text);
    assert.equal((await h.get(`/v1/videos/${video.json.id}`)).status, 200);
    const asset = await h.post('/v1/kappa/asset/create', { type: 'image', url: 'https://img.example/cat.png' });
    assert.equal(asset.status, 200, asset.text);
    assert.equal((await h.get(`/v1/kappa/asset/${asset.json.id}`)).status, 200);
    for (const route of routes) {
      for (const v of HOSTILE) {
        for (const raw of [false, true]) {
          if (raw && !/^[\x21-\x7e]*$/.test(v)) continue; // a raw target holds no spaces or controls
          const a = await send(route, v, raw);
          assertShapeA(a.status, a.text, `${route.id} ${JSON.stringify(v.slice(0, 40))}${raw ? ' (raw)' : ''}`);
        }
      }
    }
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.string({ unit: 'binary', maxLength: 20 }),
          fc.constantFrom(...HOSTILE).map((h) => `${h}x${h}`),
        ),
        async (route, v) => {
          const a = await send(route, v);
          assertShapeA(a.status, a.text, `${route.id} ${JSON.stringify(v.slice(0, 40))}`);
        },
      ),
      { numRuns: 300 * scale, ...(seed !== undefined ? { seed } : {}) },
    );
    const bad = vendorTargets().filter((t) => pathProblem(t) !== null || /[\r\n]/.test(t));
    assert.deepEqual(bad, [], 'every path a vendor was asked is well formed');
    assert.ok(vendorTargets().length > 0, 'vendors were asked something during the run, so the check looked at paths');
  });
});
