/**
 * Every route of the shipped config under hostile input, found from the config itself (so a route
 * added in a fragment is covered without touching this file): garbage bodies are refused before any
 * vendor is called, bodies built from a route's own models and fields with random values are
 * answered without a server fault, and random ids on query routes are refused in shape A.
 * `FC_SEED=<n>` replays a failing run; `FC_SCALE=<k>` runs every property k times longer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { CompiledRoute } from '../../src/config/snapshot.js';
import { assertShapeA, Client, type Answer } from '../helpers/hostile.js';
import { modelOf, modelsOf as listedModels, taskOf } from '../helpers/route-parts.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const scale = Math.max(1, Number(process.env.FC_SCALE ?? 1) || 1);
const runs = (numRuns: number) => ({ numRuns: numRuns * scale, ...(seed !== undefined ? { seed } : {}) });

/** A concrete path for a route: parameters filled, required query values added. */
function pathOf(route: CompiledRoute, fill: string): string {
  const path = route.path.replace(/\{[^{}]+\}/g, encodeURIComponent(fill));
  const q = new URLSearchParams(route.matchQuery);
  const taskId = taskOf(route)?.id;
  if (taskId?.from === 'query') q.set(taskId.name, fill);
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

/** Property names a route's schema mentions at its top level (random values go there). */
function fieldsOf(route: CompiledRoute): string[] {
  const schema = route.body?.validate.schema as { properties?: Record<string, unknown> } | undefined;
  return Object.keys(schema?.properties ?? {}).filter((k) => k !== 'model');
}

/** A model a route serves: one of its exact names, or a pattern with a suffix. */
function modelsOf(route: CompiledRoute): string[] {
  const models = listedModels(route);
  return [...models.exact, ...models.prefixes.map((p) => `${p}prop`)];
}

const hostileValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    '',
    ' ',
    'data:image/png;base64,',
    'data:image/png;base64,iVBORw0KGgo=',
    'https://127.0.0.1:1/x.png',
    '16:9',
    '0:0',
    '99999x1',
    '1024*1024',
    'asset://nope',
    '__proto__',
    '\u0000',
    '1e400',
  ),
  fc.integer({ min: -1e9, max: 1e9 }),
  fc.array(fc.constantFrom('https://127.0.0.1:1/a.png', 'data:image/png;base64,iVBORw0KGgo=', '', 7), { maxLength: 12 }),
);

describe('every route of the config under hostile input (property)', () => {
  let h: TaskHarness;
  let client: Client;
  let bodyRoutes: CompiledRoute[];
  let modelRoutes: CompiledRoute[];
  let queryRoutes: CompiledRoute[];
  const vendorRequests = () => Object.values(h.sims).reduce((n, s) => n + s.stats.requests, 0);
  const send = (method: string, path: string, body: string | null, type = 'application/json'): Promise<Answer> =>
    client.send({ method, path, body, headers: { authorization: `Bearer ${h.key}`, ...(body !== null ? { 'content-type': type } : {}) }, timeoutMs: 15_000 });

  before(async () => {
    h = await startTaskHarness({ finishMs: 200 });
    client = new Client('127.0.0.1', Number(new URL(h.url).port));
    const routes = h.snapshot.routes;
    bodyRoutes = routes.filter((r) => r.body?.contentTypes.includes('application/json'));
    modelRoutes = bodyRoutes.filter((r) => (r.kind === 'sync' || r.kind === 'task-submit') && modelOf(r)?.from === 'body' && !taskOf(r)?.source);
    queryRoutes = routes.filter((r) => (r.kind === 'task-query' || r.kind === 'task-content') && taskOf(r)?.id?.from !== 'body');
  });
  after(async () => {
    client?.close();
    await h?.close();
  });

  test('the config has routes of every kind to try', () => {
    assert.ok(bodyRoutes.length >= 10, `routes with JSON bodies: ${bodyRoutes.length}`);
    assert.ok(modelRoutes.length >= 6, `routes reading a model from the body: ${modelRoutes.length}`);
    assert.ok(queryRoutes.length >= 5, `query and download routes: ${queryRoutes.length}`);
  });

  test('non-objects and garbage on every route with a body: a 4xx of shape A, no vendor call', async () => {
    const before = vendorRequests();
    const garbage = fc.oneof(
      fc
        .jsonValue({ maxDepth: 2 })
        .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
        .map((v) => JSON.stringify(v)),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.constantFrom('', '{', '[]', '{"a":1}{"b":2}', '\ufeff{}', '1e999'),
      fc.integer({ min: 20, max: 3000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 10_000 }), garbage, async (i, body) => {
        const route = bodyRoutes[i % bodyRoutes.length]!;
        const path = pathOf(route, 'task_AAAAAAAAAAAAAAAAAAAAAAAA');
        const a = await send(route.method, path, body);
        assertShapeA(a.status, a.text, `${route.id} ${JSON.stringify(body.slice(0, 80))}`);
      }),
      runs(120),
    );
    assert.equal(vendorRequests(), before, 'no vendor saw a refused request');
  });

  test("bodies made of a route's own models and fields with random values: never a server fault", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.dictionary(fc.integer({ min: 0, max: 40 }), hostileValue, { maxKeys: 4 }),
        async (i, m, picks) => {
          const route = modelRoutes[i % modelRoutes.length]!;
          const models = modelsOf(route);
          const fields = fieldsOf(route);
          const body: Record<string, unknown> = {};
          for (const [k, v] of Object.entries(picks)) if (fields.length > 0) body[fields[Number(k) % fields.length]!] = v;
          body[modelOf(route)!.pointer[0]!] = models[m % models.length];
          const a = await send(route.method, pathOf(route, 'x'), JSON.stringify(body));
          const what = `${route.id} ${JSON.stringify(body).slice(0, 300)}: ${a.status} ${a.text.slice(0, 300)}`;
          // 200, a refusal of the client's request, or a vendor's trouble; never the gateway's own fault.
          assert.ok(a.status !== 500 && a.status < 600, what);
          if (a.status >= 400 && a.status < 500) assertShapeA(a.status, a.text, what);
          if (a.status >= 500) assert.ok([502, 503, 504].includes(a.status), what);
        },
      ),
      runs(150),
    );
  });

  test('random ids on every query and download route: a 4xx of shape A', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 10_000 }),
        fc.oneof(fc.string({ maxLength: 30 }), fc.constant('task_AAAAAAAAAAAAAAAAAAAAAAAA')),
        async (i, id) => {
          const route = queryRoutes[i % queryRoutes.length]!;
          const a = await send(route.method, pathOf(route, id), route.body ? JSON.stringify({ task_id: id, id }) : null);
          assertShapeA(a.status, a.text, `${route.id} ${JSON.stringify(id)}`);
        },
      ),
      runs(120),
    );
  });
});
