/**
 * A client can be generated from the OpenAPI document: `GET /openapi.json` of a real gateway,
 * turned into TypeScript types by openapi-typescript and compiled by the TypeScript compiler in
 * strict mode, where every JSON answer is an object type (not `unknown`) and real answers of the
 * gateway are assignable to it while a wrong one is not: every answer of the golden cases and a
 * real answer of each operation, as openapi-fetch types an operation's `data` (its 200 answer's
 * JSON); and Redocly's `recommended` rules find no error in the document (its warnings are listed
 * below, each with why it stays).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import type { CompiledRoute } from '../../src/config/snapshot.js';
import type { OpenApiDocument } from '../../src/openapi/openapi-types.js';
import { answersOf, goldenAnswers } from '../helpers/golden-answers.js';
import { operationOfRoute } from '../helpers/openapi-schemas.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

/** Warnings of the recommended rules that may stay, and why. */
const WARNINGS_KEPT: Readonly<Record<string, string>> = {
  // package.json's licence is UNLICENSED (no licence is granted): there is no licence page or
  // SPDX identifier to name. The warning goes away once the package names one (the document reads it).
  'info-license-strict': 'package.json names no licence with a URL or an SPDX identifier',
};

/** Named types a client needs: the shapes of docs/spec/interface.md and docs/client-api.md. */
const NAMED = [
  'generate-content-answer',
  'image-answer',
  'video-object',
  'video-list',
  'video-deleted',
  'model-list',
  'model-object',
  'asset-object',
  'beta-task-submitted',
  'beta-task',
  'iota-task-submitted',
  'iota-tasks',
  'gamma-task-submitted',
  'gamma-task-result',
  'lambda-task',
  'error-shape-a',
  'error-shape-b',
];

/** The start of a file that types answers as the generated client does: `Json<operation id>`, the type openapi-fetch gives `data`. */
const PRELUDE = [
  "import type { components, operations } from './client.js';",
  'type IsAny<T> = 0 extends 1 & T ? true : false;',
  // An object type, and neither `unknown`, `any`, `never` nor an array.
  'type IsObject<T> = IsAny<T> extends true ? false : [T] extends [never] ? false : [T] extends [object] ? ([T] extends [readonly unknown[]] ? false : true) : false;',
  'type Expect<T extends true> = T;',
  "type Json<Op extends keyof operations> = operations[Op] extends { responses: { 200: { content: { 'application/json': infer T } } } } ? T : never;",
];

/** Compiles `files` of `dir` in strict mode; the diagnostics, formatted. */
function compile(dir: string, files: readonly string[]): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    noUnusedLocals: false,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    lib: ['lib.es2022.d.ts'],
  };
  const program = ts.createProgram(
    files.map((f) => join(dir, f)),
    options,
  );
  const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' };
  return ts.getPreEmitDiagnostics(program).map((d) => ts.formatDiagnostic(d, host).trim());
}

describe('a client generated from GET /openapi.json', () => {
  let h: TaskHarness;
  let text: string;
  let doc: OpenApiDocument;
  const dir = mkdtempSync(join(tmpdir(), 'gw-openapi-client-'));
  before(async () => {
    h = await startTaskHarness({ finishMs: 200 });
    const res = await fetch(`${h.url}/openapi.json`);
    assert.equal(res.status, 200);
    text = await res.text();
    doc = JSON.parse(text) as OpenApiDocument;
    writeFileSync(join(dir, 'client.ts'), astToString(await openapiTS(JSON.parse(text) as OpenAPI3)));
  });
  after(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('by openapi-typescript compiles under strict TypeScript, every JSON answer an object type that real answers fit', async () => {
    // Each operation's JSON success answer, by operation id.
    const answered = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => {
        const ok = op?.responses['200'] as { content?: Record<string, unknown> } | undefined;
        return op && ok?.content?.['application/json'] ? [op.operationId] : [];
      }),
    );
    assert.ok(answered.length >= 25, `${answered.length} operations answer JSON`);
    // Real answers, typed as the generated client types them.
    const video = await h.post('/v1/video/generations', { model: 'epsilon-video-3', prompt: 'a paper boat' });
    const models = await h.get('/v1/models');
    assert.equal(video.status, 200);
    assert.equal(models.status, 200);
    const lines = [
      ...PRELUDE,
      ...answered.map((id, i) => `export type Answer${i} = Expect<IsObject<Json<${JSON.stringify(id)}>>>;`),
      ...NAMED.map((name, i) => `export type Named${i} = Expect<IsObject<components['schemas'][${JSON.stringify(name)}]>>;`),
      `export const video: Json<'video-generations'> = ${JSON.stringify(video.json)};`,
      `export const models: components['schemas']['model-list'] = ${JSON.stringify(models.json)};`,
      // A status the video object does not have: the client's type refuses it (were the type
      // `unknown`, the directive itself would be the error).
      '// @ts-expect-error',
      "export const wrong: components['schemas']['video-object'] = { ...video, status: 'done' };",
      "export const status: 'queued' | 'in_progress' | 'completed' | 'failed' = video.status;",
    ];
    writeFileSync(join(dir, 'check.ts'), `${lines.join('\n')}\n`);
    assert.deepEqual(compile(dir, ['client.ts', 'check.ts']), []);
    // The compiler does fail what it should: an answer type that is `unknown`, or no answer at all.
    for (const bad of ['unknown', "Json<'videos-content'>"]) {
      writeFileSync(join(dir, 'bad.ts'), `${PRELUDE.join('\n')}\nexport type Bad = Expect<IsObject<${bad}>>;\n`);
      assert.match(compile(dir, ['client.ts', 'bad.ts']).join('\n'), /TS2344/, bad);
    }
  });

  test('every answer of the golden cases and a real answer of each operation, a completed video among them, fit their types', async () => {
    // The type a client gives an answer of `route`: the data of its operation; on a route that
    // always streams, each frame is the answer component the route declares.
    const typeOf = (route: CompiledRoute): string => {
      if (route.kind === 'sync' && route.stream !== null && route.stream.askedBy === null) {
        assert.ok(route.response, `route ${route.id} declares no answer schema`);
        return `components['schemas'][${JSON.stringify(basename(route.response.schemaFile, '.json'))}]`;
      }
      const found = operationOfRoute(doc, route);
      assert.ok(found, `route ${route.id} is not in the document`);
      return `Json<${JSON.stringify(found.op.operationId)}>`;
    };
    const lines = [...PRELUDE];
    /** What each line of check-answers.ts assigns, by line number (from 1). */
    const source = new Map<number, string>();
    const assign = (type: string, value: unknown, where: string) => {
      lines.push(`export const a${source.size}: ${type} = ${JSON.stringify(value)};`);
      source.set(lines.length, where);
    };
    const typed = (route: CompiledRoute, body: unknown, where: string) => {
      for (const answer of answersOf(route, body) ?? []) assign(typeOf(route), answer, where);
    };

    const golden = goldenAnswers(h.snapshot);
    for (const { route, body, where } of golden) typed(route, body, where);
    assert.ok(source.size >= 500, `${source.size} golden answers`);

    // A real gateway: each route's example, then the video task followed to its end through each
    // query route, the list, the models, a deletion, and the music task's query.
    const send = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(h.url + path, {
        method,
        headers: { authorization: `Bearer ${h.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const got = await res.text();
      assert.equal(res.status, 200, `${method} ${path}: ${got.slice(0, 300)}`);
      if (!res.headers.get('content-type')?.startsWith('text/event-stream')) return JSON.parse(got) as Record<string, unknown>;
      const frames = got.split('\r\n\r\n').filter((f) => f !== '');
      return frames.map((f) => JSON.parse(f.replace(/^data: /, ''))) as unknown as Record<string, unknown>;
    };
    const route = (id: string) => {
      const r = h.snapshot.routes.find((x) => x.id === id);
      assert.ok(r, id);
      return r;
    };
    const examples = new Map<string, Record<string, unknown>>();
    for (const r of h.snapshot.routes) {
      if (!r.example) continue;
      const answer = await send(r.method, r.example.path, r.example.body);
      typed(r, answer, `example of ${r.id}`);
      examples.set(r.id, answer);
    }
    const video = String(examples.get('video-generations')?.id);
    await h.waitFor(video, (t) => t.status === 'completed');
    const music = String(examples.get('iota-submit-music')?.data);
    await h.waitFor(music, (t) => t.data?.status === 'SUCCESS', { path: (id) => `/iota/fetch/${id}` });
    const done = await send('GET', `/v1/videos/${video}`);
    assert.equal(done.status, 'completed');
    for (const [id, method, path] of [
      ['videos-query', 'GET', `/v1/videos/${video}`],
      ['video-generations-query', 'GET', `/v1/video/generations/${video}`],
      ['video-query', 'GET', `/v1/video/query?id=${video}`],
      ['videos-list', 'GET', '/v1/videos?limit=2'],
      ['models-list', 'GET', '/v1/models'],
      ['models-get', 'GET', '/v1/models/epsilon-video-3'],
      ['iota-fetch', 'GET', `/iota/fetch/${music}`],
      ['videos-delete', 'DELETE', `/v1/videos/${video}`],
    ] as const) {
      typed(route(id), await send(method, path), `${method} ${path}`);
    }

    // Fields the gateway answers null that the formats it speaks give a value (OpenAI's video object
    // has expires_at, Unix seconds; the gamma protocol has binary_data_base64, a list of base64
    // strings): a client's type holds both, so code written for the format compiles against it.
    assign("components['schemas']['video-object']", { ...done, expires_at: Number(done.completed_at) + 86_400 }, 'a completed video with expires_at set');
    const gamma = golden.find((g) => g.route.id.startsWith('gamma') && (g.body as { data?: { status?: string } }).data?.status === 'done');
    assert.ok(gamma, 'a golden gamma result');
    const result = gamma.body as { data: Record<string, unknown> };
    assign(
      "components['schemas']['gamma-task-result']",
      { ...result, data: { ...result.data, binary_data_base64: ['iVBORw0KGgo='] } },
      'a gamma result with binary_data_base64 set',
    );

    writeFileSync(join(dir, 'check-answers.ts'), `${lines.join('\n')}\n`);
    const problems = compile(dir, ['client.ts', 'check-answers.ts']).map((d) => {
      const line = Number(/^check-answers\.ts\((\d+),/.exec(d)?.[1]);
      return `${source.get(line) ?? ''}: ${d.slice(0, 1500)}`;
    });
    assert.deepEqual(problems, []);
  });

  test("passes Redocly's recommended rules with no error; the warnings left are the ones listed, each with why", async (t) => {
    const config = await createConfig({ extends: ['recommended'] });
    const lint = (source: string) => lintFromString({ source, absoluteRef: join(dir, 'openapi.json'), config });
    const problems: NormalizedProblem[] = await lint(text);
    const show = (p: NormalizedProblem) => `${p.severity} ${p.ruleId}: ${p.message} (${p.location[0]?.pointer ?? ''})`;
    const errors = problems.filter((p) => p.severity === 'error');
    assert.deepEqual(errors.map(show), []);
    const warnings = problems.filter((p) => p.severity === 'warn');
    for (const w of warnings) {
      assert.ok(WARNINGS_KEPT[w.ruleId], `a warning no one answered for: ${show(w)}`);
      t.diagnostic(`${show(w)}: kept, ${WARNINGS_KEPT[w.ruleId]}`);
    }
    // The rules do run: an operation without its summary is an error.
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, { summary?: string }>> };
    delete broken.paths['/v1/models']!.get!.summary;
    const found = (await lint(JSON.stringify(broken))).filter((p) => p.severity === 'error').map((p) => p.ruleId);
    assert.deepEqual(found, ['operation-summary']);
  });
});
