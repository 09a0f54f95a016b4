/**
 * A client can be generated from the OpenAPI document: `GET /openapi.json` of a real gateway,
 * turned into TypeScript types by openapi-typescript and compiled by the TypeScript compiler in
 * strict mode, where every JSON answer is an object type (not `unknown`) and real answers of the
 * gateway are assignable to it while a wrong one is not; and Redocly's `recommended` rules find no
 * error in the document (its warnings are listed below, each with why it stays).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import type { OpenApiDocument } from '../../src/openapi/openapi-types.js';
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
    h = await startTaskHarness({ poll: false });
    const res = await fetch(`${h.url}/openapi.json`);
    assert.equal(res.status, 200);
    text = await res.text();
    doc = JSON.parse(text) as OpenApiDocument;
  });
  after(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('by openapi-typescript compiles under strict TypeScript, every JSON answer an object type that real answers fit', async () => {
    const client = astToString(await openapiTS(JSON.parse(text) as OpenAPI3));
    writeFileSync(join(dir, 'client.ts'), client);

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
      "import type { components, operations } from './client.js';",
      'type IsAny<T> = 0 extends 1 & T ? true : false;',
      // An object type, and neither `unknown`, `any`, `never` nor an array.
      'type IsObject<T> = IsAny<T> extends true ? false : [T] extends [never] ? false : [T] extends [object] ? ([T] extends [readonly unknown[]] ? false : true) : false;',
      'type Expect<T extends true> = T;',
      "type Json<Op extends keyof operations> = operations[Op] extends { responses: { 200: { content: { 'application/json': infer T } } } } ? T : never;",
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
      writeFileSync(join(dir, 'bad.ts'), `${lines.slice(0, 5).join('\n')}\nexport type Bad = Expect<IsObject<${bad}>>;\n`);
      assert.match(compile(dir, ['client.ts', 'bad.ts']).join('\n'), /TS2344/, bad);
    }
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
