/**
 * Client input is never a 500: bodies generated from each route's OWN schema, for every model the
 * route serves, as they are (valid, mostly) and with a field at any depth replaced by a value of
 * another type or null, go to a real gateway in front of the simulators. Every answer is 200 or a
 * 4xx of shape A: never a 5xx, neither the gateway's (a mapping that could not use the value) nor
 * a simulator's. `FC_SEED=<n>` replays a failing run; `FC_SCALE=<k>` runs k times longer.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { familyOf } from '../../src/config/lookups.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { channelsForModel } from '../../src/config/lookups.js';
import type { CompiledRoute, Snapshot } from '../../src/config/snapshot.js';
import { goldenSeeds, pathOf } from '../fuzz/corpus.js';
import { assertShapeA, Client, expectError, getAt, kindOf, otherKindArb, pathsOf, withAt, type Json } from '../helpers/hostile.js';
import { mergeSchemas, schemaArb } from '../helpers/schema-arb.js';
import { modelOf, modelsOf, modeOf, operationOf, taskOf } from '../helpers/route-parts.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const scale = Math.max(1, Number(process.env.FC_SCALE ?? 1) || 1);
const runs = (numRuns: number) => ({ numRuns: numRuns * scale, ...(seed !== undefined ? { seed } : {}) });

/** A route with a JSON body, one model it serves (a name for each pattern), and the fields its mappings read. */
interface Target {
  readonly route: CompiledRoute;
  readonly model: string | null;
  /**
   * Field names the request mappings (and the family's mode) of the channels serving this model
   * read from the body (`body.x`, `$b.x`, `$m.x` for metadata), whether or not the schema declares
   * them: added to generated bodies with any value, so a mapping meets types no schema promised it.
   */
  readonly reads: readonly string[];
}

function targetsOf(snapshot: Snapshot): Target[] {
  const out: Target[] = [];
  for (const route of snapshot.routes) {
    if (!route.body?.contentTypes.includes('application/json')) continue;
    // Remixes need a finished task of the caller's: random ids are refused before any mapping.
    if (taskOf(route)?.source) continue;
    const listed = modelsOf(route);
    const models = modelOf(route) ? [...listed.exact, ...listed.prefixes.map((p) => `${p}prop`)] : [];
    if (models.length === 0) out.push({ route, model: null, reads: [] });
    for (const model of models) {
      const sources = channelsForModel(snapshot, model).flatMap((c) => {
        const op = c.profile.operations.get(operationOf(route));
        return op ? [op.request.path, op.request.query, op.request.headers, op.request.body].map((m) => m?.source ?? '') : [];
      });
      sources.push(familyOf(snapshot.families, model)?.mode?.source ?? modeOf(route)?.source ?? '');
      const reads = [...new Set(sources.flatMap((text) => [...text.matchAll(/(?:\bbody|\$b|\$m)\.([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!)))].sort();
      out.push({ route, model, reads });
    }
  }
  return out;
}

/** The request of a target: the path (the model filled in where the path names it) and the body with its model. */
function requestOf(t: Target, body: Json): { path: string; body: Json } {
  const route = t.route;
  const where = modelOf(route);
  if (t.model !== null && where?.from === 'body' && body !== null && typeof body === 'object' && !Array.isArray(body)) {
    body = withAt(body, where.pointer, t.model);
  }
  if (where?.from !== 'path' || t.model === null) return { path: pathOf(route, 'task_AAAAAAAAAAAAAAAAAAAAAAAA'), body };
  // With the query values that pick the route (alt=sse): without them every body would be refused before it is read.
  const query = new URLSearchParams(route.matchQuery).toString();
  return { path: route.path.replace(`{${where.name}}`, encodeURIComponent(t.model)) + (query ? `?${query}` : ''), body };
}

describe('bodies from each route’s own schema, valid and mistyped, on every route and model', () => {
  let h: TaskHarness;
  let client: Client;
  let targets: Target[];
  const send = (path: string, method: string, body: Json) =>
    client.send({
      method,
      path,
      body: JSON.stringify(body),
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
      timeoutMs: 15_000,
    });

  before(async () => {
    h = await startTaskHarness({ finishMs: 200 });
    client = new Client('127.0.0.1', Number(new URL(h.url).port));
    targets = targetsOf(h.snapshot);
  });
  after(async () => {
    client?.close();
    await h?.close();
  });

  test('the issue’s bodies: a boolean first frame and a null image URL on the delta video 2 route are 400, not 500', async () => {
    const a = await send('/v1/video/generations', 'POST', { model: 'delta-vid-2-0-fast-260128', prompt: 'x', first_frame_image: true });
    assert.equal(expectError(a, 'invalid_request', 'first_frame_image: true').param, 'first_frame_image');
    const b = await send('/v1/video/generations', 'POST', {
      model: 'delta-vid-2-0-260128',
      content: [
        { type: 'text', text: 'x' },
        { type: 'image_url', image_url: { url: null } },
      ],
    });
    assert.equal(expectError(b, 'invalid_request', 'image_url.url: null').param, 'content[1].image_url.url');
  });

  test('the config gives routes and models to try', () => {
    assert.ok(targets.length >= 40, `route × model pairs: ${targets.length}`);
  });

  test('every field a serving mapping reads, given each JSON type, on a body the route accepts: never a 5xx', async (ctx) => {
    // Bodies the gateway answered 200 in the golden cases, by route and model; else just model and prompt.
    const seeds = goldenSeeds(join(PROJECT_ROOT, 'test/golden'));
    // One of each kind a string field does not expect (strings come from the schema-driven property below).
    const wrong: Json[] = [true, 7, [1], { url: 5 }, null];
    let sent = 0;
    for (const t of targets) {
      const where = modelOf(t.route);
      if (t.model === null || where?.from !== 'body') continue;
      const field = where.pointer[0]!;
      const seed = seeds.find(
        (x) => x.method === t.route.method && x.path.split('?')[0] === t.route.path && (x.body as Record<string, unknown> | null)?.[field] === t.model,
      );
      const base = (seed?.body ?? { [field]: t.model, prompt: 'a lighthouse at dawn' }) as Record<string, Json>;
      for (const name of t.reads) {
        if (name === field) continue;
        for (const value of wrong) {
          const { path, body } = requestOf(t, { ...base, [name]: value });
          const a = await send(path, t.route.method, body);
          sent++;
          const what = `${t.route.id} ${t.model}: ${name} = ${JSON.stringify(value)}: ${a.status} ${a.text.slice(0, 300)}`;
          assert.ok(a.status < 500, what);
          if (a.status >= 400) assertShapeA(a.status, a.text, what);
        }
      }
    }
    ctx.diagnostic(`${sent} requests`);
    assert.ok(sent > 1000, `fields tried: ${sent}`);
  });

  test('never a 5xx: every answer is 200 or a 4xx of shape A', async (ctx) => {
    const seen = new Map<string, number>();
    const arb = fc
      .integer({ min: 0, max: 1_000_000 })
      .chain((i) => {
        const t = targets[i % targets.length]!;
        // The route's schema narrowed by the model's family limits: bodies that get to the mappings.
        const family = t.model === null ? null : familyOf(h.snapshot.families, t.model);
        const limits = [family?.limits?.schema, t.model === null ? undefined : family?.modelLimits.get(t.model)?.schema] as unknown[];
        let schema = t.route.body!.validate.schema as Record<string, unknown>;
        for (const l of limits) if (l !== null && typeof l === 'object') schema = mergeSchemas(schema, l as Record<string, unknown>) as Record<string, unknown>;
        // Now and then a field a mapping reads but the schema may not declare, at the top or in metadata.
        const extra =
          t.reads.length === 0
            ? fc.constant(null)
            : fc.option(fc.tuple(fc.constantFrom(...t.reads), fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>, fc.boolean()), { freq: 3 });
        return fc
          .tuple(fc.constant(t), schemaArb(schema) as fc.Arbitrary<Json>, fc.nat(), fc.boolean(), fc.boolean(), extra)
          .map(([t, body, at, mutate, toNull, add]) => {
            if (!add || body === null || typeof body !== 'object' || Array.isArray(body)) return [t, body, at, mutate, toNull] as const;
            const [name, value, inMetadata] = add;
            const metadata = (body as Record<string, Json>).metadata;
            if (inMetadata && metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata))
              return [t, withAt(body, ['metadata', name], value), at, mutate, toNull] as const;
            return [t, withAt(body, [name], value), at, mutate, toNull] as const;
          });
      })
      .chain(([t, body, at, mutate, toNull]) => {
        const where = modelOf(t.route);
        const paths = pathsOf(body).filter((p) => !(where?.from === 'body' && p.join('.') === where.pointer.join('.')));
        if (!mutate || paths.length === 0) return fc.constant({ t, body, change: 'as generated' });
        const path = paths[at % paths.length]!;
        const value: fc.Arbitrary<Json> = toNull ? fc.constant(null) : otherKindArb(kindOf(getAt(body, path)));
        return value.map((v) => ({ t, body: withAt(body, path, v), change: `${path.join('.')} := ${JSON.stringify(v).slice(0, 60)}` }));
      });
    await fc.assert(
      fc.asyncProperty(arb, async ({ t, body, change }) => {
        const req = requestOf(t, body);
        const a = await send(req.path, t.route.method, req.body);
        const what = `${t.route.id} ${t.model ?? ''} (${change}) ${JSON.stringify(req.body).slice(0, 300)}: ${a.status} ${a.text.slice(0, 300)}`;
        assert.ok(a.status < 500, what);
        const code = a.status >= 400 ? assertShapeA(a.status, a.text, what).code : String(a.status);
        seen.set(code, (seen.get(code) ?? 0) + 1);
      }),
      runs(500),
    );
    ctx.diagnostic(`answers: ${[...seen].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    // The generated bodies must get past validation often enough to test the mappings at all.
    assert.ok((seen.get('200') ?? 0) >= 15 * scale, `answers: ${JSON.stringify([...seen])}`);
  });
});
