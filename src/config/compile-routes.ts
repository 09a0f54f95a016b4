import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { compilePathTemplate } from './path-template.js';
import { routeServesModel } from './lookups.js';
import { describeError } from '../schema/describe-error.js';
import { jsonErrorPosition } from '../schema/json-syntax.js';
import type { ConfigIssue } from './issues.js';
import { compileMappingAt } from './compile-mapping.js';
import { compileResources, type RawResources } from './compile-resources.js';
import type { SchemaCompiler } from './schema-compiler.js';
import type { AnswerStream, CompiledBody, CompiledRoute, CompiledRouteTask, KeySource, LinkPlaces, PathMatcher, RouteKind, TaskIdSource } from './snapshot.js';
import { parseSize } from '../schema/sizes.js';
import { placeOf, type YamlSource } from './yaml-source.js';

/** The raw shape of a route, as routes.schema.json admits it. */
interface RawRoute extends RawResources {
  id: string;
  description?: string;
  method: string;
  path: string;
  kind: RouteKind;
  operation?: string;
  auth?: ('bearer' | { header: string } | { query: string })[];
  model?: { path?: string; body?: string; value?: string };
  models?: string[];
  body?: { schema: string; max_bytes?: number | string; max_depth?: number; content_types?: string[]; max_files?: number };
  task?: {
    kind?: string;
    kinds?: string[];
    id?: { path?: string; query?: string; body?: string };
    source?: { path?: string; query?: string; body?: string };
    max_ids?: number;
    answer?: string;
  };
  example?: { params: Record<string, string>; body?: unknown };
  match_query?: Record<string, string>;
  mode?: string;
  stream?: AnswerStream;
  answer?: string;
  list?: string;
  links?: string[];
  pass_vendor_url?: boolean;
}

/** What each kind of route must and must not declare. */
const KIND_RULES: Record<RouteKind, { needs: string[]; refuses: string[]; task: string[]; taskRefuses: string[] }> = {
  sync: { needs: ['operation', 'model', 'models'], refuses: ['task', 'answer', 'list'], task: [], taskRefuses: [] },
  // Only a sync answer is streamed: a task's answer is its id at once, a download streams bytes already.
  // Only a sync answer hands out links: a task's files are served by its content route.
  'task-submit': {
    needs: ['operation', 'models', 'task'],
    refuses: ['stream', 'answer', 'list', 'links', 'pass_vendor_url'],
    task: ['kind', 'answer'],
    taskRefuses: ['kinds', 'id', 'max_ids'],
  },
  'task-query': {
    needs: ['task'],
    refuses: ['operation', 'model', 'models', 'mode', 'stream', 'answer', 'list', 'links', 'pass_vendor_url'],
    task: ['kinds', 'id', 'answer'],
    taskRefuses: ['kind', 'source'],
  },
  'task-content': {
    needs: ['task'],
    refuses: ['operation', 'model', 'models', 'body', 'mode', 'stream', 'answer', 'list', 'links', 'pass_vendor_url'],
    task: ['kinds', 'id'],
    taskRefuses: ['kind', 'answer', 'max_ids', 'source'],
  },
  // A page of the caller's tasks: `task.answer` builds each item, `list` the page around them.
  'task-list': {
    needs: ['task', 'list'],
    refuses: ['operation', 'model', 'models', 'body', 'mode', 'answer', 'stream', 'links', 'pass_vendor_url'],
    task: ['kinds', 'answer'],
    taskRefuses: ['kind', 'id', 'max_ids', 'source'],
  },
  'task-delete': {
    needs: ['task'],
    refuses: ['operation', 'model', 'models', 'body', 'mode', 'answer', 'list', 'stream', 'links', 'pass_vendor_url'],
    task: ['kinds', 'id', 'answer'],
    taskRefuses: ['kind', 'max_ids', 'source'],
  },
  // The models a token may use, read from the snapshot: `answer` builds one model, `list` the list.
  'model-list': {
    needs: ['answer', 'list'],
    refuses: ['operation', 'model', 'models', 'body', 'mode', 'task', 'stream', 'links', 'pass_vendor_url'],
    task: [],
    taskRefuses: [],
  },
  'model-get': {
    needs: ['model', 'answer'],
    refuses: ['operation', 'models', 'body', 'mode', 'task', 'list', 'stream', 'links', 'pass_vendor_url'],
    task: [],
    taskRefuses: [],
  },
  // The link is its own credential (a presigned URL's stand-in): no key is asked for.
  'link-content': {
    needs: [],
    refuses: ['operation', 'model', 'models', 'body', 'mode', 'task', 'list', 'answer', 'stream', 'auth', 'links', 'pass_vendor_url'],
    task: [],
    taskRefuses: [],
  },
};

const DEFAULT_BODY_BYTES = 1024 * 1024;
const DEFAULT_DEPTH = 32;
const DEFAULT_FILES = 10;
const DEFAULT_MAX_IDS = 100;

function pointerOf(p: string): string[] {
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Compiles routes.yaml (already schema-valid) into routes; problems are pushed onto `issues`. */
export function compileRoutes(src: YamlSource, configDir: string, schemas: SchemaCompiler, issues: ConfigIssue[]): CompiledRoute[] {
  const raw = (src.value as { routes: RawRoute[] }).routes;
  const seenIds = new Map<string, number>();
  const seenPaths = new Map<string, number>();
  // One validator per schema file: ajv refuses a second compile of a schema with the same $id.
  const validators = new Map<string, BodySchema>();
  const out: CompiledRoute[] = [];

  raw.forEach((r, i) => {
    const at = (...rest: (string | number)[]) => ['routes', i, ...rest];
    const report = (rest: (string | number)[], msg: string) => void issues.push(src.issue(at(...rest), msg));
    // The first declaration's place, as the merged list's index means nothing to the reader of a fragment.
    const first = (j: number) => `route "${raw[j]!.id}" (${placeOf(src, ['routes', j])})`;
    if (seenIds.has(r.id)) report(['id'], `route id "${r.id}" is already used by the route at ${placeOf(src, ['routes', seenIds.get(r.id)!])}`);
    else seenIds.set(r.id, i);
    const { key, cond } = pathKey(r);
    if (seenPaths.has(key)) {
      report(
        ['path'],
        `${r.method} ${r.path}${cond ? ` with ${cond}` : ''} is already declared by ${first(seenPaths.get(key)!)}; to add models to it from another file, use extend`,
      );
    } else seenPaths.set(key, i);

    let matcher: PathMatcher | undefined;
    try {
      matcher = compilePathTemplate(r.path);
    } catch (err) {
      report(['path'], (err as Error).message);
    }
    checkKindRules(r, matcher, report);
    const compiled = r.body ? bodyValidator(r.body.schema, configDir, schemas, validators, (msg) => report(['body', 'schema'], msg)) : undefined;
    const body: CompiledBody | null =
      r.body && compiled
        ? Object.freeze({
            maxBytes: r.body.max_bytes === undefined ? DEFAULT_BODY_BYTES : parseSize(r.body.max_bytes),
            maxDepth: r.body.max_depth ?? DEFAULT_DEPTH,
            contentTypes: r.body.content_types ?? ['application/json'],
            maxFiles: r.body.max_files ?? DEFAULT_FILES,
            validate: compiled.validate,
            schemaFile: r.body.schema,
            schema: compiled.schema,
          })
        : null;

    const models = modelSet(r.models ?? []);
    const { resource, references } = compileResources(r, matcher, r.body !== undefined, report, (expr, rest) =>
      compileMappingAt(src, expr, at(...rest), issues),
    );
    const task = r.task
      ? compileTask(
          r,
          matcher,
          (rest, msg) => report(['task', ...rest], msg),
          (expr) => compileMappingAt(src, expr, at('task', 'answer'), issues),
        )
      : null;
    const example = r.example && matcher ? compileExample(r, matcher, body, models, (rest, msg) => report(['example', ...rest], msg)) : null;

    // Kept even when its body or path failed, so channels are not also blamed for "unserved"
    // models; the load fails on the issue anyway.
    if (r.model?.value !== undefined && !routeServesModel({ models }, r.model.value)) {
      report(['model', 'value'], `the route's fixed model ${r.model.value} is not one of its models`);
    }
    out.push(
      Object.freeze({
        id: r.id,
        description: r.description ?? '',
        method: r.method,
        path: r.path,
        matcher: matcher ?? { template: r.path, params: [], match: () => null },
        kind: r.kind,
        operation: r.operation ?? '',
        // A link is its own credential: its route asks for no key.
        keySources: r.kind === 'link-content' ? [] : keySourcesOf(r.auth),
        model: modelSourceOf(r.model),
        models,
        body,
        task,
        example,
        matchQuery: Object.freeze({ ...(r.match_query ?? {}) }),
        stream: r.stream ?? null,
        mode: r.mode !== undefined ? compileMappingAt(src, r.mode, at('mode'), issues) : null,
        resource,
        references,
        answer: r.answer !== undefined ? compileMappingAt(src, r.answer, at('answer'), issues) : null,
        list: r.list !== undefined ? compileMappingAt(src, r.list, at('list'), issues) : null,
        links: r.kind === 'sync' ? linkPlacesOf(r) : null,
      }),
    );
  });
  return checkLinkRoute(src, out, issues);
}

/** A sync route's `links` and `pass_vendor_url`, compiled (snapshot.ts, LinkPlaces). */
function linkPlacesOf(r: RawRoute): LinkPlaces {
  if (r.pass_vendor_url) return { mode: 'pass' };
  if (r.links === undefined) return { mode: 'scan' };
  return { mode: 'at', places: r.links.map(pointerOf) };
}

/**
 * Links need one route to serve them: a second `link-content` route is an error, and so is a link
 * path without exactly one parameter (the link's secret). Without any, sync routes pass vendor URLs,
 * a warning for each that would have linked them, an error where the route asked for `links`.
 */
function checkLinkRoute(src: YamlSource, routes: CompiledRoute[], issues: ConfigIssue[]): CompiledRoute[] {
  const served = routes.map((r, i) => ({ r, i })).filter(({ r }) => r.kind === 'link-content');
  for (const { i } of served.slice(1))
    issues.push(
      src.issue(
        ['routes', i, 'kind'],
        `only one link-content route may serve links; route "${served[0]!.r.id}" (${placeOf(src, ['routes', served[0]!.i])}) already does`,
      ),
    );
  for (const { r, i } of served) {
    if (r.matcher.params.length !== 1)
      issues.push(src.issue(['routes', i, 'path'], `a link-content path names exactly one parameter, the link's secret: ${r.path}`));
  }
  if (served.length > 0) return routes;
  return routes.map((r, i) => {
    if (r.links === null || r.links.mode === 'pass') return r;
    if (r.links.mode === 'at' && r.links.places.length > 0) {
      issues.push(src.issue(['routes', i, 'links'], 'links need a link-content route to serve them; none is declared'));
    } else if (r.links.mode === 'scan') {
      issues.push(
        src.issue(
          ['routes', i],
          `no link-content route is declared: the answers of sync route "${r.id}" pass vendor URLs to clients (declare one, or say pass_vendor_url: true)`,
          'warning',
        ),
      );
    }
    return Object.freeze({ ...r, links: { mode: 'pass' } as const });
  });
}

/**
 * What two routes may not share: method, path shape and required query values. Parameter names
 * do not change which paths a template matches (/a/{x} and /a/{y} collide); routes on one path
 * may differ by the query values they require (match_query).
 */
function pathKey(r: RawRoute): { key: string; cond: string } {
  const cond = Object.entries(r.match_query ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return { key: `${r.method} ${r.path.replace(/\{[^{}]*\}/g, '{}')}${cond ? `?${cond}` : ''}`, cond };
}

/** What each kind of route must and must not declare (KIND_RULES), and where its model comes from. */
function checkKindRules(r: RawRoute, matcher: PathMatcher | undefined, report: (at: (string | number)[], msg: string) => void): void {
  const rules = KIND_RULES[r.kind];
  for (const key of rules.needs) {
    if (r[key as keyof RawRoute] === undefined) report([], `a ${r.kind} route needs ${key}`);
  }
  for (const key of rules.refuses) {
    if (r[key as keyof RawRoute] !== undefined) report([key], `a ${r.kind} route has no ${key}`);
  }
  if (r.task) {
    for (const key of rules.task) {
      if (r.task[key as keyof typeof r.task] === undefined) report(['task'], `the task block of a ${r.kind} route needs ${key}`);
    }
    for (const key of rules.taskRefuses) {
      if (r.task[key as keyof typeof r.task] !== undefined) report(['task', key], `the task block of a ${r.kind} route has no ${key}`);
    }
  }
  // A task-submit route reads the model from the request, or else from its source task (a remix).
  if (r.kind === 'task-submit' && !r.model && !r.task?.source) report([], 'a task-submit route needs model (or task.source, whose model it then uses)');
  if (r.model?.path !== undefined && matcher && !matcher.params.includes(r.model.path)) {
    report(['model', 'path'], `path parameter {${r.model.path}} does not appear in ${r.path}`);
  }
  if (r.model?.body !== undefined && !r.body) report(['model', 'body'], 'the model is read from the body but the route declares no body');
  // The model a client asks about is named in the URL, as GET /v1/models/{model} names it.
  if (r.kind === 'model-get' && r.model && r.model.path === undefined)
    report(['model'], 'a model-get route reads the model id from a path parameter: model: {path: <param>}');
}

/** A body schema file's validator and the schema it was compiled from. */
type BodySchema = Pick<CompiledBody, 'validate' | 'schema'>;

/** The validator of a body schema file, compiled once per file; undefined when it cannot be read or compiled (reported). */
function bodyValidator(
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
function modelSourceOf(m: RawRoute['model']): CompiledRoute['model'] {
  if (!m) return null;
  if (m.path !== undefined) return Object.freeze({ from: 'path' as const, name: m.path, pointer: [] });
  if (m.value !== undefined) return Object.freeze({ from: 'value' as const, name: m.value, pointer: [] });
  return Object.freeze({ from: 'body' as const, name: m.body!, pointer: pointerOf(m.body!) });
}

/**
 * Checks a route's example against the route itself (its parameters fill the template, its body
 * passes the route's schema, its model is one the route serves), so the demo never prints a
 * request that would fail.
 */
function compileExample(
  r: RawRoute,
  matcher: PathMatcher,
  body: CompiledBody | null,
  models: CompiledRoute['models'],
  fail: (path: (string | number)[], message: string) => void,
): CompiledRoute['example'] {
  const ex = r.example!;
  for (const p of matcher.params) if (!(p in ex.params)) fail(['params'], `the example has no value for {${p}}`);
  // A route told apart by its query (match_query) is only reached with it.
  const query = new URLSearchParams(Object.entries(r.match_query ?? {})).toString();
  const path = r.path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, p: string) => encodeURIComponent(ex.params[p] ?? '')) + (query ? `?${query}` : '');
  if (body && ex.body === undefined) fail([], 'the example of a route with a body needs a body');
  if (body && ex.body !== undefined && !body.validate(ex.body)) {
    const first = body.validate.errors?.[0];
    fail(['body'], `the example body does not pass the route's schema: ${first ? describeError(first, 'body').message : 'invalid'}`);
  }
  const model = r.model?.path !== undefined ? ex.params[r.model.path] : undefined;
  if (model !== undefined && !routeServesModel({ models }, model)) {
    fail(['params', r.model!.path!], `the example model ${model} is not one the route serves`);
  }
  return Object.freeze({ path, body: ex.body });
}

/** Compiles the task block of a route: where its id is, the families it serves, its answer. */
function compileTask(
  r: RawRoute,
  matcher: PathMatcher | undefined,
  fail: (path: string[], message: string) => void,
  compileAnswer: (expr: string) => CompiledRouteTask['answer'],
): CompiledRouteTask {
  const t = r.task!;
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

/** Model names as routes and families list them: exact names, and prefixes of the ones ending in `*`. */
export function modelSet(listed: readonly string[]): CompiledRoute['models'] {
  return Object.freeze({
    exact: new Set(listed.filter((m) => !m.endsWith('*'))),
    prefixes: listed.filter((m) => m.endsWith('*')).map((m) => m.slice(0, -1)),
  });
}

/** Whether a route serves some model a channel's prefix pattern could match (the two sets overlap). */
export function routeMayServePrefix(route: Pick<CompiledRoute, 'models'>, prefix: string): boolean {
  return route.models.prefixes.some((p) => p.startsWith(prefix) || prefix.startsWith(p)) || [...route.models.exact].some((m) => m.startsWith(prefix));
}

/** A route's `auth` list, compiled: header names in lower case, as Node gives them. */
function keySourcesOf(auth: RawRoute['auth']): readonly KeySource[] {
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
