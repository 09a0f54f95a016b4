import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describeError } from '../schema/describe-error.js';
import { jsonErrorPosition } from '../schema/json-syntax.js';
import { parseSize } from '../schema/sizes.js';
import type { TaskDraft } from './compile-route-draft.js';
import type { RawRoute } from './compile-route-rules.js';
import { routeServesModel } from './lookups.js';
import type { SchemaCompiler } from './schema-compiler.js';
import type { Mapping } from '../mapping/mapping.js';
import type { CompiledBody, KeySource, LinkPlaces, ModelSet, ModelSource, PathMatcher, RouteStream, TaskIdSource } from './snapshot.js';

/**
 * The parts of a route that compile on their own: its body schema, its task block, its example,
 * where it reads the model and the key, where its answers carry files.
 */

const DEFAULT_BODY_BYTES = 1024 * 1024;
const DEFAULT_DEPTH = 32;
const DEFAULT_FILES = 10;
const DEFAULT_MAX_IDS = 100;

/** A JSON pointer's segments, unescaped. */
export function pointerOf(p: string): string[] {
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A body schema file's validator and the schema it was compiled from. */
export type BodySchema = Pick<CompiledBody, 'validate' | 'schema'>;

/** A route's body rules with the defaults filled in, over its compiled schema. */
export function compileBody(raw: NonNullable<RawRoute['body']>, compiled: BodySchema): CompiledBody {
  return Object.freeze({
    maxBytes: raw.max_bytes === undefined ? DEFAULT_BODY_BYTES : parseSize(raw.max_bytes),
    maxDepth: raw.max_depth ?? DEFAULT_DEPTH,
    contentTypes: raw.content_types ?? ['application/json'],
    maxFiles: raw.max_files ?? DEFAULT_FILES,
    validate: compiled.validate,
    schemaFile: raw.schema,
    schema: compiled.schema,
  });
}

/** The validator of a body schema file, compiled once per file; undefined when it cannot be read or compiled (reported). */
export function bodyValidator(
  file: string,
  configDir: string,
  schemas: SchemaCompiler,
  validators: Map<string, BodySchema>,
  report: (msg: string) => void,
): BodySchema | undefined {
  const schemaFile = resolve(configDir, file);
  const known = validators.get(schemaFile);
  if (known) return known;
  let schema: unknown;
  let text = '';
  try {
    text = readFileSync(schemaFile, 'utf8');
    schema = JSON.parse(text);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : err instanceof SyntaxError
          ? `is not valid JSON${jsonErrorPosition(text, err)}`
          : `cannot be read: ${(err as Error).message}`;
    report(`schema file ${file} ${why}`);
    return undefined;
  }
  try {
    const validate = schemas.compile(schema as object);
    // compile() refuses anything but an object or a boolean, so the schema is one of them here.
    const compiled = { validate, schema: schema as BodySchema['schema'] };
    validators.set(schemaFile, compiled);
    return compiled;
  } catch (err) {
    report(`schema file ${file} does not compile: ${(err as Error).message}`);
    return undefined;
  }
}

/** Where a route reads its model: a path parameter, a fixed value or a body field. */
export function modelSourceOf(m: RawRoute['model']): ModelSource | null {
  if (m?.path !== undefined) return Object.freeze({ from: 'path' as const, name: m.path, pointer: [] });
  if (m?.value !== undefined) return Object.freeze({ from: 'value' as const, name: m.value, pointer: [] });
  if (m?.body !== undefined) return Object.freeze({ from: 'body' as const, name: m.body, pointer: pointerOf(m.body) });
  return null;
}

/**
 * Checks a route's example against the route itself (its parameters fill the template, its body
 * passes the route's schema, its model is one the route serves), so the demo never prints a
 * request that would fail.
 */
export function compileExample(
  r: RawRoute,
  ex: NonNullable<RawRoute['example']>,
  matcher: PathMatcher,
  body: CompiledBody | null,
  models: ModelSet,
  fail: (path: (string | number)[], message: string) => void,
): { readonly path: string; readonly body: unknown } {
  for (const p of matcher.params) if (!(p in ex.params)) fail(['params'], `the example has no value for {${p}}`);
  // A route told apart by its query (match_query) is only reached with it.
  const query = new URLSearchParams(Object.entries(r.match_query ?? {})).toString();
  const path = r.path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, p: string) => encodeURIComponent(ex.params[p] ?? '')) + (query ? `?${query}` : '');
  if (body && ex.body === undefined) fail([], 'the example of a route with a body needs a body');
  if (body && ex.body !== undefined && !body.validate(ex.body)) {
    const first = body.validate.errors?.[0];
    fail(['body'], `the example body does not pass the route's schema: ${first ? describeError(first, 'body').message : 'invalid'}`);
  }
  const param = r.model?.path;
  const model = param !== undefined ? ex.params[param] : undefined;
  if (param !== undefined && model !== undefined && !routeServesModel({ models }, model)) {
    fail(['params', param], `the example model ${model} is not one the route serves`);
  }
  return Object.freeze({ path, body: ex.body });
}

/** Compiles the task block of a route: where its id is, the families it serves, its answer. */
export function compileTask(
  r: RawRoute,
  t: NonNullable<RawRoute['task']>,
  matcher: PathMatcher | undefined,
  fail: (path: string[], message: string) => void,
  compileAnswer: (expr: string) => Mapping | null,
): TaskDraft {
  let id: TaskIdSource | null = null;
  if (t.id?.path !== undefined) {
    if (matcher && !matcher.params.includes(t.id.path)) fail(['id', 'path'], `path parameter {${t.id.path}} does not appear in ${r.path}`);
    id = { from: 'path', name: t.id.path };
  } else if (t.id?.query !== undefined) {
    id = { from: 'query', name: t.id.query };
  } else if (t.id?.body !== undefined) {
    if (r.kind !== 'task-query') fail(['id', 'body'], 'only a task-query route reads a batch of ids from the body');
    if (!r.body) fail(['id', 'body'], 'the ids are read from the body but the route declares no body');
    id = { from: 'body', pointer: pointerOf(t.id.body), name: pointerOf(t.id.body).join('.') };
  }
  if (t.max_ids !== undefined && id?.from !== 'body') fail(['max_ids'], 'max_ids applies to batch queries only (ids read from the body)');
  let source: TaskIdSource | null = null;
  if (t.source?.path !== undefined) {
    if (matcher && !matcher.params.includes(t.source.path)) fail(['source', 'path'], `path parameter {${t.source.path}} does not appear in ${r.path}`);
    source = { from: 'path', name: t.source.path };
  } else if (t.source?.query !== undefined) {
    source = { from: 'query', name: t.source.query };
  } else if (t.source?.body !== undefined) {
    if (!r.body) fail(['source', 'body'], 'the source id is read from the body but the route declares no body');
    source = { from: 'body', pointer: pointerOf(t.source.body), name: pointerOf(t.source.body).join('.') };
  }
  return Object.freeze({
    kinds: Object.freeze(t.kind !== undefined ? [t.kind] : (t.kinds ?? [])),
    id,
    source,
    maxIds: t.max_ids ?? DEFAULT_MAX_IDS,
    answer: t.answer !== undefined ? compileAnswer(t.answer) : null,
  });
}

/** A sync route's `links` and `pass_vendor_url`, compiled (snapshot-routes.ts, LinkPlaces). */
export function linkPlacesOf(r: RawRoute): LinkPlaces {
  if (r.pass_vendor_url) return { mode: 'pass' };
  if (r.links === undefined) return { mode: 'scan' };
  return { mode: 'at', places: r.links.map(pointerOf) };
}

/**
 * A route's `stream`, compiled: `sse` is the short form of a route that always streams through its
 * own operation. Asked by a body field, the field must be one the body can carry.
 */
export function compileRouteStream(
  r: RawRoute,
  mapping: (expr: string, at: (string | number)[]) => Mapping | null,
  report: (at: (string | number)[], msg: string) => void,
): RouteStream | null {
  const s = r.stream;
  if (s === undefined) return null;
  // A created resource's id is read from the whole answer, which a stream never has.
  if (r.resource?.creates !== undefined) report(['stream'], 'a route that creates a resource answers whole; it cannot stream');
  if (s === 'sse') return Object.freeze({ askedBy: null, operation: null, links: null, error: null });
  if (s.when !== undefined && !r.body) report(['stream', 'when'], 'a stream asked for by a body field needs a route body');
  if (s.operation !== undefined && s.operation === r.operation && s.when !== undefined) {
    report(['stream', 'operation'], "a stream asked for by a body field calls an operation of its own; leave stream.operation out to use the route's");
  }
  return Object.freeze({
    askedBy: s.when !== undefined ? Object.freeze(pointerOf(s.when)) : null,
    operation: s.operation ?? null,
    links: s.links !== undefined ? Object.freeze({ mode: 'at' as const, places: s.links.map(pointerOf) }) : null,
    error: s.error !== undefined ? mapping(s.error, ['stream', 'error']) : null,
  });
}

/** A route's `auth` list, compiled: header names in lower case, as Node gives them. */
export function keySourcesOf(auth: RawRoute['auth']): readonly KeySource[] {
  return Object.freeze(
    (auth ?? ['bearer']).map(
      (a): KeySource =>
        Object.freeze(
          a === 'bearer'
            ? { from: 'bearer' as const }
            : 'header' in a
              ? { from: 'header' as const, name: a.header.toLowerCase() }
              : { from: 'query' as const, name: a.query },
        ),
    ),
  );
}
