/**
 * The OpenAPI document (src/openapi/): valid OpenAPI 3.1 by a real validator, equal to the
 * committed docs/generated/openapi.json (regenerate with `npm run docs`), true to the routes (every
 * route is there, and each JSON body schema takes the route's example as the gateway does), free of
 * channels and secrets, and following its config when a route is added.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { channelEnvNames } from '../../src/config/env.js';
import { formatIssue } from '../../src/config/issues.js';
import { loadConfig, loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import type { Snapshot } from '../../src/config/snapshot.js';
import { openApiDocument, renderOpenApi } from '../../src/openapi/openapi-document.js';
import { generatedDoc, writeGeneratedDoc } from '../../src/docs/generated-docs.js';
import type { Operation } from '../../src/openapi/openapi-types.js';
import { channelEnv } from '../helpers/channel-env.js';
import { assertDocCurrent, docDrift } from '../helpers/doc-drift.js';
import { documentSchemas, operationOfRoute } from '../helpers/openapi-schemas.js';
import { modelOf } from '../helpers/route-parts.js';
import { runCli } from '../helpers/process.js';

const FIXTURE = join(PROJECT_ROOT, 'test/fixtures/openapi');
// Every channel variable set (to dummies): the document must not depend on them, and the test
// checks it is the same with other values.
const shipped = loadConfigOrThrow(PROJECT_ROOT, { env: channelEnv() });

const cleanups: (() => void)[] = [];
after(() => {
  for (const c of cleanups.reverse()) c();
});

function scratchCopy(dir: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'gw-openapi-'));
  cleanups.push(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(dir, copy, { recursive: true });
  return copy;
}

function load(dir: string): Snapshot {
  const { snapshot, issues } = loadConfig(dir, { env: {} });
  assert.ok(snapshot, issues.map(formatIssue).join('\n'));
  return snapshot;
}

async function validateOpenApi(doc: unknown): Promise<{ valid: boolean; errors?: unknown; version: string }> {
  const validator = new Validator();
  // The validator may keep or change what it is given: it gets a copy.
  const res = await validator.validate(structuredClone(doc) as Record<string, unknown>);
  return { ...res, version: validator.version };
}

describe('the OpenAPI document of the shipped config', () => {
  const doc = openApiDocument(shipped);

  test('is valid OpenAPI 3.1, and the validator does refuse a broken one', async () => {
    const res = await validateOpenApi(doc);
    assert.equal(res.valid, true, JSON.stringify(res.errors, null, 2));
    assert.equal(res.version, '3.1');
    assert.equal(doc.openapi, '3.1.0');
    // A parameter in the body, as OpenAPI 2 had them: not a 3.1 location.
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, { parameters?: { in: string }[] }>> };
    broken.paths['/v1/videos/{task_id}']!.get!.parameters![0]!.in = 'body';
    assert.equal((await validateOpenApi(broken)).valid, false, 'a parameter in the body is refused');
  });

  test("its schemas are draft 2020-12 that the gateway's ajv compiles, and its references resolve", () => {
    const schemas = documentSchemas(doc);
    for (const name of Object.keys(doc.components.schemas)) assert.doesNotThrow(() => schemas.component(name), name);
    for (const name of Object.keys(doc.components.responses)) assert.doesNotThrow(() => schemas.response(name), name);
    assert.doesNotThrow(() => JSON.stringify(doc));
    const text = renderOpenApi(shipped);
    assert.doesNotMatch(text, /"\$id"|"\$schema"/, 'schema files keep no $id or $schema: refs point into the document');
    for (const m of text.matchAll(/"\$ref": "([^"]+)"/g)) assert.match(m[1]!, /^#\/components\/(schemas|responses|headers)\//, m[1]);
  });

  test('every operation has a summary and every success answer a schema: a JSON answer its declared component, a download bytes', () => {
    let json = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item) as [string, Operation][]) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.ok(op.summary.length > 0 && op.summary.length <= 120, `${where}: a summary`);
        for (const [status, res] of Object.entries(op.responses)) {
          if (!status.startsWith('2')) continue;
          const content = (res as { content: Record<string, { schema?: Record<string, unknown> }> }).content;
          for (const [type, media] of Object.entries(content)) {
            const schema = media.schema ?? {};
            if (type === 'application/json') {
              json++;
              const refs = '$ref' in schema ? [schema] : ((schema.anyOf as Record<string, unknown>[] | undefined) ?? []);
              assert.ok(refs.length > 0, `${where} ${status}: a declared schema, not ${JSON.stringify(schema)}`);
              for (const r of refs)
                assert.ok(
                  String(r.$ref).startsWith('#/components/schemas/') && doc.components.schemas[String(r.$ref).split('/').at(-1)!],
                  `${where}: ${r.$ref}`,
                );
            } else if (type === '*/*') assert.deepEqual(schema, { type: 'string', format: 'binary' }, `${where} ${status}: bytes`);
            else assert.equal(type, 'text/event-stream', `${where} ${status}: ${type}`);
          }
        }
      }
    }
    assert.ok(json >= 25, `${json} JSON answers`);
  });

  test('says where each operation takes its key: the links take none, and the description does not say they do', () => {
    assert.deepEqual(doc.paths['/v1/links/{link}']!.get!.security, []);
    assert.doesNotMatch(doc.info.description, /every route takes/i);
    assert.match(doc.info.description, /`security`/);
    assert.deepEqual(doc.servers, [{ url: '/', description: doc.servers[0]!.description }]);
  });

  test('is what `gateway openapi` prints (a real process)', () => {
    const r = runCli(['openapi']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, renderOpenApi(shipped));
  });

  test('is the committed docs/generated/openapi.json', () => {
    assertDocCurrent('docs/generated/openapi.json', renderOpenApi(shipped));
  });

  test("has every route at its path and method, and each JSON body schema takes the route's example and refuses other models", () => {
    const schemas = documentSchemas(doc);
    let examples = 0;
    for (const r of shipped.routes) {
      const found = operationOfRoute(doc, r);
      assert.ok(found, `${r.method} ${r.path} (${r.id}) is in the document`);
      const { path, op } = found;
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      assert.deepEqual(declared.sort(), [...path.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]!).sort(), `${r.id}: one path parameter per {name}`);
      for (const [k, v] of Object.entries(r.matchQuery)) {
        const q = op.parameters?.find((p) => p.in === 'query' && p.name === k);
        assert.ok(q && typeof q.schema === 'object' && (q.schema.enum as unknown[]).includes(v), `${r.id}: query ${k}=${v}`);
      }
      if (r.keySources.some((s) => s.from === 'bearer'))
        assert.ok(
          op.security.some((s) => 'bearer' in s),
          `${r.id}: bearer`,
        );
      if (!r.body?.contentTypes.includes('application/json')) continue;
      assert.ok(op.requestBody?.content['application/json'], `${r.id}: a JSON body`);
      if (r.example?.body === undefined) continue;
      const validate = schemas.body(path, r.method.toLowerCase(), 'application/json');
      assert.equal(validate(r.example.body), true, `${r.id}: the example passes the document's schema: ${JSON.stringify(validate.errors)}`);
      assert.equal(r.body.validate(r.example.body), true, `${r.id}: and the gateway's`);
      examples++;
      const where = modelOf(r);
      if (where?.from === 'body') {
        const other = structuredClone(r.example.body) as Record<string, unknown>;
        let at = other;
        for (const key of where.pointer.slice(0, -1)) at = at[key] as Record<string, unknown>;
        at[where.pointer.at(-1)!] = 'no-such-model';
        assert.equal(validate(other), false, `${r.id}: a model the route does not serve is refused`);
      }
    }
    assert.ok(examples >= 5, `${examples} examples checked`);
  });

  test('is made from the routes alone: no channel, vendor address or secret, whatever the environment', () => {
    // Every channel variable set, each to a value of its own, so a leak of any is seen.
    const env = Object.fromEntries(
      channelEnvNames(PROJECT_ROOT).map((n) => [n, n.endsWith('_BASE_URL') ? `http://127.0.0.1:9/base-${n.toLowerCase()}` : `value-of-${n.toLowerCase()}`]),
    );
    const { snapshot: full, issues } = loadConfig(PROJECT_ROOT, { env });
    assert.ok(full, issues.map(formatIssue).join('\n'));
    assert.ok(full.channels.length > 0);
    const text = renderOpenApi(full);
    // The same text as with other values: nothing of a channel's settings is in it.
    assert.equal(text, renderOpenApi(shipped));
    assert.deepEqual(
      Object.values(env).filter((v) => text.includes(v)),
      [],
    );
    assert.doesNotMatch(text, /127\.0\.0\.1|"\/admin|"\/metrics/);
  });
});

describe('the OpenAPI document of a fixture config', () => {
  test('keys, models, query-told routes, parameter names and schema names', async () => {
    const snapshot = load(FIXTURE);
    const doc = openApiDocument(snapshot);
    assert.equal((await validateOpenApi(doc)).valid, true);
    const text = renderOpenApi(snapshot);
    assert.doesNotMatch(text, /hidden-/, 'the channel name, base URL and key stay out');

    const draw = doc.paths['/v1/draw/{model}']!;
    assert.deepEqual(draw.post!.security, [{ bearer: [] }, { 'header-x-toy-key': [] }, { 'query-key': [] }]);
    assert.deepEqual(doc.components.securitySchemes['query-key'], {
      type: 'apiKey',
      in: 'query',
      name: 'key',
      description: doc.components.securitySchemes['query-key']!.description,
    });
    // Each alternative typed, so a generated client types the parameter as a string.
    assert.deepEqual(draw.post!.parameters![0]!.schema, {
      anyOf: [
        { type: 'string', enum: ['toy-1'] },
        { type: 'string', pattern: '^(?:toy-pro-)' },
      ],
    });
    // GET /v1/draw/{name} is the same path to OpenAPI: one path item, its parameter renamed.
    assert.equal(doc.paths['/v1/draw/{name}'], undefined);
    assert.deepEqual(
      draw.get!.parameters!.map((p) => [p.name, p.in]),
      [['model', 'path']],
    );

    // Two routes on POST /v1/act, told apart by Action: one operation.
    const act = doc.paths['/v1/act']!.post!;
    assert.deepEqual(act['x-route-ids'], ['act-start', 'act-stop']);
    assert.deepEqual(act.parameters!.find((p) => p.name === 'Action')!.schema, { type: 'string', enum: ['Start', 'Stop'] });
    assert.equal(act.requestBody!.required, false, 'only one of the two takes a body');

    // schemas/draw.json serves two routes as one component, its $defs hoisted beside it (a schema
    // referring into itself makes a self-referring type in generated clients: TS2502);
    // schemas/other/draw.json gets its own name.
    assert.deepEqual(Object.keys(doc.components.schemas).slice(0, 3), ['draw', 'draw.text', 'draw-2']);
    const component = doc.components.schemas.draw as { properties: Record<string, Record<string, unknown>> };
    assert.equal('$defs' in component, false);
    assert.deepEqual(doc.components.schemas['draw.text'], { type: 'string', minLength: 1 });
    assert.deepEqual(component.properties.prompt, { $ref: '#/components/schemas/draw.text' });
    assert.deepEqual(component.properties.const, { $ref: '#/components/schemas/draw.text' }, 'a property named like a keyword is a property');
    assert.deepEqual(Object.keys(doc.paths['/v1/paint']!.post!.requestBody!.content), ['application/json', 'multipart/form-data']);

    const schemas = documentSchemas(doc);
    const paint = schemas.body('/v1/paint', 'post', 'application/json');
    assert.equal(paint({ prompt: 'a dog', options: { model: 'toy-1' } }), true);
    assert.equal(paint({ prompt: 'a dog', options: { model: 'toy-2' } }), false, "the model at /options/model is one of the route's");
    assert.equal(paint({ prompt: '' }), false, 'the $defs reference resolves');
  });

  test("answers: each route's declared schema, references between answer files and into their $defs rewritten; summaries", () => {
    const doc = openApiDocument(load(FIXTURE));
    const draw = doc.paths['/v1/draw/{model}']!;
    const json = (op: Operation | undefined) =>
      (op?.responses['200'] as { content: Record<string, { schema: unknown }> } | undefined)?.content['application/json']?.schema;
    assert.deepEqual(json(draw.post), { $ref: '#/components/schemas/pictures' });
    assert.deepEqual(json(draw.get), { $ref: '#/components/schemas/picture' });
    // pictures.json refers to picture.json (declared after it) by $id, and into its $defs.
    const pictures = doc.components.schemas.pictures as { properties: Record<string, Record<string, unknown>> };
    assert.deepEqual(pictures.properties.data, { type: 'array', items: { $ref: '#/components/schemas/picture' } });
    assert.deepEqual(pictures.properties.first, { $ref: '#/components/schemas/picture.link' });
    assert.deepEqual(doc.components.schemas['picture.link'], { type: 'string', pattern: '^https?://' });
    const schemas = documentSchemas(doc);
    const answer = schemas.answer('/v1/draw/{model}', 'post', '200');
    assert.equal(answer({ data: [{ url: 'https://x.test/a.png' }] }), true);
    assert.equal(answer({ data: [{ url: 'ftp://x.test/a.png' }] }), false, 'the item is the picture, its url the hoisted link');
    // No schema declared: any JSON, and the answer says so.
    const paint = doc.paths['/v1/paint']!.post!.responses['200'] as { description: string };
    assert.deepEqual(json(doc.paths['/v1/paint']!.post), {});
    assert.match(paint.description, /no schema declared/);

    assert.equal(draw.post!.summary, 'Draw a picture', "routes.yaml's summary");
    assert.equal(draw.get!.summary, 'The same path shape with another parameter name, on another method', "the description's first sentence");
    assert.equal(doc.paths['/v1/paint']!.post!.summary, 'POST /v1/paint', 'no description: the method and path');
    assert.equal(doc.paths['/v1/act']!.post!.summary, 'Starts an act / Stops an act', 'one per route of the operation');
  });

  test('a route added to the config appears in its document, and the written copy is then stale, said in a short diff', () => {
    const dir = scratchCopy(FIXTURE);
    const file = generatedDoc('docs/generated/openapi.json');
    const written = () => readFileSync(join(dir, file.path), 'utf8');
    const before = load(dir);
    assert.match(docDrift(file.path, renderOpenApi(before), null) ?? '', /does not exist: run npm run docs/);
    assert.equal(writeGeneratedDoc(file, before, dir), true, 'written');
    assert.equal(writeGeneratedDoc(file, before, dir), false, 'already current');
    assert.equal(docDrift(file.path, renderOpenApi(before), written()), null);

    mkdirSync(join(dir, 'routes.d'));
    writeFileSync(
      join(dir, 'routes.d/extra.yaml'),
      [
        'version: 1',
        'routes:',
        '  - { id: sketch, description: A route that was not there., method: PUT, path: "/v1/sketch/{model}", kind: sync, operation: draw, model: { path: model }, models: [toy-1] }',
        '',
      ].join('\n'),
    );
    const afterAdd = load(dir);
    const doc = openApiDocument(afterAdd);
    assert.equal(doc.paths['/v1/sketch/{model}']?.put?.operationId, 'sketch');
    assert.equal(openApiDocument(before).paths['/v1/sketch/{model}'], undefined);
    const drift = docDrift(file.path, renderOpenApi(afterAdd), written()) ?? '';
    assert.match(drift, /run npm run docs$/, drift || 'no drift reported');
    assert.match(drift, /^\+ {4}"\/v1\/sketch\/\{model\}": \{$/m, 'the new path, as an added line');
    assert.ok(drift.split('\n').length <= 63, `a short diff, not the document:\n${drift}`);
    writeGeneratedDoc(file, afterAdd, dir);
    assert.equal(docDrift(file.path, renderOpenApi(afterAdd), written()), null);
  });
});

test('openapi: a task download declares Range, If-Range and If-None-Match, and its 206, 304 and 416 answers', () => {
  const op = openApiDocument(shipped).paths['/v1/videos/{task_id}/content']?.get as Operation | undefined;
  assert.ok(op, 'GET /v1/videos/{task_id}/content is in the document');
  const headers = (op.parameters ?? []).filter((p) => 'in' in p && p.in === 'header').map((p) => ('name' in p ? p.name : ''));
  for (const h of ['Range', 'If-Range', 'If-None-Match']) assert.ok(headers.includes(h), `the ${h} header is declared`);
  for (const status of ['206', '304', '416']) assert.ok(op.responses[status], `a ${status} answer is declared`);
});
